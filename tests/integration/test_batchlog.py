"""Logged batches on a three-node cluster (RF=3): a batch across partitions is readable in
full, leaves nothing in system.batches, and survives the death of its coordinator between the
batchlog write and the mutations (HELENUS_FAILPOINT=batch_after_batchlog makes the coordinator
abort there): the batchlog holders replay it."""
import os
import time

import pytest
from cassandra import ConsistencyLevel
from cassandra.policies import FallthroughRetryPolicy
from cassandra.query import BatchStatement, BatchType, SimpleStatement

from cluster import at, running

ROWS = 6


@pytest.fixture(scope="module")
def trio():
    yield from running([
        "CREATE KEYSPACE bl WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': 3}",
        "CREATE TABLE bl.t (k int PRIMARY KEY, v text)",
    ])




def logged_batch(first_key, tag):
    """A logged batch writing ROWS partitions from `first_key`, at QUORUM."""
    batch = BatchStatement(batch_type=BatchType.LOGGED, consistency_level=ConsistencyLevel.QUORUM,
                           retry_policy=FallthroughRetryPolicy())
    for k in range(first_key, first_key + ROWS):
        batch.add(SimpleStatement(f"INSERT INTO bl.t (k, v) VALUES ({k}, '{tag}{k}')"))
    return batch


def rows_in(session, first_key, consistency=ConsistencyLevel.QUORUM):
    keys = ", ".join(str(k) for k in range(first_key, first_key + ROWS))
    rows = session.execute(at(consistency, f"SELECT k, v FROM bl.t WHERE k IN ({keys})"))
    return sorted((r.k, r.v) for r in rows)


def local_rows(node, first_key):
    """What `node` alone holds of the batch's rows (a read at ONE coordinated by a replica is
    answered from its own data)."""
    return rows_in(node.session(), first_key, ConsistencyLevel.ONE)


def batches_of(node):
    return list(node.session().execute(at(ConsistencyLevel.ONE, "SELECT * FROM system.batches")))


def test_system_batches_has_cassandras_columns(trio):
    # As Cassandra 5.0.4 answers `SELECT * FROM system.batches` (refcass): id, mutations, version.
    result = trio.node(1).session().execute("SELECT * FROM system.batches")
    assert list(result.column_names) == ["id", "mutations", "version"]


def test_a_logged_batch_is_readable_in_full_and_leaves_no_batchlog(trio):
    node1 = trio.node(1)
    node1.session().execute(logged_batch(100, "a"))
    assert rows_in(node1.session(), 100) == [(k, f"a{k}") for k in range(100, 100 + ROWS)]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(batches_of(n) for n in trio.nodes):
        time.sleep(0.2)  # the removal is sent without waiting
    assert [batches_of(n) for n in trio.nodes] == [[], [], []]


def test_a_logged_batch_survives_the_death_of_its_coordinator(trio):
    node3 = trio.node(3)
    node3.stop()
    os.environ["HELENUS_FAILPOINT"] = "batch_after_batchlog"
    try:
        node3.start()
    finally:
        del os.environ["HELENUS_FAILPOINT"]
    for node in trio.nodes:
        for other in trio.nodes:
            node.await_status(other.address, "UN", timeout=30)
    with pytest.raises(Exception):
        node3.session().execute(logged_batch(200, "b"), timeout=15)
    survivors = trio.nodes[:2]
    # The coordinator died before applying anything: only the batchlog holders have the batch.
    # Checked at once on each survivor's own data: once the batch is older than twice the write
    # timeout a survivor's replay may apply it, possibly before node 3 is seen down.
    assert [local_rows(n, 200) for n in survivors] == [[], []]
    assert sum(len(batches_of(n)) for n in survivors) == 2
    survivors[0].await_status(node3.address, "DN", timeout=20)
    session = survivors[0].session()
    expected = [(k, f"b{k}") for k in range(200, 200 + ROWS)]
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline and rows_in(session, 200) != expected:
        time.sleep(1)  # replayed once older than 2 x write_request_timeout, every 10 s
    assert rows_in(session, 200) == expected
    assert rows_in(survivors[1].session(), 200) == expected
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(batches_of(n) for n in survivors):
        time.sleep(0.5)
    assert [batches_of(n) for n in survivors] == [[], []]
    node3.start()  # without the failpoint: the node comes back, hinted or repaired later
    survivors[0].await_status(node3.address, "UN", timeout=30)
