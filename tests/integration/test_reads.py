"""Reads that must not give wrong answers: pages resume where the previous one stopped (every row
once, static values on every page, forward and reverse, memtable and SSTables), deleted counters
stay deleted, frozen collections match whatever order their elements were bound in, decimal
keys follow Cassandra 5.0.4's rules, and prepared statements never write to a dropped table.
Expected results were checked against Apache Cassandra 5.0.4 (refcass)."""
import decimal
import subprocess
import threading

import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement

from conftest import connect
from helenus_node import BIN, Node

KS = "CREATE KEYSPACE IF NOT EXISTS rd WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"


@pytest.fixture(scope="module")
def node():
    n = Node().start()
    yield n
    n.cleanup()


@pytest.fixture(scope="module")
def s(node):
    cluster, session = connect(node)
    session.default_timeout = 60
    session.execute(KS)
    yield session
    cluster.shutdown()


def flush(node):
    out = subprocess.run([BIN, "nodetool", "-p", str(node.admin_port), "flush", "rd"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def rows_of(s, query, fetch_size, *params):
    return [tuple(r) for r in s.execute(SimpleStatement(query, fetch_size=fetch_size), params)]


@pytest.fixture(scope="module")
def wide(s, node):
    """Partition 0 of rd.wide written in three rounds (two flushed), with row deletions, a range
    deletion and a static value; partitions 1-4 hold 40 rows each. Returns the live rows of
    partition 0 as (c, v) in clustering order."""
    s.execute("CREATE TABLE rd.wide (k int, c int, s text STATIC, v int, PRIMARY KEY (k, c))")
    insert = s.prepare("INSERT INTO rd.wide (k, c, v) VALUES (?, ?, ?)")
    live = {}
    for rnd in range(3):
        for c in range(rnd, 600, 3):
            s.execute(insert, (0, c, rnd))
            live[c] = rnd
        for c in range(rnd, 600, 37):
            s.execute("DELETE FROM rd.wide WHERE k = 0 AND c = %s", (c,))
            live.pop(c, None)
        if rnd == 1:
            s.execute("DELETE FROM rd.wide WHERE k = 0 AND c >= 100 AND c < 150")
            for c in range(100, 150):
                live.pop(c, None)
            s.execute("UPDATE rd.wide SET s = 'static' WHERE k = 0")
        if rnd < 2:
            flush(node)
    for k in range(1, 5):
        s.execute(f"UPDATE rd.wide SET s = 'static {k}' WHERE k = {k}")
        for c in range(40):
            s.execute(insert, (k, c, k))
    return sorted(live.items())


@pytest.mark.parametrize("fetch_size", [7, 50, 1000])
def test_pages_resume_after_the_last_row_forward_and_reverse(s, wide, fetch_size):
    expected = [(0, c, "static", v) for c, v in wide]
    query = "SELECT k, c, s, v FROM rd.wide WHERE k = 0"
    assert rows_of(s, query, fetch_size) == expected
    assert rows_of(s, query + " ORDER BY c DESC", fetch_size) == expected[::-1]
    sliced = [r for r in expected if 90 <= r[1] < 400]
    assert rows_of(s, query + " AND c >= 90 AND c < 400", fetch_size) == sliced
    assert rows_of(s, query + " AND c >= 90 AND c < 400 ORDER BY c DESC", fetch_size) == sliced[::-1]


@pytest.mark.parametrize("fetch_size", [3, 33, 5000])
def test_range_scans_page_across_partitions_with_static_values_on_every_row(s, wide, fetch_size):
    rows = rows_of(s, "SELECT k, c, s FROM rd.wide", fetch_size)
    assert len(rows) == len(set(rows)) == len(wide) + 4 * 40
    assert all(r[2] == ("static" if r[0] == 0 else f"static {r[0]}") for r in rows)
    limited = rows_of(s, "SELECT k, c, s FROM rd.wide PER PARTITION LIMIT 5", fetch_size)
    assert len(limited) == 25
    assert all(r[2] is not None for r in limited)


def test_per_partition_limit_paging_keeps_static_values(s):
    s.execute("CREATE TABLE rd.ppl (k int, c int, s int STATIC, v int, PRIMARY KEY (k, c))")
    for k in range(3):
        s.execute("INSERT INTO rd.ppl (k, s) VALUES (%s, %s)", (k, 100 + k))
        for c in range(5):
            s.execute("INSERT INTO rd.ppl (k, c, v) VALUES (%s, %s, %s)", (k, c, c))
    for fetch_size in (1, 2, 4, None):
        rows = rows_of(s, "SELECT k, c, s FROM rd.ppl PER PARTITION LIMIT 3", fetch_size)
        assert sorted(rows) == [(k, c, 100 + k) for k in range(3) for c in range(3)], fetch_size


def test_paging_with_filtering_returns_every_match_once(s, wide):
    expected = [(c, v) for c, v in wide if v == 1]
    query = "SELECT c, v FROM rd.wide WHERE k = 0 AND v = 1 ALLOW FILTERING"
    for fetch_size in (5, 100):
        assert rows_of(s, query, fetch_size) == expected


def test_deleted_counter_reads_back_no_row(s):
    # Cassandra 5.0.4: the row is gone after DELETE; a later increment adds to the total kept
    # in its counter cache (-15 + 3 = -12); a deleted counter column stays deleted.
    s.execute("CREATE TABLE rd.cnt (k int PRIMARY KEY, n counter)")
    s.execute("UPDATE rd.cnt SET n = n - 15 WHERE k = 1")
    s.execute("DELETE FROM rd.cnt WHERE k = 1")
    assert list(s.execute("SELECT * FROM rd.cnt WHERE k = 1")) == []
    s.execute("UPDATE rd.cnt SET n = n + 3 WHERE k = 1")
    assert [tuple(r) for r in s.execute("SELECT k, n FROM rd.cnt WHERE k = 1")] == [(1, -12)]
    s.execute("CREATE TABLE rd.cnt2 (k int, c int, n counter, PRIMARY KEY (k, c))")
    s.execute("UPDATE rd.cnt2 SET n = n + 5 WHERE k = 1 AND c = 1")
    s.execute("DELETE FROM rd.cnt2 WHERE k = 1 AND c = 1")
    assert list(s.execute("SELECT * FROM rd.cnt2")) == []
    s.execute("UPDATE rd.cnt2 SET n = n + 2 WHERE k = 1 AND c = 1")
    s.execute("UPDATE rd.cnt2 SET n = n + 2 WHERE k = 1 AND c = 2")
    s.execute("DELETE n FROM rd.cnt2 WHERE k = 1 AND c = 2")
    s.execute("UPDATE rd.cnt2 SET n = n + 7 WHERE k = 1 AND c = 2")
    assert [tuple(r) for r in s.execute("SELECT k, c, n FROM rd.cnt2")] == [(1, 1, 7)]
    s.execute("BEGIN COUNTER BATCH UPDATE rd.cnt SET n = n + 1 WHERE k = 2; "
              "DELETE FROM rd.cnt WHERE k = 1; APPLY BATCH")
    assert [tuple(r) for r in s.execute("SELECT k, n FROM rd.cnt")] == [(2, 1)]


def test_frozen_collections_match_in_any_bound_order(s):
    s.execute("CREATE TABLE rd.fz (k frozen<set<int>>, c frozen<map<text, int>>, "
              "v frozen<list<frozen<set<int>>>>, PRIMARY KEY (k, c))")
    insert = s.prepare("INSERT INTO rd.fz (k, c, v) VALUES (?, ?, ?)")
    s.execute(insert, ([3, 1, 2], {"b": 2, "a": 1}, [[9, 4], [1]]))
    s.execute("INSERT INTO rd.fz (k, c, v) VALUES ({5, 4}, {'z': 0, 'y': 1}, [{2, 1}])")
    lookup = s.prepare("SELECT v FROM rd.fz WHERE k = ? AND c = ?")
    for k in ([1, 2, 3], [2, 3, 1], [3, 1, 2, 3]):
        row = s.execute(lookup, (k, {"a": 1, "b": 2})).one()
        assert row is not None and [sorted(x) for x in row.v] == [[4, 9], [1]], k
    assert s.execute(lookup, ([4, 5], {"y": 1, "z": 0})).one() is not None
    assert s.execute("SELECT v FROM rd.fz WHERE k = {2, 3, 1} AND c = {'b': 2, 'a': 1}").one() is not None
    assert s.execute(s.prepare("SELECT k FROM rd.fz WHERE k IN ?"), ([[5, 4], [2, 1, 3]],)).all()


def test_decimal_keys_equal_in_value_but_not_in_scale(s):
    # Cassandra 5.0.4: partition keys are hashed as serialized, so 1.0 and 1.00 are two
    # partitions and `k = 1` finds neither; clustering keys compare by value (BigDecimal
    # compareTo), so 1.0 and 1.00 are one row; filters compare by value too.
    s.execute("CREATE TABLE rd.dec (k decimal, c decimal, v int, PRIMARY KEY (k, c))")
    insert = s.prepare("INSERT INTO rd.dec (k, c, v) VALUES (?, ?, ?)")
    d = decimal.Decimal
    s.execute(insert, (d("1.0"), d("1.0"), 1))
    s.execute(insert, (d("1.00"), d("1.0"), 2))
    s.execute(insert, (d("1.0"), d("1.00"), 3))
    s.execute(insert, (d("1.0"), d("0.5"), 4))
    s.execute(insert, (d("1.0"), d("2.50"), 5))
    keys = sorted(str(r.k) for r in s.execute("SELECT DISTINCT k FROM rd.dec"))
    assert keys == ["1.0", "1.00"]
    assert list(s.execute("SELECT * FROM rd.dec WHERE k = 1")) == []
    rows = [(r.c, r.v) for r in s.execute("SELECT c, v FROM rd.dec WHERE k = 1.0")]
    assert rows == [(d("0.5"), 4), (d("1"), 3), (d("2.5"), 5)]
    assert [r.v for r in s.execute("SELECT v FROM rd.dec WHERE k = 1.0 AND c = 1.000")] == [3]
    assert [r.v for r in s.execute("SELECT v FROM rd.dec WHERE k = 1.0 AND c > 1")] == [5]
    filtered = s.execute("SELECT v FROM rd.dec WHERE c = 2.5000 ALLOW FILTERING")
    assert [r.v for r in filtered] == [5]


def test_prepared_batches_and_truncates_follow_a_table_created_again(s):
    for i in range(3):
        s.execute("DROP TABLE IF EXISTS rd.again")
        s.execute("CREATE TABLE rd.again (k int PRIMARY KEY, v int)")
        batch = s.prepare("BEGIN BATCH INSERT INTO rd.again (k, v) VALUES (?, ?); APPLY BATCH")
        s.execute(batch, (i, i))
        assert [tuple(r) for r in s.execute("SELECT k, v FROM rd.again")] == [(i, i)]
        s.execute(s.prepare("TRUNCATE rd.again"))
        assert list(s.execute("SELECT * FROM rd.again")) == []


def test_tables_written_as_soon_as_created_under_concurrent_schema_changes(node, s):
    """Threads create tables and write to them at once with prepared statements and batches,
    while another drops and re-creates a shared table that others keep preparing against:
    a write right after its CREATE never fails."""
    failures = []

    def session():
        cluster, sess = connect(node)
        sess.default_timeout = 120  # schema changes fsync; the machine may be busy
        return cluster, sess

    def own_tables(t):
        cluster, sess = session()
        try:
            for i in range(8):
                name = f"rd.own_{t}_{i}"
                sess.execute(f"CREATE TABLE {name} (k int PRIMARY KEY, v int)")
                sess.execute(sess.prepare(f"INSERT INTO {name} (k, v) VALUES (?, ?)"), (1, 1))
                sess.execute(sess.prepare(f"BEGIN BATCH INSERT INTO {name} (k, v) VALUES (?, ?); APPLY BATCH"), (2, 2))
                assert len(list(sess.execute(f"SELECT k FROM {name}"))) == 2
        except Exception as e:  # noqa: BLE001 - collected for the assertion below
            failures.append(f"own {t}: {e!r}")
        finally:
            cluster.shutdown()

    def recreate():
        cluster, sess = session()
        try:
            for i in range(8):
                sess.execute("DROP TABLE IF EXISTS rd.shared")
                sess.execute("CREATE TABLE rd.shared (k int PRIMARY KEY, v int)")
                batch = sess.prepare("BEGIN BATCH INSERT INTO rd.shared (k, v) VALUES (?, ?); APPLY BATCH")
                sess.execute(batch, (i, i))
        except Exception as e:  # noqa: BLE001
            failures.append(f"recreate: {e!r}")
        finally:
            cluster.shutdown()

    stop = threading.Event()

    def preparer():
        cluster, sess = session()
        try:
            while not stop.is_set():
                try:
                    batch = sess.prepare("BEGIN BATCH INSERT INTO rd.shared (k, v) VALUES (?, ?); APPLY BATCH")
                    sess.execute(batch, (1000, 0))
                except InvalidRequest:
                    pass  # the table is between its DROP and its CREATE
                except Exception:  # noqa: BLE001 - a write racing the DROP itself
                    pass
        finally:
            cluster.shutdown()

    workers = [threading.Thread(target=own_tables, args=(t,)) for t in range(2)]
    workers.append(threading.Thread(target=recreate))
    background = [threading.Thread(target=preparer) for _ in range(2)]
    for th in workers + background:
        th.start()
    for th in workers:
        th.join()
    stop.set()
    for th in background:
        th.join()
    assert failures == []
