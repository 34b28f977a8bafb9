"""The cluster path as operators see it, in Cassandra 5.0's words and layouts, on three nodes
(RF=3): a traced request names the replicas it was sent to and holds each replica's own events
(source: the replica), `nodetool tpstats` prints every verb's dropped messages and the time
messages waited for their handler, `/metrics` has the dropped counter and those waits (and
passes `promtool check metrics`), and `nodetool proxyhistograms` shows the coordinator's
end-to-end latencies, timeouts included."""
import re
import shutil
import subprocess
import time
import urllib.request

import pytest
from cassandra import ConsistencyLevel, WriteTimeout

from cluster import ADMIN_PORT, STORAGE_PORT, all_up, at, running


@pytest.fixture(scope="module")
def trio():
    yield from running([
        "CREATE KEYSPACE obs WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 3}",
        "CREATE TABLE obs.t (k int PRIMARY KEY, v text)",
    ])


def metrics(node):
    url = f"http://{node.address}:{ADMIN_PORT}/metrics"
    with urllib.request.urlopen(url, timeout=10) as reply:
        return reply.read().decode()


def tpstats_messages(node):
    """tpstats' message table: {verb: (dropped, 50%, 95%, 99%, max)}."""
    out = node.nodetool("tpstats")
    head = "Latencies waiting in queue (micros) per dropped message types\n"
    assert head in out
    table = out.split(head, 1)[1].splitlines()
    assert table[0].split() == ["Message", "type", "Dropped", "50%", "95%", "99%", "Max"]
    rows = {}
    for line in table[1:]:
        verb, dropped, *waits = line.split()
        rows[verb] = (int(dropped), *map(float, waits))
    return rows


def test_tpstats_and_metrics_show_each_verbs_drops_and_queue_waits(trio):
    session = trio.node(1).session()
    for k in range(20):
        session.execute(at(ConsistencyLevel.ALL, f"INSERT INTO obs.t (k, v) VALUES ({k}, 'x')"))
    replica = trio.node(2)
    rows = tpstats_messages(replica)
    dropped, p50, p95, p99, most = rows["MUTATION_REQ"]
    assert 0 < p50 <= p95 <= p99 <= most, rows["MUTATION_REQ"]
    assert rows["COUNTER_MUTATION_REQ"][1:] == (0.0, 0.0, 0.0, 0.0)  # none received
    text = metrics(replica)
    assert "# TYPE helenus_messages_dropped_total counter" in text
    assert f'helenus_messages_dropped_total{{verb="MUTATION_REQ"}} {dropped}\n' in text
    # tpstats and /metrics read the same histogram; more messages may arrive in between.
    waits = re.findall(r'helenus_message_queue_wait_micros\{verb="MUTATION_REQ",quantile="1"\} '
                       r'(\d+)', text)
    assert len(waits) == 1 and int(waits[0]) >= most


