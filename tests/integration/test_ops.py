"""Operator figures against a live node: tablestats' Bloom filter, per-slice and partition-size
lines, tablehistograms' partition sizes, proxyhistograms, and the per-read histograms in
/metrics, each checked against what the test did. Layouts are Cassandra 5.0.4's (checked line
by line in the Rust unit tests)."""
import os
import re
import time
import urllib.request

import pytest
from cassandra import ConsistencyLevel, ReadTimeout
from prometheus_client.parser import text_string_to_metric_families

from conftest import connect
from helenus_node import Node
from test_nodetool import nodetool, ok, table_block

ROWS = 40
DELETED = 30


@pytest.fixture(scope="module")
def churned():
    """`ops.kv`: ROWS partitions, flushed, read back (plus keys that are not there);
    `ops.wide`: one partition whose DELETED rows are deleted in a second SSTable, read once."""
    node = Node().start()
    cluster, session = connect(node)
    session.execute("CREATE KEYSPACE ops WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE ops.kv (k int PRIMARY KEY, v text)")
    session.execute("CREATE TABLE ops.wide (p int, c int, v text, PRIMARY KEY (p, c))")
    insert = session.prepare("INSERT INTO ops.kv (k, v) VALUES (?, ?)")
    for i in range(ROWS):
        session.execute(insert, (i, f"value {i}"))
    for c in range(ROWS):
        session.execute("INSERT INTO ops.wide (p, c, v) VALUES (1, %s, 'x')", (c,))
    ok(node, "flush", "ops")
    for c in range(DELETED):
        session.execute("DELETE FROM ops.wide WHERE p = 1 AND c = %s", (c,))
    ok(node, "flush", "ops", "wide")
    for i in range(ROWS + 20):
        session.execute("SELECT v FROM ops.kv WHERE k = %s", (i,))
    rows = list(session.execute("SELECT c FROM ops.wide WHERE p = 1"))
    assert len(rows) == ROWS - DELETED
    session.execute("SELECT * FROM ops.kv")
    cluster.shutdown()
    yield node
    node.cleanup()


def test_tablestats_bloom_filter_and_partition_lines(churned):
    kv = table_block(ok(churned, "tablestats", "ops.kv"), "kv")
    assert int(kv["Number of partitions (estimate)"]) == ROWS
    assert int(kv["Local read count"]) == ROWS + 20
    assert int(kv["Bloom filter space used"]) > 0
    assert kv["Bloom filter off heap memory used"] == kv["Bloom filter space used"]
    false_positives = int(kv["Bloom filter false positives"])
    assert 0 <= false_positives <= 20
    assert re.fullmatch(r"\d\.\d{5}", kv["Bloom filter false ratio"])
    assert float(kv["Bloom filter false ratio"]) == pytest.approx(
        false_positives / (ROWS + false_positives), abs=1e-5)
    low, high = int(kv["Compacted partition minimum bytes"]), int(kv["Compacted partition maximum bytes"])
    assert 0 < low <= high
    assert int(kv["Maximum live cells per slice (last five minutes)"]) == ROWS
    assert re.fullmatch(r"\d\.\d{5}", kv["Droppable tombstone ratio"])
    assert "SSTables in each level" not in kv


def test_tablestats_and_histograms_show_tombstones(churned):
    wide = table_block(ok(churned, "tablestats", "ops.wide"), "wide")
    assert int(wide["SSTable count"]) == 2
    assert int(wide["Maximum tombstones per slice (last five minutes)"]) == DELETED
    assert float(wide["Average tombstones per slice (last five minutes)"]) == DELETED
    assert int(wide["Maximum live cells per slice (last five minutes)"]) == ROWS - DELETED
    text = ok(churned, "tablehistograms", "ops", "wide")
    rows = {line.split()[0]: line.split() for line in text.split("\n")[3:] if line.strip()}
    assert float(rows["Max"][3]) == 2.0, text
    assert int(rows["Min"][4]) > 0 and int(rows["Max"][4]) >= int(rows["Min"][4]), text
    assert "NaN" not in rows["Max"][4]
    assert ROWS <= int(rows["Max"][5]) < ROWS * 1.2, "the first SSTable holds ROWS cells"


