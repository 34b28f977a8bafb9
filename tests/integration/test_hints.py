"""Hinted handoff on a 3-node `helenus cluster`: nodetool's hints commands (output as Cassandra
5.0.4's statushandoff, listpendinghints, ...), the hint metrics, and writes missed by a node
that was down reaching it once it is back (delivered hints: the node alone returns them)."""
import subprocess
import time
import urllib.request

import pytest
from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement

from cluster import BIN
from helenus_node import Node

ADMIN_PORT = 7199
NOT_ALONE = "this node runs alone (no seed_provider): it keeps no hints"


def test_statushandoff_follows_the_switches(trio):
    # Cassandra 5.0.4's wording (dtest hintedhandoff_test.test_nodetool)
    node = trio.node(1)
    assert node.nodetool("statushandoff") == "Hinted handoff is running\n"
    assert node.nodetool("disablehandoff") == ""
    assert node.nodetool("statushandoff") == "Hinted handoff is not running\n"
    assert node.nodetool("enablehandoff") == ""
    node.nodetool("disablehintsfordc", "dc1")
    assert node.nodetool("statushandoff") == "Hinted handoff is running\nData center dc1 is disabled\n"
    node.nodetool("enablehintsfordc", "dc1")
    assert node.nodetool("statushandoff") == "Hinted handoff is running\n"
    assert node.nodetool("pausehandoff") == ""
    assert node.nodetool("resumehandoff") == ""
    missing = node.run_nodetool("disablehintsfordc")
    assert missing.returncode == 1
    assert "disablehintsfordc requires exactly one data center" in missing.stderr


def test_no_pending_hints_and_truncatehints(trio):
    node1, node2, _ = trio.nodes
    assert node1.nodetool("listpendinghints") == "This node does not have any pending hints\n"
    assert node1.nodetool("truncatehints") == ""
    assert node1.nodetool("truncatehints", node2.address) == ""
    unknown = node1.run_nodetool("truncatehints", "127.0.0.250")
    assert unknown.returncode == 2
    assert "Can't delete hints for unknown address /127.0.0.250:7000" in unknown.stderr


def test_hint_metrics_and_pool(trio):
    node = trio.node(2)
    assert "HintsDispatcher" in node.nodetool("tpstats")
    url = f"http://{node.address}:{ADMIN_PORT}/metrics"
    with urllib.request.urlopen(url, timeout=10) as reply:
        text = reply.read().decode()
    for family in ("helenus_hints_created_total", "helenus_hints_succeeded_total",
                   "helenus_hints_failed_total", "helenus_hints_timed_out_total",
                   "helenus_hints_in_progress"):
        assert f"\n{family} " in text, family


def test_a_node_running_alone_says_it_keeps_no_hints():
    node = Node().start()
    try:
        for command in ("statushandoff", "listpendinghints", "pausehandoff", "truncatehints"):
            result = subprocess.run([BIN, "nodetool", "-p", str(node.admin_port), command],
                                    capture_output=True, text=True, timeout=60)
            assert result.returncode == 2, command
            assert result.stderr == f"error: {NOT_ALONE}\n"
    finally:
        node.cleanup()


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"{what} within {timeout} s")


def test_writes_at_one_while_a_node_is_down_are_readable_from_it_alone_after_it_returns(trio):
    node1, node2, node3 = trio.nodes
    session = node1.session()
    session.execute("CREATE KEYSPACE hh WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    session.execute("CREATE TABLE hh.kv (k int PRIMARY KEY, v text)")
    node3.kill()
    node1.await_status(node3.address, "DN")
    insert = SimpleStatement("INSERT INTO hh.kv (k, v) VALUES (%s, %s)",
                             consistency_level=ConsistencyLevel.ONE)
    for k in range(50):
        session.execute(insert, (k, f"v{k}"))
    assert "This node does not have any pending hints" not in node1.nodetool("listpendinghints")
    node3.start()
    wait_for(lambda: node1.nodetool("listpendinghints") ==
             "This node does not have any pending hints\n", 60, "hints delivered")
    node1.kill()
    node2.kill()
    alone = node3.session()
    select = SimpleStatement("SELECT k, v FROM hh.kv", consistency_level=ConsistencyLevel.ONE)
    rows = {row.k: row.v for row in alone.execute(select)}
    assert rows == {k: f"v{k}" for k in range(50)}
