"""`helenus nodetool` against a live node: the figures it prints match what was done, the
Prometheus metrics parse and agree, and drain + stopdaemon end the process cleanly.
Layouts are those of Cassandra 5.0.4's nodetool (checked line by line in the Rust unit tests)."""
import re
import subprocess
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import connect
from helenus_node import BIN, Node

ROWS = 50


def nodetool(node, *args):
    return subprocess.run(
        [BIN, "nodetool", "-p", str(node.admin_port), *args],
        capture_output=True, text=True, timeout=60,
    )


def ok(node, *args):
    result = nodetool(node, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def loaded():
    node = Node().start()
    cluster, session = connect(node)
    session.execute("CREATE KEYSPACE nt WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE nt.kv (k int PRIMARY KEY, v text)")
    insert = session.prepare("INSERT INTO nt.kv (k, v) VALUES (?, ?)")
    for i in range(ROWS):
        session.execute(insert, (i, f"value {i}"))
    for i in range(5):
        assert session.execute("SELECT v FROM nt.kv WHERE k = %s", (i,)).one().v == f"value {i}"
    cluster.shutdown()
    yield node
    node.cleanup()


def table_block(text, table):
    lines = text.split("\n")
    start = lines.index(f"\t\tTable: {table}")
    block = {}
    for line in lines[start + 1:]:
        if not line.startswith("\t\t"):
            break
        key, value = line.strip().split(": ", 1)
        block[key] = value
    return block


def test_flush_then_tablestats(loaded):
    assert ok(loaded, "flush", "nt") == ""
    stats = ok(loaded, "tablestats", "nt.kv")
    assert stats.startswith("Total number of tables: 1\n----------------\nKeyspace: nt\n")
    kv = table_block(stats, "kv")
    assert int(kv["SSTable count"]) >= 1
    assert int(kv["Local write count"]) == ROWS
    assert int(kv["Local read count"]) == 5
    assert int(kv["Number of partitions (estimate)"]) == ROWS
    assert ok(loaded, "cfstats", "nt") == ok(loaded, "tablestats", "nt")


def test_status_info_version(loaded):
    status = ok(loaded, "status")
    assert status.startswith("Datacenter: datacenter1\n=======================\nStatus=Up/Down\n")
    assert "\nUN  127.0.0.1  " in status
    assert "Owns (effective)" in status and "100.0%" in status
    assert ok(loaded, "version") == "ReleaseVersion: 5.0.4\n"
    info = ok(loaded, "info")
    assert "Native Transport active: true\n" in info
    assert "Token                  : (invoke with -T/--tokens to see all 16 tokens)\n" in info
    assert ok(loaded, "ring").count("127.0.0.1       rack1       Up     Normal") == 16
    assert "\tnt -> Replication class: SimpleStrategy {replication_factor=1}\n" in ok(loaded, "describecluster")


def test_compaction_commands(loaded):
    stats = ok(loaded, "compactionstats")
    assert stats.startswith("concurrent compactors            2")
    assert "\npending tasks " in stats
    ok(loaded, "setcompactionthroughput", "16")
    assert ok(loaded, "getcompactionthroughput") == "Current compaction throughput: 16 MB/s\n"
    assert "compaction throughput (MiB/s)    16.0" in ok(loaded, "compactionstats")
    ok(loaded, "setconcurrentcompactors", "3")
    assert ok(loaded, "getconcurrentcompactors") == "Current concurrent compactors in the system is: \n3\n"
    ok(loaded, "flush", "nt", "kv")
    ok(loaded, "compact", "nt", "kv")
    history = ok(loaded, "compactionhistory")
    assert history.startswith("Compaction History: \nid ")
    assert re.search(r"^\S+ +nt +kv +\S+ +\d+ +\d+ ", history, re.M), history
    ok(loaded, "disableautocompaction", "nt")
    ok(loaded, "enableautocompaction", "nt", "kv")


def test_timeouts(loaded):
    assert ok(loaded, "gettimeout", "write") == "Current timeout for type write: 2000 ms\n"
    ok(loaded, "setwriterequesttimeout", "8000")
    assert ok(loaded, "gettimeout", "write") == "Current timeout for type write: 8000 ms\n"
    assert ok(loaded, "getreadrequesttimeout") == "Current timeout for type read: 5000 ms\n"
    ok(loaded, "settimeout", "range", "12000")
    assert ok(loaded, "getrangerequesttimeout") == "Current timeout for type range: 12000 ms\n"


def test_pools_and_gc(loaded):
    tp = ok(loaded, "tpstats")
    assert tp.startswith("Pool Name ")
    assert "Native-Transport-Requests" in tp
    gc = ok(loaded, "gcstats")
    assert gc.startswith("       Interval (ms) Max GC Elapsed (ms)")


def test_bad_commands_exit_non_zero(loaded):
    unknown = nodetool(loaded, "bogus")
    assert unknown.returncode == 1
    assert unknown.stderr == "nodetool: Found unexpected parameters: [bogus]\nSee 'nodetool help' or 'nodetool help <command>'.\n"
    assert nodetool(loaded, "setcompactionthroughput", "abc").returncode == 1
    assert nodetool(loaded, "flush", "nosuch").returncode == 1
    assert nodetool(loaded, "tablestats", "nosuch").stderr.startswith("nodetool: Unknown keyspace: nosuch\n")
    assert nodetool(loaded, "gettimeout", "bogus").returncode == 1
    assert ok(loaded, "help").startswith("usage: nodetool ")


def test_metrics_parse_and_agree(loaded):
    with urllib.request.urlopen(f"http://127.0.0.1:{loaded.admin_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}

    def value(family, suffix, **labels):
        for s in families[family].samples:
            if s.name == family + suffix and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
        raise AssertionError(f"no {family}{suffix} {labels}")

    kv = {"keyspace": "nt", "table": "kv"}
    assert value("helenus_table_writes", "_total", **kv) == ROWS
    assert value("helenus_table_reads", "_total", **kv) == 5
    assert value("helenus_table_live_sstables", "", **kv) >= 1
    assert value("helenus_table_live_disk_bytes", "", **kv) > 0
    assert value("helenus_table_flushes", "_total", **kv) >= 1
    assert value("helenus_client_request_latency_seconds", "_count", request="write") >= ROWS
    assert value("helenus_compactions_completed", "_total") >= 1
    assert value("helenus_commitlog_bytes", "") > 0
    assert value("helenus_native_requests", "_total") > ROWS


def test_snapshot_list_and_clear(loaded):
    out = ok(loaded, "snapshot", "-t", "nt_tag", "nt")
    assert out == ("Requested creating snapshot(s) for [nt] with snapshot name [nt_tag] and options "
                   "{skipFlush=false}\nSnapshot directory: nt_tag\n")
    listed = ok(loaded, "listsnapshots")
    assert listed.startswith("Snapshot Details: \nSnapshot name ")
    rows = [line.split() for line in listed.split("\n")[2:] if line.strip()]
    assert ["nt_tag", "nt", "kv"] in [row[:3] for row in rows]
    assert "Total TrueDiskSpaceUsed: " in listed
    assert nodetool(loaded, "snapshot", "-t", "nt_tag", "nt").returncode != 0
    assert ok(loaded, "clearsnapshot", "-t", "nt_tag") == (
        "Requested clearing snapshot(s) for [all keyspaces] with snapshot name [nt_tag]\n")
    assert "nt_tag" not in ok(loaded, "listsnapshots")
    assert nodetool(loaded, "clearsnapshot").returncode == 1


def test_tablehistograms(loaded):
    ok(loaded, "flush", "nt", "kv")
    cluster, session = connect(loaded)
    for i in range(5):
        assert session.execute("SELECT v FROM nt.kv WHERE k = %s", (i,)).one().v == f"value {i}"
    cluster.shutdown()
    text = ok(loaded, "tablehistograms", "nt", "kv")
    lines = text.split("\n")
    assert lines[0] == "nt/kv histograms"
    assert lines[1] == ("Percentile      Read Latency     Write Latency          SSTables"
                        "    Partition Size        Cell Count")
    rows = {line.split()[0]: line.split() for line in lines[3:] if line.strip()}
    assert set(rows) == {"50%", "75%", "95%", "98%", "99%", "Min", "Max"}
    assert float(rows["Max"][3]) >= 1.0
    assert float(rows["Max"][1]) > 0.0 and float(rows["Max"][2]) > 0.0
    assert ok(loaded, "tablehistograms", "nt.kv") == text
    assert nodetool(loaded, "tablehistograms", "nt", "nosuch").returncode != 0


def test_drain_then_stopdaemon(loaded):
    assert ok(loaded, "drain") == ""
    info = ok(loaded, "info")
    assert "Native Transport active: false\n" in info
    assert ok(loaded, "stopdaemon") == ""
    assert loaded.proc.wait(timeout=30) == 0
    loaded.proc = None
