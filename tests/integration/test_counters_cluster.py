"""Counters on a three-node cluster, as drivers see them: increments from several coordinators
at once are neither lost nor counted twice (each goes to a leader replica that advances its own
shard and replicates it), every replica ends with the same total, a coordinator that is no
replica of the key forwards its increments to one, and a deleted counter stays deleted on every
replica, as in Cassandra."""
import threading
import time

import pytest
from cassandra import ConsistencyLevel

from cluster import at, running

INCREMENTS = 300


@pytest.fixture(scope="module")
def trio():
    schema = []
    for ks, rf in (("cnt", 3), ("cnt2", 2)):
        schema.append(f"CREATE KEYSPACE {ks} WITH replication = "
                      f"{{'class': 'SimpleStrategy', 'replication_factor': {rf}}}")
        schema.append(f"CREATE TABLE {ks}.c (k int PRIMARY KEY, n counter)")
    yield from running(schema)




def value(session, cl, k, ks="cnt"):
    rows = list(session.execute(at(cl, f"SELECT n FROM {ks}.c WHERE k = {k}")))
    return rows[0].n if rows else None


def settled(sessions, k, expected, timeout=5):
    """What each session reads at ONE once they all read `expected` (or the timeout passed):
    the last replica's acknowledgement may come after the client's."""
    deadline = time.monotonic() + timeout
    while True:
        seen = [value(s, ConsistencyLevel.ONE, k) for s in sessions]
        if all(v == expected for v in seen) or time.monotonic() > deadline:
            return seen
        time.sleep(0.1)


def increment_concurrently(sessions, query, times):
    """Runs `query` `times` times from each session, the sessions at once; the errors met."""
    errors = []

    def run(session):
        for _ in range(times):
            try:
                session.execute(at(ConsistencyLevel.QUORUM, query))
            except Exception as e:  # noqa: BLE001 - reported by the test
                errors.append(e)

    threads = [threading.Thread(target=run, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_increments_from_three_coordinators_add_up_on_every_replica(trio):
    sessions = [node.session() for node in trio.nodes]
    errors = increment_concurrently(sessions, "UPDATE cnt.c SET n = n + 1 WHERE k = 1", INCREMENTS)
    assert errors == []
    expected = 3 * INCREMENTS
    # A read at ONE coordinated by a replica is answered from that replica's own data.
    assert settled(sessions, 1, expected) == [expected] * 3
    for session in sessions:
        assert value(session, ConsistencyLevel.QUORUM, 1) == expected
        assert value(session, ConsistencyLevel.ALL, 1) == expected


def test_coordinators_that_are_no_replica_forward_to_a_leader(trio):
    # RF=2 on three nodes: each key has a node that is not its replica and forwards.
    sessions = [node.session() for node in trio.nodes]
    keys = range(10, 16)
    for k in keys:
        errors = increment_concurrently(sessions, f"UPDATE cnt2.c SET n = n + 2 WHERE k = {k}", 20)
        assert errors == []
    for session in sessions:
        for k in keys:
            assert value(session, ConsistencyLevel.ALL, k, ks="cnt2") == 120
    for session in sessions:
        session.execute(at(ConsistencyLevel.ONE, "UPDATE cnt2.c SET n = n - 5 WHERE k = 10"))
    assert value(sessions[0], ConsistencyLevel.ALL, 10, ks="cnt2") == 105


def test_a_deleted_counter_stays_deleted_on_every_replica(trio):
    sessions = [node.session() for node in trio.nodes]
    for session in sessions:
        session.execute(at(ConsistencyLevel.ALL, "UPDATE cnt.c SET n = n + 4 WHERE k = 2"))
    assert value(sessions[0], ConsistencyLevel.ALL, 2) == 12
    sessions[1].execute(at(ConsistencyLevel.ALL, "DELETE n FROM cnt.c WHERE k = 2"))
    for session in sessions:
        session.execute(at(ConsistencyLevel.QUORUM, "UPDATE cnt.c SET n = n + 1 WHERE k = 2"))
    assert settled(sessions, 2, None) == [None] * 3
    for session in sessions:
        assert value(session, ConsistencyLevel.ALL, 2) is None


def test_counter_writes_at_any_are_refused_and_unavailable_is_checked_first(trio):
    from cassandra import InvalidRequest, Unavailable
    node1, _, node3 = trio.nodes
    session = node1.session()
    with pytest.raises(InvalidRequest, match="ANY is not yet supported for counter table"):
        session.execute(at(ConsistencyLevel.ANY, "UPDATE cnt.c SET n = n + 1 WHERE k = 3"))
    node3.kill()
    try:
        node1.await_status(node3.address, "DN", timeout=15)
        session.execute(at(ConsistencyLevel.QUORUM, "UPDATE cnt.c SET n = n + 1 WHERE k = 3"))
        with pytest.raises(Unavailable) as refused:
            session.execute(at(ConsistencyLevel.ALL, "UPDATE cnt.c SET n = n + 1 WHERE k = 3"))
        assert (refused.value.required_replicas, refused.value.alive_replicas) == (3, 2)
        assert value(session, ConsistencyLevel.QUORUM, 3) == 1
    finally:
        node3.start()
    for node in trio.nodes:
        for other in trio.nodes:
            node.await_status(other.address, "UN", timeout=20)
