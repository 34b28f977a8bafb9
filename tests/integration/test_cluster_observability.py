"""The cluster path as operators see it, in Cassandra 5.0's layouts, on three nodes (RF=3):
`nodetool tpstats` prints every verb's dropped messages and the time messages waited for their
handler, and `/metrics` has the dropped counter and those waits."""
import re
import urllib.request

import pytest
from cassandra import ConsistencyLevel

from cluster import ADMIN_PORT, at, running


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
    assert "# TYPE helenus_messages_dropped counter" in text
    assert f'helenus_messages_dropped_total{{verb="MUTATION_REQ"}} {dropped}\n' in text
    # tpstats and /metrics read the same histogram; more messages may arrive in between.
    waits = re.findall(r'helenus_message_queue_wait_micros\{verb="MUTATION_REQ",quantile="1"\} '
                       r'(\d+)', text)
    assert len(waits) == 1 and int(waits[0]) >= most
