"""Replication on a three-node cluster (RF=3), as drivers see it: writes reach every replica,
reads are answered at the consistency level asked, a lost node leaves QUORUM working and ALL
Unavailable with Cassandra's fields, a paused node (or a killed one not yet held down) makes
ALL time out with them, and a stale replica is repaired by a read."""
import contextlib
import re
import time
import urllib.request

import pytest
from cassandra import ConsistencyLevel, ReadTimeout, Unavailable, WriteTimeout
from cassandra.query import SimpleStatement

from cassandra.cluster import Cluster

from cluster import ADMIN_PORT, NATIVE_PORT, all_up, at, running


@pytest.fixture(scope="module")
def trio():
    yield from running([
        "CREATE KEYSPACE rep WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 3}",
        "CREATE TABLE rep.t (k int, c int, v text, PRIMARY KEY (k, c))",
    ])




@contextlib.contextmanager
def missed_by(trio, node):
    """Writes made inside miss `node`: it is stopped (cleanly: a killed node's periodic commit
    log may lose its last writes), the others see it down and store no hints for it; it is
    started again and every node sees every other up before the block's caller goes on."""
    others = [n for n in trio.nodes if n.address != node.address]
    node.stop()
    try:
        others[0].await_status(node.address, "DN", timeout=15)
        for other in others:
            other.nodetool("disablehandoff")
        yield
    finally:
        node.start()
        for other in others:
            other.nodetool("enablehandoff")
    all_up(trio)


def rows_at_one(node, k):
    """What `node` alone holds of partition k (a read at ONE coordinated by a replica is
    answered from its own data)."""
    rows = node.session().execute(at(ConsistencyLevel.ONE, f"SELECT c, v FROM rep.t WHERE k = {k}"))
    return [(r.c, r.v) for r in rows]


def test_a_quorum_write_reaches_every_replica(trio):
    session = trio.node(1).session()
    for c in range(5):
        session.execute(at(ConsistencyLevel.QUORUM,
                           f"INSERT INTO rep.t (k, c, v) VALUES (1, {c}, 'v{c}')"))
    expected = [(c, f"v{c}") for c in range(5)]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(rows_at_one(n, 1) != expected for n in trio.nodes):
        time.sleep(0.1)  # the third replica's acknowledgement may come after the client's
    for node in trio.nodes:
        assert rows_at_one(node, 1) == expected, node
    for cl in (ConsistencyLevel.QUORUM, ConsistencyLevel.ALL, ConsistencyLevel.TWO):
        rows = session.execute(at(cl, "SELECT c, v FROM rep.t WHERE k = 1 LIMIT 3"))
        assert [(r.c, r.v) for r in rows] == expected[:3]


def test_a_killed_node_leaves_quorum_working_and_all_unavailable(trio):
    node1, _, node3 = trio.nodes
    node3.kill()
    try:
        node1.await_status(node3.address, "DN", timeout=15)
        session = node1.session()
        session.execute(at(ConsistencyLevel.QUORUM, "INSERT INTO rep.t (k, c, v) VALUES (2, 0, 'q')"))
        rows = session.execute(at(ConsistencyLevel.QUORUM, "SELECT v FROM rep.t WHERE k = 2"))
        assert [r.v for r in rows] == ["q"]
        with pytest.raises(Unavailable) as write:
            session.execute(at(ConsistencyLevel.ALL, "INSERT INTO rep.t (k, c, v) VALUES (2, 1, 'a')"))
        assert (write.value.required_replicas, write.value.alive_replicas) == (3, 2)
        with pytest.raises(Unavailable) as read:
            session.execute(at(ConsistencyLevel.ALL, "SELECT v FROM rep.t WHERE k = 2"))
        assert (read.value.required_replicas, read.value.alive_replicas) == (3, 2)
        assert read.value.consistency == ConsistencyLevel.ALL
    finally:
        node3.start()
    all_up(trio)


def test_a_stale_replica_is_repaired_by_a_quorum_read(trio):
    node1, _, node3 = trio.nodes
    with missed_by(trio, node3):
        node1.session().execute(at(ConsistencyLevel.ONE,
                                   "INSERT INTO rep.t (k, c, v) VALUES (3, 0, 'missed')"))
    assert rows_at_one(node3, 3) == []
    # node3 coordinates: its own data and another replica's digest disagree.
    rows = node3.session().execute(at(ConsistencyLevel.QUORUM, "SELECT c, v FROM rep.t WHERE k = 3"))
    assert [(r.c, r.v) for r in rows] == [(0, "missed")]
    assert rows_at_one(node3, 3) == [(0, "missed")]