def test_proxyhistograms(churned):
    text = ok(churned, "proxyhistograms")
    lines = text.split("\n")
    assert lines[0] == "proxy histograms"
    assert lines[1].split() == ["Percentile", "Read", "Latency", "Write", "Latency", "Range", "Latency",
                                "CAS", "Read", "Latency", "CAS", "Write", "Latency", "View", "Write", "Latency"]
    rows = {line.split()[0]: [float(v) for v in line.split()[1:]] for line in lines[3:] if line.strip()}
    assert set(rows) == {"50%", "75%", "95%", "98%", "99%", "Min", "Max"}
    read, write, range_, cas_read, cas_write, view = zip(*rows.values())
    assert max(read) > 0 and max(write) > 0 and max(range_) > 0
    assert max(cas_read) == max(cas_write) == max(view) == 0
    assert nodetool(churned, "proxyhistograms", "extra").returncode == 1


def test_metrics_carry_per_read_histograms(churned):
    with urllib.request.urlopen(f"http://127.0.0.1:{churned.admin_port}/metrics", timeout=10) as r:
        text = r.read().decode()
    samples = [s for f in text_string_to_metric_families(text) for s in f.samples]

    def value(name, **labels):
        found = [s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
        assert len(found) == 1, (name, labels, found)
        return found[0]

    wide = {"keyspace": "ops", "table": "wide"}
    assert value("helenus_table_tombstones_per_read", quantile="1", **wide) == DELETED
    assert value("helenus_table_sstables_per_read", quantile="1", **wide) == 2
    assert value("helenus_table_reads_total", keyspace="ops", table="kv") == ROWS + 20
    assert value("helenus_table_writes_total", keyspace="ops", table="kv") == ROWS
    assert value("helenus_pool_pending", pool="CompactionExecutor") >= 0
    assert value("helenus_pool_active", pool="Native-Transport-Requests") >= 0
    assert value("helenus_pool_completed_total", pool="MemtableFlushWriter") >= 3
    assert value("helenus_pool_completed_total", pool="ReadStage") >= ROWS + 20


LOG_LINE = re.compile(r"^(TRACE|DEBUG|INFO |WARN |ERROR) \[[^\]]+\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \S+:\d+ - ")


def system_log(node):
    with open(os.path.join(node.data_dir, "logs", "system.log")) as f:
        return f.read()


def test_system_log_levels_change_at_run_time(churned):
    cluster, session = connect(churned)
    try:
        session.execute("CREATE TABLE ops.quiet (k int PRIMARY KEY)")
        assert ok(churned, "setlogginglevel", "storage", "debug") == ""
        assert ok(churned, "getlogginglevels") == (
            "\nLogger Name                                        Log Level\n"
            "ROOT                                                    INFO\n"
            "storage                                                DEBUG\n")
        session.execute("CREATE TABLE ops.loud (k int PRIMARY KEY)")
        assert ok(churned, "setlogginglevel") == ""
        assert ok(churned, "getlogginglevels").count("\n") == 3
        session.execute("CREATE TABLE ops.quiet_again (k int PRIMARY KEY)")
    finally:
        cluster.shutdown()
    text = system_log(churned)
    lines = text.splitlines()
    assert lines and all(LOG_LINE.match(line) for line in lines), lines[:3]
    assert "registering table ops.loud" in text
    assert "registering table ops.quiet " not in text and "ops.quiet_again" not in text
    assert "set log level to DEBUG for classes under 'storage'" in text
    assert nodetool(churned, "setlogginglevel", "bad name!", "info").returncode != 0
    assert nodetool(churned, "setlogginglevel", "a", "b", "c").returncode == 1


WIDE_ROWS = 3000


@pytest.fixture(scope="module")
def slow_node():
    """A node logging reads slower than 1 ms, with one partition of WIDE_ROWS rows."""
    node = Node(extra_yaml="slow_query_log_timeout: 1ms\n").start()
    cluster, session = connect(node)
    session.execute("CREATE KEYSPACE slow WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE slow.wide (p int, c int, v text, PRIMARY KEY (p, c))")
    insert = session.prepare("INSERT INTO slow.wide (p, c, v) VALUES (1, ?, 'some text to read')")
    for c in range(WIDE_ROWS):
        session.execute(insert, (c,))
    ok(node, "flush", "slow")
    yield node, session
    cluster.shutdown()
    node.cleanup()


def test_slow_reads_reach_the_log(slow_node):
    node, session = slow_node
    assert len(list(session.execute("SELECT * FROM slow.wide WHERE p = 1"))) == WIDE_ROWS
    line = re.compile(r"<SELECT \* FROM slow\.wide WHERE key = 0x00000001>, "
                      r"(time \d+ msec|was slow \d+ times: avg/min/max \d+/\d+/\d+ msec)"
                      r" - slow timeout 1 msec$", re.M)
    deadline = time.time() + 10
    while time.time() < deadline and not line.search(system_log(node)):
        time.sleep(0.2)
    text = system_log(node)
    found = line.search(text)
    assert found, text[-2000:]
    header = text[:found.start()].rstrip("\n").rsplit("\n", 1)[-1]
    assert re.search(r" - \d+ operations were slow in the last \d+ msecs:$", header) or \
        header.startswith("<"), header


def test_reads_past_the_timeout_fail_with_read_timeout(slow_node):
    node, session = slow_node
    query = "SELECT * FROM slow.wide WHERE p = 1"
    try:
        assert ok(node, "settimeout", "read", "1") == ""
        with pytest.raises(ReadTimeout) as raised:
            session.execute(query)
        assert raised.value.consistency == ConsistencyLevel.LOCAL_ONE
        assert (raised.value.received_responses, raised.value.required_responses) == (0, 1)
        assert raised.value.data_retrieved is False
        assert ok(node, "settimeout", "range", "1") == ""
        with pytest.raises(ReadTimeout):
            session.execute("SELECT * FROM slow.wide")
    finally:
        ok(node, "settimeout", "read", "5000")
        ok(node, "settimeout", "range", "10000")
    assert len(list(session.execute(query))) == WIDE_ROWS


def test_garbagecollect_drops_data_deleted_in_newer_sstables(churned):
    cluster, session = connect(churned)
    try:
        session.execute("CREATE TABLE ops.gc (k int PRIMARY KEY, v text)")
        insert = session.prepare("INSERT INTO ops.gc (k, v) VALUES (?, 'v')")
        for k in range(100):
            session.execute(insert, (k,))
        ok(churned, "flush", "ops", "gc")
        for k in range(0, 100, 2):
            session.execute("DELETE FROM ops.gc WHERE k = %s", (k,))
        ok(churned, "flush", "ops", "gc")
        ok(churned, "disableautocompaction", "ops", "gc")
        before = table_block(ok(churned, "tablestats", "ops.gc"), "gc")
        assert (int(before["SSTable count"]), int(before["Number of partitions (estimate)"])) == (2, 150)
        assert ok(churned, "garbagecollect", "-g", "ROW", "ops", "gc") == ""
        after = table_block(ok(churned, "tablestats", "ops.gc"), "gc")
        assert int(after["SSTable count"]) == 2
        assert int(after["Number of partitions (estimate)"]) == 100, "50 live + 50 tombstones"
        assert int(after["Space used (live)"]) < int(before["Space used (live)"])
        assert session.execute("SELECT count(*) FROM ops.gc").one()[0] == 50
        assert sorted(r.k for r in session.execute("SELECT k FROM ops.gc")) == list(range(1, 100, 2))
    finally:
        cluster.shutdown()
    assert nodetool(churned, "garbagecollect", "-g", "PARTITION", "ops").returncode == 1
    assert nodetool(churned, "garbagecollect", "nosuch").returncode == 1


def test_garbagecollect_cell_drops_overwritten_values(churned):
    cluster, session = connect(churned)
    try:
        session.execute("CREATE TABLE ops.cells (k int PRIMARY KEY, v text) "
                        "WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'enabled': 'false'}")
        for value in ("old", "new"):
            for k in range(50):
                session.execute("UPDATE ops.cells SET v = %s WHERE k = %s", (value, k))
            ok(churned, "flush", "ops", "cells")
        ok(churned, "garbagecollect", "ops", "cells")
        rows = table_block(ok(churned, "tablestats", "ops.cells"), "cells")
        assert int(rows["Number of partitions (estimate)"]) == 100, "ROW keeps overwritten cells"
        ok(churned, "garbagecollect", "--granularity", "CELL", "ops", "cells")
        cells = table_block(ok(churned, "tablestats", "ops.cells"), "cells")
        assert int(cells["Number of partitions (estimate)"]) == 50
        assert {r.v for r in session.execute("SELECT v FROM ops.cells")} == {"new"}
    finally:
        cluster.shutdown()
