"""Tombstone thresholds and auto snapshots through a real node.

With `tombstone_warn_threshold: 10` and `tombstone_failure_threshold: 100`, a read meeting 50
tombstones returns its rows with Cassandra's client warning, one meeting 200 fails with
ReadFailure (READ_TOO_MANY_TOMBSTONES in the v5 reason map). TRUNCATE and DROP TABLE leave
`truncated-*` / `dropped-*` snapshots (hard links, manifest, schema) behind."""
import glob
import os

import pytest
from cassandra import ReadFailure
from cassandra.query import BatchStatement, BatchType

from conftest import connect
from helenus_node import Node

YAML = "tombstone_warn_threshold: 10\ntombstone_failure_threshold: 100\n"


@pytest.fixture(scope="module")
def tomb_node():
    node = Node(extra_yaml=YAML).start()
    cluster, s = connect(node)
    s.execute("CREATE KEYSPACE tomb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE tomb.t (pk int, ck int, v text, PRIMARY KEY (pk, ck))")
    cluster.shutdown()
    yield node
    node.cleanup()


def delete_rows(s, pk, count):
    delete = s.prepare("DELETE FROM tomb.t WHERE pk = ? AND ck = ?")
    for start in range(0, count, 50):
        batch = BatchStatement(batch_type=BatchType.UNLOGGED)
        for ck in range(start, min(count, start + 50)):
            batch.add(delete, (pk, ck))
        s.execute(batch)


def test_reads_past_the_warn_threshold_warn_the_client(tomb_node):
    cluster, s = connect(tomb_node)
    try:
        s.execute("INSERT INTO tomb.t (pk, ck, v) VALUES (1, -1, 'live')")
        delete_rows(s, 1, 50)
        result = s.execute("SELECT * FROM tomb.t WHERE pk = 1")
        assert [(r.pk, r.ck, r.v) for r in result] == [(1, -1, "live")]
        warnings = result.response_future.warnings
        assert warnings and len(warnings) == 1, warnings
        assert warnings[0].startswith(
            "Read 1 live rows and 50 tombstone cells for query "
            "SELECT * FROM tomb.t WHERE pk = 1 LIMIT 5000 ALLOW FILTERING; token "), warnings
        assert warnings[0].endswith(" (see tombstone_warn_threshold)"), warnings
        quiet = s.execute("SELECT * FROM tomb.t WHERE pk = 1 AND ck = -1")
        assert quiet.response_future.warnings is None
        assert "tombstone_warn_threshold" in tomb_node.log()
    finally:
        cluster.shutdown()


@pytest.mark.parametrize("protocol", [4, 5])
def test_reads_past_the_failure_threshold_fail(tomb_node, protocol):
    cluster, s = connect(tomb_node, protocol_version=protocol)
    try:
        s.execute("INSERT INTO tomb.t (pk, ck, v) VALUES (2, -1, 'live')")
        delete_rows(s, 2, 200)
        with pytest.raises(ReadFailure) as failure:
            s.execute("SELECT * FROM tomb.t WHERE pk = 2")
        error = failure.value
        assert "READ_TOO_MANY_TOMBSTONES from /%s:7000" % tomb_node.addr in str(error), error
        assert (error.received_responses, error.required_responses, error.failures) == (0, 1, 1)
        if protocol == 5:
            assert error.error_code_map == {tomb_node.addr: 1}
        with pytest.raises(ReadFailure):
            s.execute("SELECT * FROM tomb.t")
        assert "query aborted" in tomb_node.log()
    finally:
        cluster.shutdown()


def snapshots(node, keyspace, table, prefix):
    pattern = os.path.join(node.data_dir, "data", keyspace, table + "-*", "snapshots", prefix + "-*")
    return glob.glob(pattern)


def test_truncate_and_drop_snapshot_first(tomb_node):
    cluster, s = connect(tomb_node)
    try:
        s.execute("CREATE TABLE tomb.snap (k int PRIMARY KEY, v text)")
        for k in range(20):
            s.execute("INSERT INTO tomb.snap (k, v) VALUES (%s, 'x')", (k,))
        s.execute("TRUNCATE tomb.snap")
        assert list(s.execute("SELECT * FROM tomb.snap")) == []
        [truncated] = snapshots(tomb_node, "tomb", "snap", "truncated")
        assert os.path.basename(truncated).endswith("-snap")
        data = glob.glob(os.path.join(truncated, "*-Data.db"))
        assert len(data) == 1, os.listdir(truncated)
        assert os.stat(data[0]).st_nlink == 1, "the original is gone; the link keeps the data"
        with open(os.path.join(truncated, "schema.cql")) as f:
            assert "CREATE TABLE tomb.snap" in f.read()
        with open(os.path.join(truncated, "manifest.json")) as f:
            assert os.path.basename(data[0]) in f.read()
        s.execute("INSERT INTO tomb.snap (k, v) VALUES (1, 'y')")
        s.execute("DROP TABLE tomb.snap")
        [dropped] = snapshots(tomb_node, "tomb", "snap", "dropped")
        assert glob.glob(os.path.join(dropped, "*-Data.db"))
        assert snapshots(tomb_node, "tomb", "snap", "truncated"), "dropping keeps older snapshots"
    finally:
        cluster.shutdown()
