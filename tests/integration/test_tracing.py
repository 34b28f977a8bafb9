"""Request tracing as Cassandra 5.0.4 does it: the protocol tracing flag, the session and
events in system_traces (read back by the driver and by cqlsh's TRACING ON), and
probabilistic tracing set with nodetool settraceprobability."""
import subprocess
import time
import uuid

import pytest
from cassandra.query import SimpleStatement

from conftest import connect, cqlsh
from helenus_node import BIN


def nodetool(node, *args):
    return subprocess.run(
        [BIN, "nodetool", "-p", str(node.admin_port), *args],
        capture_output=True, text=True, timeout=60,
    )



@pytest.fixture(scope="module")
def flushed(node):
    """tr.t with two rows of partition 1 in one SSTable."""
    cluster, session = connect(node)
    session.execute("CREATE KEYSPACE tr WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE tr.t (k int, c int, v text, PRIMARY KEY (k, c))")
    session.execute("INSERT INTO tr.t (k, c, v) VALUES (1, 1, 'a')")
    session.execute("INSERT INTO tr.t (k, c, v) VALUES (1, 2, 'b')")
    result = nodetool(node, "flush", "tr", "t")
    assert result.returncode == 0, result.stderr
    cluster.shutdown()
    return node


def activities(trace):
    return [e.description for e in trace.events]


def test_traced_read_after_flush_reports_sstables(flushed, session):
    rs = session.execute("SELECT * FROM tr.t WHERE k = 1", trace=True)
    assert len(rs.current_rows) == 2
    trace = rs.get_query_trace(max_wait_sec=10)
    assert trace.request_type == "Execute CQL3 query"
    assert trace.duration is not None and trace.duration.total_seconds() >= 0
    assert trace.coordinator == flushed.addr
    assert trace.parameters["query"] == "SELECT * FROM tr.t WHERE k = 1"
    assert trace.parameters["consistency_level"] == "LOCAL_ONE"
    assert activities(trace) == [
        "Parsing SELECT * FROM tr.t WHERE k = 1",
        "Preparing statement",
        "Executing single-partition query on t",
        "Acquiring sstable references",
        "Skipped 0/1 non-slice-intersecting sstables, included 0 due to tombstones",
        "Merged data from memtables and 1 sstables",
        "Read 2 live rows and 0 tombstone cells",
    ]
    elapsed = [e.source_elapsed.total_seconds() for e in trace.events]
    assert elapsed == sorted(elapsed)
    assert all(e.source == flushed.addr for e in trace.events)


def test_traced_write_and_prepared_execute(flushed, session):
    rs = session.execute("INSERT INTO tr.t (k, c, v) VALUES (2, 1, 'w')", trace=True)
    assert activities(rs.get_query_trace(max_wait_sec=10)) == [
        "Parsing INSERT INTO tr.t (k, c, v) VALUES (2, 1, 'w')",
        "Preparing statement",
        "Determining replicas for mutation",
        "Appending to commitlog",
        "Adding to t memtable",
    ]
    prepared = session.prepare("SELECT v FROM tr.t WHERE k = ?")
    rs = session.execute(prepared, [2], trace=True)
    trace = rs.get_query_trace(max_wait_sec=10)
    assert trace.request_type == "Execute CQL3 prepared query"
    assert trace.parameters["query"] == "SELECT v FROM tr.t WHERE k = ?"
    assert activities(trace)[0] == "Executing single-partition query on t"
    assert activities(trace)[-1] == "Read 1 live rows and 0 tombstone cells"


def test_untraced_requests_carry_no_trace(flushed, session):
    rs = session.execute("SELECT * FROM tr.t WHERE k = 1")
    assert rs.get_all_query_traces() == []


def test_cqlsh_tracing_on_prints_the_trace(flushed):
    out = cqlsh(flushed, "TRACING ON; SELECT * FROM tr.t WHERE k = 1;")
    assert "Tracing session:" in out
    assert "activity" in out and "source_elapsed" in out
    assert "Execute CQL3 query" in out
    assert "Merged data from memtables and 1 sstables" in out
    assert "Request complete" in out


def sessions_for(session, query):
    rows = session.execute("SELECT session_id, request, parameters, duration FROM system_traces.sessions")
    return [r for r in rows if r.parameters and r.parameters.get("query") == query]


def test_trace_probability_traces_untraced_requests(flushed):
    assert nodetool(flushed, "gettraceprobability").stdout == "Current trace probability: 0.0\n"
    cluster, session = connect(flushed)
    marker = f"SELECT * FROM tr.t WHERE k = 1 AND c = {uuid.uuid4().int % 1000 + 10}"
    try:
        assert nodetool(flushed, "settraceprobability", "1").returncode == 0
        assert nodetool(flushed, "gettraceprobability").stdout == "Current trace probability: 1.0\n"
        rs = session.execute(SimpleStatement(marker))
        assert rs.get_all_query_traces() == []
    finally:
        assert nodetool(flushed, "settraceprobability", "0").returncode == 0
    deadline = time.time() + 10
    found = sessions_for(session, marker)
    while not found and time.time() < deadline:
        time.sleep(0.1)
        found = sessions_for(session, marker)
    assert len(found) == 1
    assert found[0].request == "Execute CQL3 query" and found[0].duration is not None
    events = session.execute("SELECT activity FROM system_traces.events WHERE session_id = %s",
                             [found[0].session_id])
    assert "Executing single-partition query on t" in [e.activity for e in events]
    cluster.shutdown()


def test_settraceprobability_rejects_bad_values(flushed):
    for args, message in [
        (["1.5"], "nodetool: Trace probability must be between 0 and 1"),
        (["abc"], 'nodetool: trace_probability: can not convert "abc" to a Double'),
        ([], "nodetool: Required parameters are missing: trace_probability"),
    ]:
        result = nodetool(flushed, "settraceprobability", *args)
        assert result.returncode == 1
        assert result.stderr.splitlines()[0] == message
    assert nodetool(flushed, "gettraceprobability").stdout == "Current trace probability: 0.0\n"
