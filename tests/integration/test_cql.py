"""CQL features through the Python driver: every native type, static columns, limits,
DISTINCT, token ranges, timestamps, compression, schema events."""
import datetime
import decimal
import ipaddress
import time
import uuid

import pytest
from cassandra.cluster import Cluster
from cassandra.policies import RoundRobinPolicy
from cassandra.query import SimpleStatement
from cassandra.util import Date, Duration, Time

from conftest import connect

KS = "CREATE KEYSPACE IF NOT EXISTS cqlf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"

TYPES = [
    ("ascii", "hello"),
    ("bigint", -9223372036854775807),
    ("blob", b"\x00\x01\xff"),
    ("boolean", True),
    ("date", Date(datetime.date(2024, 2, 29))),
    ("decimal", decimal.Decimal("-12345.678901234567890")),
    ("double", 2.5e-300),
    ("duration", Duration(1, 2, 3000000000)),
    ("float", 1.5),
    ("inet", "2001:db8::1"),
    ("int", -2147483648),
    ("smallint", -32768),
    ("text", "héllo wörld ✓"),
    ("time", Time(datetime.time(13, 14, 15, 123456))),
    ("timestamp", datetime.datetime(2026, 11, 22, 10, 0, 0, 123000)),
    ("timeuuid", uuid.UUID("d2177dd0-eaa2-11de-a572-001b779c76e3")),
    ("tinyint", -128),
    ("uuid", uuid.UUID("6ab09bec-e68e-48d9-a5f8-97e6fb4c9b47")),
    ("varint", 123456789012345678901234567890),
]


@pytest.fixture(scope="module")
def s(session):
    session.execute(KS)
    return session


@pytest.mark.parametrize("cql_type,value", TYPES, ids=[t for t, _ in TYPES])
def test_native_type_round_trip(s, cql_type, value):
    table = f"cqlf.t_{cql_type}"
    # Cassandra refuses durations in primary keys.
    key_type, key = ("int", 1) if cql_type == "duration" else (cql_type, value)
    s.execute(f"CREATE TABLE IF NOT EXISTS {table} (k {key_type} PRIMARY KEY, v {cql_type})")
    # The driver renders some values (decimal) lossily as literals, so bind them.
    s.execute(s.prepare(f"INSERT INTO {table} (k, v) VALUES (?, ?)"), (key, value))
    prepared = s.prepare(f"SELECT k, v FROM {table} WHERE k = ?")
    row = s.execute(prepared, (key,)).one()
    assert row is not None
    got_k, got_v = row.k, row.v
    if cql_type == "inet":
        assert ipaddress.ip_address(got_v) == ipaddress.ip_address(value)
    else:
        assert got_k == key and got_v == value


def test_static_columns(s):
    s.execute("CREATE TABLE IF NOT EXISTS cqlf.st (p int, c int, s text static, v int, PRIMARY KEY (p, c))")
    s.execute("INSERT INTO cqlf.st (p, c, s, v) VALUES (1, 1, 'first', 1)")
    s.execute("INSERT INTO cqlf.st (p, c, v) VALUES (1, 2, 2)")
    s.execute("UPDATE cqlf.st SET s = 'shared' WHERE p = 1")
    s.execute("INSERT INTO cqlf.st (p, s) VALUES (2, 'alone')")
    rows = [(r.p, r.c, r.s, r.v) for r in s.execute("SELECT p, c, s, v FROM cqlf.st WHERE p IN (1, 2)")]
    assert rows == [(1, 1, "shared", 1), (1, 2, "shared", 2), (2, None, "alone", None)]
    assert [(r.p, r.s) for r in s.execute("SELECT DISTINCT p, s FROM cqlf.st")] in (
        [(1, "shared"), (2, "alone")], [(2, "alone"), (1, "shared")])


