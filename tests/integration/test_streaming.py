"""Streaming on a 3-node `helenus cluster`: `nodetool rebuild` brings back the data of a node
that lost its data directory (it then answers every row alone), `netstats` and the admin API
show the sessions, and `get/setstreamthroughput` read and change the throttles."""
import json
import os
import shutil
import urllib.request

import pytest
from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement


ADMIN_PORT = 7199
ROWS = 2000


def api(node, path):
    with urllib.request.urlopen(f"http://{node.address}:{ADMIN_PORT}{path}", timeout=10) as r:
        return json.loads(r.read())


def sstables(node, keyspace):
    root = os.path.join(node.dir, "data", keyspace)
    found = []
    for base, _, files in os.walk(root):
        found += [f for f in files if f.endswith("-Data.db") and "snapshots" not in base]
    return found


def test_stream_throughput_settings(trio):
    node = trio.node(1)
    # Cassandra 5.0.4's defaults, 24 MiB/s for both, and its answers (refcass).
    odd = node.run_nodetool("getstreamthroughput")
    assert odd.returncode == 2
    assert odd.stderr == "error: Use the -d flag to quiet this error and get the exact " \
                         "throughput in megabits/s\n"
    assert node.nodetool("getstreamthroughput", "-d") == "Current stream throughput: 201.326592 Mb/s\n"
    assert node.nodetool("getstreamthroughput", "-e") == \
        "Current entire SSTable stream throughput: 24.0 MiB/s\n"
    assert node.nodetool("setstreamthroughput", "200") == ""
    assert node.nodetool("getstreamthroughput") == "Current stream throughput: 200 Mb/s\n"
    assert node.nodetool("getstreamthroughput", "-m") == \
        "Current stream throughput: 23.84185791015625 MiB/s\n"
    assert node.nodetool("setstreamthroughput", "-m", "50") == ""
    assert node.nodetool("getstreamthroughput", "-m") == "Current stream throughput: 50.0 MiB/s\n"
    assert node.nodetool("setstreamthroughput", "-e", "0") == ""
    assert node.nodetool("getstreamthroughput", "-e") == \
        "Current entire SSTable stream throughput: unlimited\n"
    both = node.run_nodetool("setstreamthroughput", "-e", "-m", "5")
    assert both.returncode == 1
    assert "You cannot use -e and -m at the same time" in both.stderr
    assert node.nodetool("setstreamthroughput", "-e", "24") == ""
    assert node.nodetool("setstreamthroughput", "-m", "24") == ""
    settings = node.session().execute(
        "SELECT name, value FROM system_views.settings WHERE name IN "
        "('stream_throughput_outbound', 'entire_sstable_stream_throughput_outbound')")
    assert {r.name: r.value for r in settings} == {
        "stream_throughput_outbound": "24MiB/s",
        "entire_sstable_stream_throughput_outbound": "24MiB/s"}


def test_rebuild_restores_a_node_that_lost_its_data(trio):
    node1, node2, node3 = trio.nodes
    session = node1.session()
    session.execute("CREATE KEYSPACE rb WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    session.execute("CREATE TABLE rb.kv (k int, c int, v text, PRIMARY KEY (k, c))")
    insert = session.prepare("INSERT INTO rb.kv (k, c, v) VALUES (?, ?, ?)")
    insert.consistency_level = ConsistencyLevel.ALL
    for k in range(ROWS):
        session.execute(insert, (k // 4, k % 4, f"value-{k}" * 10))
    node1.nodetool("flush", "rb")

    node3.stop()
    shutil.rmtree(os.path.join(node3.dir, "data", "rb"))
    node3.start()
    for node in (node1, node2, node3):
        for other in trio.nodes:
            node.await_status(other.address, "UN", timeout=30)
    assert sstables(node3, "rb") == []

    assert node3.nodetool("rebuild", timeout=300) == ""
    assert sstables(node3, "rb"), "nothing streamed"
    streams = api(node3, "/v1/streams")
    received = [s for s in streams["sessions"] if s["description"] == "Rebuild"]
    assert {s["peer"].split(":")[0] for s in received} <= {node1.address, node2.address}
    for s in received:
        assert (s["direction"], s["state"]) == ("Receiving", "complete"), s
        assert s["bytes_done"] == s["bytes_total"] > 0 and s["files_done"] == s["files_total"]
    sent = sum(len([s for s in api(n, "/v1/streams")["sessions"]
                    if s["direction"] == "Sending" and s["state"] == "complete"])
               for n in (node1, node2))
    assert sent == len(received)
    views = node3.session().execute(
        "SELECT operation, status, follower, peers, bytes_received, bytes_to_receive, "
        "bytes_sent, progress_percentage, status_success_timestamp FROM system_views.streaming")
    views = [v for v in views if v.operation == "Rebuild"]
    assert len(views) == len(received)
    for v in views:
        assert (v.status, v.follower, v.bytes_sent) == ("success", False, 0)
        assert v.bytes_received == v.bytes_to_receive > 0 and v.progress_percentage == 100.0
        assert v.peers[0].split(":")[0] in (node1.address, node2.address)
        assert v.status_success_timestamp is not None
    text = node3.nodetool("netstats")
    assert text.startswith("Mode: NORMAL\nNot sending any streams.\nRead Repair Statistics:\n")
    assert "Large messages" in text

    node1.stop()
    node2.stop()
    alone = node3.session()
    select = SimpleStatement("SELECT k, c, v FROM rb.kv", consistency_level=ConsistencyLevel.ONE,
                             fetch_size=500)
    rows = {(r.k, r.c): r.v for r in alone.execute(select)}
    assert rows == {(k // 4, k % 4): f"value-{k}" * 10 for k in range(ROWS)}
    node1.start()
    node2.start()


def test_rebuild_refuses_an_unknown_source_dc(trio):
    result = trio.node(3).run_nodetool("rebuild", "nodc")
    assert result.returncode == 2
    assert "Provided datacenter 'nodc' is not a valid datacenter, available datacenters " \
           "are: datacenter1" in result.stderr
