"""Paxos state purged once committed and repaired (`paxos_state_purging: repaired`): after
lightweight transactions and a `nodetool repair`, every replica's `system.paxos` rows of the
repaired partitions are gone, and conditional statements on them still see the latest values
(the low bound the purge leaves refuses older ballots; nothing stale comes back)."""
from cassandra import ConsistencyLevel

from cluster import LocalCluster, at

KEYS = 12


def paxos_rows(node, table_id):
    """How many partitions of the table have registers in this node's `system.paxos`."""
    rows = node.session().execute("SELECT cf_id FROM system.paxos")
    return sum(1 for row in rows if row.cf_id == table_id)


def test_repair_purges_committed_paxos_state_and_later_transactions_stay_correct():
    with LocalCluster(nodes=2, yaml="paxos_purge_grace_period: 0s") as cluster:
        session = cluster.session()
        session.execute("CREATE KEYSPACE ks WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 2}")
        session.execute("CREATE TABLE ks.t (k int PRIMARY KEY, v int)")
        for k in range(KEYS):
            assert session.execute(f"INSERT INTO ks.t (k, v) VALUES ({k}, 1) IF NOT EXISTS").one()[0]
            assert session.execute(f"UPDATE ks.t SET v = 2 WHERE k = {k} IF v = 1").one()[0]
        table_id = session.execute("SELECT id FROM system_schema.tables "
                                   "WHERE keyspace_name = 'ks' AND table_name = 't'").one().id
        n1, n2 = cluster.nodes
        assert [paxos_rows(n, table_id) for n in (n1, n2)] == [KEYS, KEYS]

        n1.nodetool("repair", "ks", timeout=120)

        assert [paxos_rows(n, table_id) for n in (n1, n2)] == [0, 0]
        # The purged partitions: the committed values stand, conditions see them, and a new
        # round (above the low bound) applies once.
        for k in range(KEYS):
            row = session.execute(f"INSERT INTO ks.t (k, v) VALUES ({k}, 9) IF NOT EXISTS").one()
            assert (row[0], row.v) == (False, 2)
            assert not session.execute(f"UPDATE ks.t SET v = 5 WHERE k = {k} IF v = 1").one()[0]
            assert session.execute(f"UPDATE ks.t SET v = 3 WHERE k = {k} IF v = 2").one()[0]
        for k in range(KEYS):
            read = at(ConsistencyLevel.SERIAL, f"SELECT v FROM ks.t WHERE k = {k}")
            assert session.execute(read).one().v == 3
        # The new rounds' state is kept until the next repair.
        assert [paxos_rows(n, table_id) for n in (n1, n2)] == [KEYS, KEYS]
