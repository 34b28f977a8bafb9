"""Lightweight transactions through the Python driver (issue 31, points 1 and 2): on one node
(protocol v4 and v5) IF NOT EXISTS, IF EXISTS and column conditions by simple and prepared
statements, the driver's `was_applied`, the [applied] rows of a protocol BATCH, the prepared
result metadata, reads at SERIAL and LOCAL_SERIAL; on a 3-node cluster, concurrent IF NOT
EXISTS from clients on different coordinators (exactly one applies), a node down (still works
at QUORUM) and two down (Unavailable). test_lwt_differential.py compares the answers of every
statement form with Cassandra 5.0.4."""
import threading
import uuid

import pytest
from cassandra import ConsistencyLevel, InvalidRequest, Unavailable, WriteTimeout
from cassandra.cluster import NoHostAvailable
from cassandra.protocol import ErrorMessage
from cassandra.query import BatchStatement, SimpleStatement

from cluster import at


@pytest.fixture(scope="module")
def ks(session):
    name = f"lwt_{uuid.uuid4().hex[:10]}"
    session.execute(f"CREATE KEYSPACE {name} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute(f"CREATE TABLE {name}.t (k int, c int, s int static, v int, w text, "
                    "PRIMARY KEY (k, c))")
    session.execute(f"CREATE TABLE {name}.kv (k text PRIMARY KEY, v int, l list<int>)")
    yield name
    session.execute(f"DROP KEYSPACE {name}")


def test_insert_if_not_exists_applies_once_and_shows_the_row(session, ks):
    first = session.execute(f"INSERT INTO {ks}.t (k, c, v) VALUES (1, 1, 10) IF NOT EXISTS")
    assert first.was_applied
    assert first.column_names == ["[applied]"]
    second = session.execute(f"INSERT INTO {ks}.t (k, c, v) VALUES (1, 1, 11) IF NOT EXISTS")
    assert not second.was_applied
    assert second.column_names == ["[applied]", "k", "c", "s", "v", "w"]
    assert tuple(second.one()) == (False, 1, 1, None, 10, None)
    assert session.execute(f"SELECT v FROM {ks}.t WHERE k = 1 AND c = 1").one().v == 10


def test_prepared_compare_and_set(session, ks):
    update = session.prepare(f"UPDATE {ks}.kv SET v = ? WHERE k = ? IF v = ?")
    # Cassandra prepares a conditional statement without result metadata.
    assert not update.result_metadata
    assert [c.name for c in update.column_metadata] == ["v", "k", "v"]
    session.execute(f"INSERT INTO {ks}.kv (k, v) VALUES ('a', 1)")
    assert session.execute(update, (2, "a", 1)).was_applied
    lost = session.execute(update, (3, "a", 1))
    assert not lost.was_applied
    assert tuple(lost.one()) == (False, 2)
    assert session.execute(update, (3, "a", 2)).was_applied
    missing = session.execute(update, (1, "nobody", 1))
    assert (missing.column_names, tuple(missing.one())) == (["[applied]"], (False,))


def test_delete_if_exists_and_if_null(session, ks):
    session.execute(f"INSERT INTO {ks}.kv (k, v, l) VALUES ('d', 5, [1, 2, 3])")
    assert not session.execute(f"DELETE FROM {ks}.kv WHERE k = 'd' IF v = null").was_applied
    assert session.execute(f"UPDATE {ks}.kv SET l[1] = 9 WHERE k = 'd' IF l[0] = 1").was_applied
    assert session.execute(f"SELECT l FROM {ks}.kv WHERE k = 'd'").one().l == [1, 9, 3]
    assert session.execute(f"DELETE FROM {ks}.kv WHERE k = 'd' IF EXISTS").was_applied
    assert not session.execute(f"DELETE FROM {ks}.kv WHERE k = 'd' IF EXISTS").was_applied
    assert session.execute(f"UPDATE {ks}.kv SET v = 1 WHERE k = 'd' IF v = null").was_applied


def test_protocol_batch_answers_one_row_per_conditioned_row(session, ks):
    insert = session.prepare(f"INSERT INTO {ks}.t (k, c, v) VALUES (?, ?, ?) IF NOT EXISTS")
    batch = BatchStatement()
    batch.add(insert, (2, 1, 1))
    batch.add(insert, (2, 2, 2))
    assert session.execute(batch).was_applied
    update = session.prepare(f"UPDATE {ks}.t SET v = ? WHERE k = ? AND c = ? IF v = ?")
    batch = BatchStatement()
    batch.add(update, (5, 2, 1, 0))
    batch.add(update, (5, 2, 2, 2))
    failed = session.execute(batch)
    assert not failed.was_applied
    assert failed.column_names == ["[applied]", "k", "c", "v"]
    assert [tuple(r) for r in failed] == [(False, 2, 1, 1), (False, 2, 2, 2)]
    rows = session.execute(f"SELECT c, v FROM {ks}.t WHERE k = 2")
    assert [tuple(r) for r in rows] == [(1, 1), (2, 2)]


def test_batch_with_conditions_on_two_partitions_is_refused(session, ks):
    batch = BatchStatement()
    batch.add(SimpleStatement(f"UPDATE {ks}.t SET v = 1 WHERE k = 3 AND c = 1 IF v = 1"))
    batch.add(SimpleStatement(f"UPDATE {ks}.t SET v = 1 WHERE k = 4 AND c = 1 IF v = 1"))
    with pytest.raises(InvalidRequest, match="cannot span multiple partitions"):
        session.execute(batch)


def test_serial_reads_and_local_serial_writes(session, ks):
    write = SimpleStatement(f"INSERT INTO {ks}.kv (k, v) VALUES ('s', 7) IF NOT EXISTS",
                            serial_consistency_level=ConsistencyLevel.LOCAL_SERIAL)
    assert session.execute(write).was_applied
    for cl in (ConsistencyLevel.SERIAL, ConsistencyLevel.LOCAL_SERIAL):
        read = SimpleStatement(f"SELECT v FROM {ks}.kv WHERE k = 's'", consistency_level=cl)
        assert session.execute(read).one().v == 7
    commit_at_serial = SimpleStatement(f"UPDATE {ks}.kv SET v = 8 WHERE k = 's' IF v = 7",
                                       consistency_level=ConsistencyLevel.SERIAL)
    with pytest.raises(InvalidRequest, match="SERIAL is not supported as conditional update"):
        session.execute(commit_at_serial)


def test_a_traced_transaction_records_its_paxos_round(session, ks):
    statement = SimpleStatement(f"INSERT INTO {ks}.kv (k, v) VALUES ('t', 1) IF NOT EXISTS")
    result = session.execute(statement, trace=True)
    assert result.was_applied
    activities = [e.description for e in result.get_query_trace(max_wait_sec=10).events]
    assert "Reading existing values for CAS precondition" in activities, activities
    assert "CAS applied successfully" in activities, activities


@pytest.mark.parametrize("statement, message", [
    ("UPDATE {ks}.t USING TIMESTAMP 5 SET v = 1 WHERE k = 1 AND c = 1 IF v = 1",
     "Cannot provide custom timestamp for conditional updates"),
    ("UPDATE {ks}.t SET v = 1 WHERE k = 1 AND c = 1 IF c = 1",
     "PRIMARY KEY column 'c' cannot have IF conditions"),
    ("UPDATE {ks}.t SET v = 1 WHERE k IN (1, 2) AND c = 1 IF v = 1",
     "IN on the partition key is not supported with conditional updates"),
    ("UPDATE {ks}.t SET v = 1 WHERE k = 1 AND c = 1 IF v > null",
     'Invalid comparison with null for operator ">"'),
])
def test_refusals(session, ks, statement, message):
    with pytest.raises(InvalidRequest, match=message):
        session.execute(statement.format(ks=ks))


def test_an_update_failing_inside_the_transaction_answers_its_error(session, ks):
    session.execute(f"INSERT INTO {ks}.kv (k, l) VALUES ('x', [1, 2, 3])")
    with pytest.raises(InvalidRequest, match="List index 7 out of bound, list has size 3"):
        session.execute(f"UPDATE {ks}.kv SET l[7] = 1 WHERE k = 'x' IF EXISTS")
    assert session.execute(f"SELECT l FROM {ks}.kv WHERE k = 'x'").one().l == [1, 2, 3]


# --- three nodes -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lwt3(trio):
    session = trio.node(1).session()
    session.execute("CREATE KEYSPACE IF NOT EXISTS lwt3 WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    session.execute("CREATE TABLE IF NOT EXISTS lwt3.names (name text PRIMARY KEY, owner int)")
    return trio


def test_concurrent_inserts_from_three_coordinators_apply_once(lwt3):
    """Three clients, each bound to its own coordinator, claim the same 30 names: each name
    has one owner, the client told it applied (a timed-out claim may or may not have)."""
    sessions = [node.session() for node in lwt3.nodes]
    names = [f"user{i}" for i in range(30)]
    applied = {name: [] for name in names}
    unknown = {name: [] for name in names}

    def claim(owner, session):
        insert = session.prepare("INSERT INTO lwt3.names (name, owner) VALUES (?, ?) "
                                 "IF NOT EXISTS")
        for name in names:
            try:
                if session.execute(insert, (name, owner)).was_applied:
                    applied[name].append(owner)
            except (WriteTimeout, ErrorMessage) as e:
                # Contention past the timeout: the outcome is unknown (WriteTimeout of type
                # CAS before v5, CAS_WRITE_UNKNOWN from v5 on).
                if isinstance(e, ErrorMessage) and e.code not in (0x1100, 0x1700):
                    raise
                unknown[name].append(owner)

    threads = [threading.Thread(target=claim, args=(i, s)) for i, s in enumerate(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    read = SimpleStatement("SELECT owner FROM lwt3.names WHERE name = %s",
                           consistency_level=ConsistencyLevel.SERIAL)
    for name in names:
        owner = sessions[0].execute(read, (name,)).one().owner
        assert len(applied[name]) <= 1, (name, applied[name])
        assert owner in applied[name] or (not applied[name] and owner in unknown[name]), \
            (name, owner, applied[name], unknown[name])
    # Contention may leave some claims unknown, not most of them.
    assert sum(len(u) for u in unknown.values()) <= len(names), unknown


def test_one_node_down_still_works_two_down_is_unavailable(lwt3):
    node1, node2, node3 = lwt3.nodes
    session = node1.session()
    node3.kill()
    try:
        node1.await_status(node3.address, "DN", timeout=15)
        insert = at(ConsistencyLevel.QUORUM,
                    "INSERT INTO lwt3.names (name, owner) VALUES ('down1', 1) IF NOT EXISTS")
        assert session.execute(insert).was_applied
        assert not session.execute(insert).was_applied
        node2.kill()
        node1.await_status(node2.address, "DN", timeout=15)
        lonely = at(ConsistencyLevel.QUORUM,
                    "INSERT INTO lwt3.names (name, owner) VALUES ('down2', 1) IF NOT EXISTS")
        with pytest.raises((Unavailable, NoHostAvailable)) as failure:
            session.execute(lonely)
        assert "SERIAL" in str(failure.value)
    finally:
        node2.start()
        node3.start()