def events_by_source(session, trace_id, sources, timeout=10):
    """The session's events per source, once every one of `sources` has some (replicas write
    theirs as they answer, which may be after the client has its answer)."""
    deadline = time.monotonic() + timeout
    while True:
        rows = session.execute("SELECT source, activity FROM system_traces.events "
                               "WHERE session_id = %s", [trace_id])
        found = {}
        for row in rows:
            found.setdefault(str(row.source), []).append(row.activity)
        if set(sources) <= set(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


PROMTOOL = shutil.which("promtool")


@pytest.mark.skipif(PROMTOOL is None, reason="promtool is not installed (Debian's prometheus "
                    "package; .ci/run installs it)")
def test_every_nodes_metrics_pass_promtool_after_every_kind_of_traffic(trio):
    """Writes and reads (digests) coordinated by every node, a scan, flushes and a compaction
    give every family samples: counters, gauges, latency histograms, and the per-read and
    queue-wait summaries."""
    sessions = [node.session() for node in trio.nodes]
    for _ in range(2):
        for k in range(9):
            sessions[k % 3].execute(at(ConsistencyLevel.ALL,
                                       f"INSERT INTO obs.t (k, v) VALUES ({k}, 'm')"))
        for node in trio.nodes:
            node.nodetool("flush", "obs")
    for k in range(9):
        sessions[k % 3].execute(at(ConsistencyLevel.ALL, f"SELECT v FROM obs.t WHERE k = {k}"))
    sessions[0].execute(at(ConsistencyLevel.ALL, "SELECT k FROM obs.t"))
    for node in trio.nodes:
        node.nodetool("compact", "obs")
    for node in trio.nodes:
        text = metrics(node)
        for family in ("helenus_table_sstables_per_read", "helenus_table_tombstones_per_read",
                       "helenus_message_queue_wait_micros"):
            assert f"# TYPE {family} summary\n" in text, (node, family)
        assert "# TYPE helenus_client_request_latency_seconds histogram\n" in text
        assert "# TYPE helenus_compactions_completed_total counter\n" in text
        checked = subprocess.run([PROMTOOL, "check", "metrics"], input=text, text=True,
                                 capture_output=True, timeout=60)
        assert (checked.returncode, checked.stdout + checked.stderr) == (0, ""), node


def test_a_traced_quorum_write_and_read_show_each_replicas_events(trio):
    node1 = trio.node(1)
    session = node1.session()
    coordinator = f"/{node1.address}:{STORAGE_PORT}"
    replicas = [n.address for n in trio.nodes[1:]]

    rs = session.execute(at(ConsistencyLevel.QUORUM, "INSERT INTO obs.t (k, v) VALUES (1, 'a')"),
                         trace=True)
    trace = rs.get_query_trace(max_wait_sec=10)
    events = events_by_source(session, trace.trace_id, [node1.address, *replicas])
    assert sorted(a for a in events[node1.address] if a.startswith("Sending")) == [
        f"Sending MUTATION_REQ message to /{r}:{STORAGE_PORT}" for r in replicas]
    for replica in replicas:
        assert events.get(replica) == [
            f"MUTATION_REQ message received from {coordinator}",
            "Appending to commitlog",
            "Adding to t memtable",
            f"Enqueuing response to {coordinator}",
        ], replica

    rs = session.execute(at(ConsistencyLevel.QUORUM, "SELECT v FROM obs.t WHERE k = 1"),
                         trace=True)
    assert [r.v for r in rs] == ["a"]
    trace = rs.get_query_trace(max_wait_sec=10)
    sent = [a for a in activities(trace) if a.startswith("Sending READ_REQ message to /")]
    assert len(sent) == 1, activities(trace)  # QUORUM of 3: this node and one other
    asked = re.match(r"Sending READ_REQ message to /([\d.]+):", sent[0]).group(1)
    events = events_by_source(session, trace.trace_id, [node1.address, asked])
    assert events[asked] == [
        f"READ_REQ message received from {coordinator}",
        "Executing single-partition query on t",
        "Acquiring sstable references",
        "Read 1 live rows and 0 tombstone cells",
        f"Enqueuing response to {coordinator}",
    ]


def activities(trace):
    return [e.description for e in trace.events]


def proxy_latencies(node):
    """proxyhistograms' rows: {percentile: [read, write, range, cas read, cas write, view]}."""
    lines = node.nodetool("proxyhistograms").splitlines()
    assert lines[0] == "proxy histograms"
    assert lines[1].split()[:7] == ["Percentile", "Read", "Latency", "Write", "Latency",
                                    "Range", "Latency"]
    return {line.split()[0]: [float(v) for v in line.split()[1:]] for line in lines[3:10]}


def test_proxyhistograms_shows_the_coordinators_latencies_timeouts_included(trio):
    node2, node3 = trio.node(2), trio.node(3)
    session = node3.session()
    session.execute(at(ConsistencyLevel.QUORUM, "INSERT INTO obs.t (k, v) VALUES (100, 'p')"))
    session.execute(at(ConsistencyLevel.QUORUM, "SELECT v FROM obs.t WHERE k = 100"))
    session.execute(at(ConsistencyLevel.QUORUM, "SELECT k FROM obs.t"))
    rows = proxy_latencies(node3)
    assert list(rows) == ["50%", "75%", "95%", "98%", "99%", "Min", "Max"]
    read, write, scan = (rows["Max"][i] for i in range(3))
    assert read > 0 and 0 < write < 2_000_000 and scan > 0, rows
    assert rows["Max"][3:] == [0.0, 0.0, 0.0]  # no lightweight transactions nor views
    node2.pause()
    try:
        with pytest.raises(WriteTimeout):
            session.execute(at(ConsistencyLevel.ALL, "INSERT INTO obs.t (k, v) VALUES (101, 'w')"),
                            timeout=30)
    finally:
        node2.resume()
    all_up(trio)
    # The write waited for the paused replica until the 2 s write timeout, as the client did.
    assert proxy_latencies(node3)["Max"][1] >= 2_000_000
