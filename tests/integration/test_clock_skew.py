"""Clock skew between nodes is warned about: a node whose wall clock runs 3 s ahead (shifted
with libfaketime, monotonic time left alone) is reported by its peers, and it reports them.
Skipped without libfaketime (Debian's package `faketime`; .ci/run installs it)."""
import glob
import os
import time

import pytest

from cluster import LocalCluster

FAKETIME = next(iter(glob.glob("/usr/lib/*/faketime/libfaketime.so.1")), None)

pytestmark = pytest.mark.skipif(FAKETIME is None, reason="libfaketime is not installed")


def start_with_clock_ahead(node, seconds):
    shifted = {"LD_PRELOAD": FAKETIME, "FAKETIME": f"+{seconds}s",
               "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
    saved = {k: os.environ.get(k) for k in shifted}
    os.environ.update(shifted)
    try:
        node.start()
    finally:
        for key, value in saved.items():
            if value is None:
                del os.environ[key]
            else:
                os.environ[key] = value


def warnings_about(node, address):
    return [line for line in node.log().splitlines()
            if f"the clock of {address} is" in line]


def test_a_node_whose_clock_is_ahead_is_warned_about_on_both_sides():
    with LocalCluster(nodes=2) as cluster:
        node1, node2 = cluster.nodes
        node2.stop()
        start_with_clock_ahead(node2, 3)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (
                warnings_about(node1, node2.address) and warnings_about(node2, node1.address)):
            time.sleep(0.5)
        seen_by_1 = warnings_about(node1, node2.address)
        seen_by_2 = warnings_about(node2, node1.address)
        assert seen_by_1 and seen_by_2, node1.log()[-2000:]
        ahead = int(seen_by_1[-1].split(" is ")[1].split(" ms")[0])
        behind = int(seen_by_2[-1].split(" is ")[1].split(" ms")[0])
        assert 2500 <= ahead <= 3500 and -3500 <= behind <= -2500, (seen_by_1, seen_by_2)
        assert "NTP" in seen_by_1[-1]