def test_a_deletion_on_a_quorum_hides_older_data_on_the_other_replica(trio):
    node1, _, node3 = trio.nodes
    session = node1.session()
    session.execute(at(ConsistencyLevel.ALL, "INSERT INTO rep.t (k, c, v) VALUES (4, 0, 'old')"))
    with missed_by(trio, node3):
        session.execute(at(ConsistencyLevel.QUORUM, "DELETE FROM rep.t WHERE k = 4 AND c = 0"))
    assert rows_at_one(node3, 4) == [(0, "old")]
    rows = node3.session().execute(at(ConsistencyLevel.ALL, "SELECT c, v FROM rep.t WHERE k = 4"))
    assert list(rows) == []
    assert rows_at_one(node3, 4) == []


def test_a_paused_replica_times_out_all_with_cassandras_fields(trio):
    node1, node2, _ = trio.nodes
    session = node1.session()
    node2.pause()
    try:
        with pytest.raises(WriteTimeout) as write:
            session.execute(at(ConsistencyLevel.ALL,
                               "INSERT INTO rep.t (k, c, v) VALUES (5, 0, 'slow')"), timeout=30)
        # The live replicas' answers: node1's own and node3's (which a machine under heavy load
        # may deliver after the 2 s write timeout).
        assert write.value.required_responses == 3
        assert write.value.received_responses in (1, 2)
        assert write.value.write_type == 0  # SIMPLE
        with pytest.raises(ReadTimeout) as read:
            session.execute(at(ConsistencyLevel.ALL, "SELECT v FROM rep.t WHERE k = 5"), timeout=30)
        assert read.value.required_responses == 3
        assert read.value.received_responses in (1, 2)
    finally:
        node2.resume()
    all_up(trio)


def test_a_killed_replica_not_yet_held_down_times_out_all_counting_the_live_answers(trio):
    """kill -9 node3 and ask node1 at ALL before its failure detector convicts node3: node3's
    connection is refused at once and it simply does not answer, so the errors count the two
    live replicas' answers, as Cassandra's ReadCallback and write handler do (data_retrieved:
    node1 read the data itself). Issue 27: the read counted only the answers already in when
    the refusal came."""
    node1, _, node3 = trio.nodes
    session = node1.session()
    session.execute(at(ConsistencyLevel.ALL, "INSERT INTO rep.t (k, c, v) VALUES (6, 0, 'x')"))
    node3.kill()
    try:
        for query in ("SELECT v FROM rep.t WHERE k = 6", "SELECT k FROM rep.t"):
            with pytest.raises(ReadTimeout) as read:
                session.execute(at(ConsistencyLevel.ALL, query), timeout=30)
            error = read.value
            assert (error.received_responses, error.required_responses) == (2, 3), query
            assert error.data_retrieved is True, query
        with pytest.raises(WriteTimeout) as write:
            session.execute(at(ConsistencyLevel.ALL,
                               "INSERT INTO rep.t (k, c, v) VALUES (6, 1, 'y')"), timeout=30)
        assert (write.value.received_responses, write.value.required_responses) == (2, 3)
        assert node1.status_of(node3.address) == "UN"  # still not convicted: the case tested
    finally:
        node3.start()
    all_up(trio)


@pytest.mark.parametrize("rf", [1, 3])
def test_a_3000_row_scan_pages_across_nodes_with_every_row_once(trio, rf):
    session = trio.node(1).session()
    session.execute(f"CREATE KEYSPACE IF NOT EXISTS scan{rf} WITH replication = "
                    f"{{'class': 'SimpleStrategy', 'replication_factor': {rf}}}")
    session.execute(f"CREATE TABLE IF NOT EXISTS scan{rf}.t (k int, c int, v int, "
                    "PRIMARY KEY (k, c))")
    insert = session.prepare(f"INSERT INTO scan{rf}.t (k, c, v) VALUES (?, ?, ?)")
    insert.consistency_level = ConsistencyLevel.ALL if rf == 3 else ConsistencyLevel.ONE
    for k in range(1000):
        for c in range(3):
            session.execute(insert, (k, c, k * 10 + c))
    cl = ConsistencyLevel.QUORUM if rf == 3 else ConsistencyLevel.ONE
    for node in trio.nodes:
        statement = SimpleStatement(f"SELECT k, c, v FROM scan{rf}.t", fetch_size=250,
                                    consistency_level=cl)
        rows = [(r.k, r.c, r.v) for r in node.session().execute(statement)]
        assert len(rows) == 3000, node
        assert sorted(rows) == [(k, c, k * 10 + c) for k in range(1000) for c in range(3)]
        count = node.session().execute(at(cl, f"SELECT COUNT(*) FROM scan{rf}.t")).one()
        assert count.count == 3000
        distinct = node.session().execute(SimpleStatement(
            f"SELECT DISTINCT k FROM scan{rf}.t", fetch_size=100, consistency_level=cl))
        assert sorted(r.k for r in distinct) == list(range(1000))
    # A token range, and a LIMIT across nodes.
    tokens = session.execute(SimpleStatement(
        f"SELECT k FROM scan{rf}.t WHERE token(k) > 0 AND token(k) <= 4611686018427387904",
        consistency_level=cl))
    direct = {r.k for r in session.execute(
        f"SELECT k, token(k) AS t FROM scan{rf}.t") if 0 < r.t <= 4611686018427387904}
    assert {r.k for r in tokens} == direct
    limited = trio.node(2).session().execute(at(cl, f"SELECT k FROM scan{rf}.t LIMIT 7"))
    assert len(list(limited)) == 7