def test_limits_and_distinct(s):
    s.execute("CREATE TABLE IF NOT EXISTS cqlf.lim (p int, c int, PRIMARY KEY (p, c))")
    for p in range(4):
        for c in range(5):
            s.execute("INSERT INTO cqlf.lim (p, c) VALUES (%s, %s)", (p, c))
    rows = list(s.execute("SELECT p, c FROM cqlf.lim PER PARTITION LIMIT 2"))
    assert len(rows) == 8 and all(r.c < 2 for r in rows)
    assert len(list(s.execute("SELECT p, c FROM cqlf.lim LIMIT 7"))) == 7
    stmt = SimpleStatement("SELECT p, c FROM cqlf.lim PER PARTITION LIMIT 3 LIMIT 10", fetch_size=4)
    assert len(list(s.execute(stmt))) == 10
    assert sorted(r.p for r in s.execute("SELECT DISTINCT p FROM cqlf.lim")) == [0, 1, 2, 3]
    assert s.execute("SELECT COUNT(*) FROM cqlf.lim").one().count == 20
    r = s.execute("SELECT min(c), max(c), sum(c), avg(c) FROM cqlf.lim WHERE p = 1").one()
    assert tuple(r) == (0, 4, 10, 2)


def test_token_ranges_cover_everything_once(s):
    s.execute("CREATE TABLE IF NOT EXISTS cqlf.tok (k int PRIMARY KEY)")
    for k in range(100):
        s.execute("INSERT INTO cqlf.tok (k) VALUES (%s)", (k,))
    tokens = [(r[0], r.k) for r in s.execute("SELECT token(k), k FROM cqlf.tok")]
    assert [t for t, _ in tokens] == sorted(t for t, _ in tokens)
    low = list(s.execute("SELECT k FROM cqlf.tok WHERE token(k) <= 0"))
    high = list(s.execute("SELECT k FROM cqlf.tok WHERE token(k) > 0"))
    assert sorted(r.k for r in low + high) == list(range(100))
    one = s.execute("SELECT k FROM cqlf.tok WHERE token(k) = token(42)").one()
    assert one.k == 42


def test_client_and_server_timestamps(s):
    s.execute("CREATE TABLE IF NOT EXISTS cqlf.ts (k int PRIMARY KEY, v int)")
    s.execute("INSERT INTO cqlf.ts (k, v) VALUES (1, 1) USING TIMESTAMP 1000")
    s.execute("INSERT INTO cqlf.ts (k, v) VALUES (1, 2) USING TIMESTAMP 999")
    assert s.execute("SELECT v, WRITETIME(v) FROM cqlf.ts WHERE k = 1").one() == (1, 1000)
    before = int(time.time() * 1e6)
    s.execute("INSERT INTO cqlf.ts (k, v) VALUES (2, 1)")
    wt = s.execute("SELECT WRITETIME(v) FROM cqlf.ts WHERE k = 2").one()[0]
    assert before - 5_000_000 <= wt <= int(time.time() * 1e6) + 5_000_000


@pytest.mark.parametrize("version", [4, 5])
def test_lz4_compression(node, version):
    cluster = Cluster([node.addr], port=node.port, protocol_version=version, compression="lz4",
                      load_balancing_policy=RoundRobinPolicy())
    session = cluster.connect()
    session.execute(KS)
    session.execute("CREATE TABLE IF NOT EXISTS cqlf.big (k int PRIMARY KEY, v text)")
    big = "x" * 300_000
    session.execute("INSERT INTO cqlf.big (k, v) VALUES (%s, %s)", (version, big))
    assert session.execute("SELECT v FROM cqlf.big WHERE k = %s", (version,)).one().v == big
    cluster.shutdown()


def test_protocol_negotiation_picks_v5(node):
    cluster = Cluster([node.addr], port=node.port, load_balancing_policy=RoundRobinPolicy())
    cluster.connect()
    assert cluster.protocol_version == 5
    cluster.shutdown()


def test_schema_change_events_reach_other_clients(node):
    watcher, _ = connect(node)
    other, session = connect(node)
    session.execute(KS)
    name = "ev_" + uuid.uuid4().hex[:8]
    session.execute(f"CREATE TABLE cqlf.{name} (k int PRIMARY KEY)")
    deadline = time.time() + 10
    while time.time() < deadline and name not in watcher.metadata.keyspaces["cqlf"].tables:
        time.sleep(0.1)
    assert name in watcher.metadata.keyspaces["cqlf"].tables
    watcher.shutdown()
    other.shutdown()


