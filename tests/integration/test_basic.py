"""End to end: a driver connects, creates a schema, writes, reads, and the data survives restarts."""
import uuid

import pytest
from cassandra import ConsistencyLevel
from cassandra.query import SimpleStatement

from conftest import connect
from helenus_node import Node

KS = "CREATE KEYSPACE IF NOT EXISTS {} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}"


def test_create_write_read(session):
    session.execute(KS.format("basic"))
    session.execute("CREATE TABLE IF NOT EXISTS basic.kv (k text PRIMARY KEY, v int, b blob)")
    session.execute("INSERT INTO basic.kv (k, v, b) VALUES ('a', 1, 0xff)")
    session.execute("INSERT INTO basic.kv (k, v) VALUES (%s, %s)", ("b", 2))
    rows = {r.k: (r.v, r.b) for r in session.execute("SELECT * FROM basic.kv")}
    assert rows == {"a": (1, b"\xff"), "b": (2, None)}
    row = session.execute("SELECT v FROM basic.kv WHERE k = 'a'").one()
    assert row.v == 1


def test_clustering_slices_and_order(session):
    session.execute(KS.format("basic"))
    session.execute("CREATE TABLE IF NOT EXISTS basic.ts (p int, c int, v text, PRIMARY KEY (p, c)) WITH CLUSTERING ORDER BY (c DESC)")
    for c in range(10):
        session.execute("INSERT INTO basic.ts (p, c, v) VALUES (1, %s, %s)", (c, str(c)))
    got = [r.c for r in session.execute("SELECT c FROM basic.ts WHERE p = 1")]
    assert got == list(range(9, -1, -1))
    got = [r.c for r in session.execute("SELECT c FROM basic.ts WHERE p = 1 AND c >= 3 AND c < 6 ORDER BY c ASC")]
    assert got == [3, 4, 5]
    got = [r.c for r in session.execute("SELECT c FROM basic.ts WHERE p = 1 AND c IN (2, 7, 42)")]
    assert got == [7, 2]
    assert session.execute("SELECT COUNT(*) FROM basic.ts WHERE p = 1").one()[0] == 10
    got = [r.c for r in session.execute("SELECT c FROM basic.ts WHERE p = 1 LIMIT 3")]
    assert got == [9, 8, 7]


def test_prepared_and_paging(session):
    session.execute(KS.format("basic"))
    session.execute("CREATE TABLE IF NOT EXISTS basic.paged (p int, c int, v uuid, PRIMARY KEY (p, c))")
    ins = session.prepare("INSERT INTO basic.paged (p, c, v) VALUES (?, ?, ?)")
    ids = {}
    for p in range(5):
        for c in range(50):
            ids[(p, c)] = uuid.uuid4()
            session.execute(ins, (p, c, ids[(p, c)]))
    stmt = SimpleStatement("SELECT p, c, v FROM basic.paged", fetch_size=17)
    seen = {(r.p, r.c): r.v for r in session.execute(stmt)}
    assert seen == ids
    sel = session.prepare("SELECT c, v FROM basic.paged WHERE p = ? AND c > ?")
    sel.fetch_size = 7
    got = [(r.c, r.v) for r in session.execute(sel, (3, 40))]
    assert got == [(c, ids[(3, c)]) for c in range(41, 50)]


def test_delete_and_ttl(session):
    session.execute(KS.format("basic"))
    session.execute("CREATE TABLE IF NOT EXISTS basic.del (p int, c int, v int, w int, PRIMARY KEY (p, c))")
    for c in range(5):
        session.execute("INSERT INTO basic.del (p, c, v, w) VALUES (1, %s, %s, %s)", (c, c, c))
    session.execute("DELETE FROM basic.del WHERE p = 1 AND c = 0")
    session.execute("DELETE w FROM basic.del WHERE p = 1 AND c = 1")
    session.execute("DELETE FROM basic.del WHERE p = 1 AND c >= 3")
    rows = [(r.c, r.v, r.w) for r in session.execute("SELECT c, v, w FROM basic.del WHERE p = 1")]
    assert rows == [(1, 1, None), (2, 2, 2)]
    session.execute("INSERT INTO basic.del (p, c, v) VALUES (2, 0, 7) USING TTL 1000 AND TIMESTAMP 12345")
    r = session.execute("SELECT TTL(v), WRITETIME(v) FROM basic.del WHERE p = 2 AND c = 0").one()
    assert 990 <= r[0] <= 1000 and r[1] == 12345
    session.execute("DELETE FROM basic.del WHERE p = 1")
    assert list(session.execute("SELECT * FROM basic.del WHERE p = 1")) == []


def test_counters_and_batches(session):
    session.execute(KS.format("basic"))
    session.execute("CREATE TABLE IF NOT EXISTS basic.cnt (k text PRIMARY KEY, n counter)")
    key = str(uuid.uuid4())
    for _ in range(10):
        session.execute("UPDATE basic.cnt SET n = n + 3 WHERE k = %s", (key,))
    session.execute("UPDATE basic.cnt SET n = n - 5 WHERE k = %s", (key,))
    assert session.execute("SELECT n FROM basic.cnt WHERE k = %s", (key,)).one().n == 25
    session.execute("CREATE TABLE IF NOT EXISTS basic.bt (k int PRIMARY KEY, v text)")
    session.execute("BEGIN BATCH INSERT INTO basic.bt (k, v) VALUES (1, 'one'); "
                    "INSERT INTO basic.bt (k, v) VALUES (2, 'two'); APPLY BATCH")
    assert sorted(r.k for r in session.execute("SELECT k FROM basic.bt")) == [1, 2]


def test_consistency_unavailable(session):
    session.execute("CREATE KEYSPACE IF NOT EXISTS rf3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}")
    session.execute("CREATE TABLE IF NOT EXISTS rf3.t (k int PRIMARY KEY, v int)")
    session.execute(SimpleStatement("INSERT INTO rf3.t (k, v) VALUES (1, 1)", consistency_level=ConsistencyLevel.ONE))
    from cassandra import Unavailable
    from cassandra.policies import FallthroughRetryPolicy
    with pytest.raises(Unavailable) as info:
        session.execute(SimpleStatement("INSERT INTO rf3.t (k, v) VALUES (1, 1)", consistency_level=ConsistencyLevel.QUORUM,
                                        retry_policy=FallthroughRetryPolicy()))
    assert info.value.required_replicas == 2 and info.value.alive_replicas == 1


@pytest.mark.parametrize("how", ["sigterm", "kill9"])
def test_data_survives_restart(how):
    node = Node().start()
    try:
        cluster, s = connect(node)
        s.execute(KS.format("durable"))
        s.execute("CREATE TABLE durable.t (k int PRIMARY KEY, v text)")
        ins = s.prepare("INSERT INTO durable.t (k, v) VALUES (?, ?)")
        for k in range(500):
            s.execute(ins, (k, "v%d" % k))
        cluster.shutdown()
        if how == "kill9":
            node.kill9()
        else:
            assert node.stop() == 0
        node.start()
        cluster, s = connect(node)
        rows = {r.k: r.v for r in s.execute("SELECT k, v FROM durable.t")}
        assert rows == {k: "v%d" % k for k in range(500)}
        saved = {r.prepared_id for r in s.execute("SELECT prepared_id FROM system.prepared_statements")}
        assert ins.query_id in saved
        cluster.shutdown()
    finally:
        node.cleanup()