def test_a_scan_at_quorum_does_not_return_rows_deleted_on_a_quorum(trio):
    node1, _, node3 = trio.nodes
    session = node1.session()
    for k in (100, 101):
        session.execute(at(ConsistencyLevel.ALL,
                           f"INSERT INTO rep.t (k, c, v) VALUES ({k}, 0, 'x')"))
    with missed_by(trio, node3):
        session.execute(at(ConsistencyLevel.QUORUM, "DELETE FROM rep.t WHERE k = 100"))
    rows = node3.session().execute(at(ConsistencyLevel.ALL, "SELECT k FROM rep.t"))
    keys = {r.k for r in rows}
    assert 101 in keys and 100 not in keys
    assert rows_at_one(node3, 100) == []  # repaired by the scan


def routed(cluster):
    """Single-partition requests the nodes coordinated as a replica of the key, and not."""
    totals = {"replica": 0, "elsewhere": 0}
    for node in cluster.nodes:
        url = f"http://{node.address}:{ADMIN_PORT}/metrics"
        text = urllib.request.urlopen(url, timeout=10).read().decode()
        for to, n in re.findall(
                r'^helenus_single_partition_requests(?:_total)?\{to="(\w+)"\} (\d+)', text, re.M):
            totals[to] += int(n)
    return totals


def test_token_aware_drivers_send_prepared_requests_to_a_replica(trio):
    driver = Cluster([n.address for n in trio.nodes], port=NATIVE_PORT, protocol_version=5)
    try:
        session = driver.connect()
        session.execute("CREATE TABLE IF NOT EXISTS rep.routed (k int PRIMARY KEY, v int)")
        insert = session.prepare("INSERT INTO rep.routed (k, v) VALUES (?, ?)")
        select = session.prepare("SELECT v FROM rep.routed WHERE k = ?")
        before = routed(trio)
        for k in range(500):
            session.execute(insert, (k, k))
            assert session.execute(select, (k,)).one().v == k
        after = routed(trio)
    finally:
        driver.shutdown()
    to_replica = after["replica"] - before["replica"]
    elsewhere = after["elsewhere"] - before["elsewhere"]
    assert to_replica + elsewhere >= 1000
    assert to_replica / (to_replica + elsewhere) >= 0.99, (to_replica, elsewhere)


def counter(cluster, name):
    total = 0
    for node in cluster.nodes:
        url = f"http://{node.address}:{ADMIN_PORT}/metrics"
        text = urllib.request.urlopen(url, timeout=10).read().decode()
        total += sum(int(n) for n in re.findall(rf"^{name}(?:_total)? (\d+)", text, re.M))
    return total


def test_speculative_retry_asks_another_replica_when_one_is_slow(trio):
    node1, node2, _ = trio.nodes
    driver = Cluster([node1.address], port=NATIVE_PORT, protocol_version=5)
    try:
        driver.connect()
        def second_contact(k):
            key = k.to_bytes(4, "big", signed=True)
            replicas = [h.address for h in driver.metadata.get_replicas("rep", key)]
            return next(a for a in replicas if a != node1.address)
        k = next(k for k in range(1000) if second_contact(k) == node2.address)
    finally:
        driver.shutdown()
    session = node1.session()
    session.execute("CREATE TABLE IF NOT EXISTS rep.spec (k int PRIMARY KEY, v int) "
                    "WITH speculative_retry = '20ms'")
    # Writes reach every replica: they bring node2's latency score (the dynamic snitch's) back
    # to the others' after earlier tests paused it, so it is the replica node1 prefers again.
    for _ in range(60):
        session.execute(at(ConsistencyLevel.ALL, f"INSERT INTO rep.spec (k, v) VALUES ({k}, 1)"))
    before = counter(trio, "helenus_speculative_retries")
    # node1 asks itself and the replica its snitch scores best. That is usually node2, but the
    # scores are measured latencies: if node3 is preferred, the read with node2 paused needs
    # no speculation, and pausing node3 next is what makes it speculate.
    for victim in (node2, trio.nodes[2]):
        victim.pause()
        try:
            started = time.monotonic()
            rows = session.execute(at(ConsistencyLevel.QUORUM, f"SELECT v FROM rep.spec WHERE k = {k}"))
            took = time.monotonic() - started
        finally:
            victim.resume()
        assert rows.one().v == 1
        # Without speculation the read would wait for the paused replica until the read timeout.
        assert took < 2, f"the read took {took:.1f} s"
        if counter(trio, "helenus_speculative_retries") > before:
            break
    assert counter(trio, "helenus_speculative_retries") > before
    all_up(trio)