def test_prepared_statements_survive_schema_changes(s):
    table = "cqlf.alt_" + uuid.uuid4().hex[:8]
    s.execute(f"CREATE TABLE {table} (k int PRIMARY KEY, a int)")
    ins = s.prepare(f"INSERT INTO {table} (k, a) VALUES (?, ?)")
    s.execute(ins, (1, 1))
    s.execute(f"ALTER TABLE {table} ADD b text")
    s.execute(ins, (2, 2))
    s.execute(f"INSERT INTO {table} (k, a, b) VALUES (3, 3, 'three')")
    rows = sorted((r.k, r.a, r.b) for r in s.execute(f"SELECT * FROM {table}"))
    assert rows == [(1, 1, None), (2, 2, None), (3, 3, "three")]


def test_named_bind_markers(s):
    s.execute("CREATE TABLE IF NOT EXISTS cqlf.named (k int PRIMARY KEY, v text)")
    ins = s.prepare("INSERT INTO cqlf.named (k, v) VALUES (:key, :val)")
    assert [c.name for c in ins.column_metadata] == ["key", "val"]
    s.execute(ins, {"val": "x", "key": 7})
    sel = s.prepare("SELECT v FROM cqlf.named WHERE k = :key")
    assert s.execute(sel, {"key": 7}).one().v == "x"


def test_counter_batch_and_unlogged_batch(s):
    from cassandra.query import BatchStatement, BatchType
    s.execute("CREATE TABLE IF NOT EXISTS cqlf.cb (k int PRIMARY KEY, a counter, b counter)")
    key = int(uuid.uuid4().int % 1_000_000)
    upd = s.prepare("UPDATE cqlf.cb SET a = a + ?, b = b + ? WHERE k = ?")
    batch = BatchStatement(batch_type=BatchType.COUNTER)
    for _ in range(3):
        batch.add(upd, (1, 10, key))
    s.execute(batch)
    assert tuple(s.execute("SELECT a, b FROM cqlf.cb WHERE k = %s", (key,)).one()) == (3, 30)
    s.execute("CREATE TABLE IF NOT EXISTS cqlf.ub (k int PRIMARY KEY, v int)")
    ins = s.prepare("INSERT INTO cqlf.ub (k, v) VALUES (?, ?)")
    batch = BatchStatement(batch_type=BatchType.UNLOGGED)
    for k in range(20):
        batch.add(ins, (k, k * k))
    s.execute(batch)
    assert sorted(tuple(r) for r in s.execute("SELECT k, v FROM cqlf.ub")) == [(k, k * k) for k in range(20)]
    from cassandra import InvalidRequest
    bad = BatchStatement(batch_type=BatchType.LOGGED)
    bad.add(upd, (1, 1, key))
    with pytest.raises(InvalidRequest, match="Cannot include a counter statement in a logged batch"):
        s.execute(bad)


def test_frozen_and_non_frozen_collections(s):
    s.execute("CREATE TABLE IF NOT EXISTS cqlf.coll (k int PRIMARY KEY, l list<int>, st set<text>, m map<text, int>, "
              "f frozen<map<int, frozen<list<text>>>>)")
    s.execute("INSERT INTO cqlf.coll (k, l, st, m, f) VALUES (1, [3, 1, 2], {'b', 'a'}, {'x': 1}, {1: ['a', 'b']})")
    s.execute("UPDATE cqlf.coll SET l = l + [4], st = st + {'c'}, m['y'] = 2 WHERE k = 1")
    s.execute("UPDATE cqlf.coll SET st = st - {'a'} WHERE k = 1")
    s.execute("DELETE m['x'] FROM cqlf.coll WHERE k = 1")
    r = s.execute("SELECT l, st, m, f FROM cqlf.coll WHERE k = 1").one()
    assert list(r.l) == [3, 1, 2, 4]
    assert sorted(r.st) == ["b", "c"]
    assert dict(r.m) == {"y": 2}
    assert {k: list(v) for k, v in r.f.items()} == {1: ["a", "b"]}
