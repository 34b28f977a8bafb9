"""Lightweight transactions against a reference Cassandra 5.0.4 (issue 31, points 1 and 2): the
same conditional INSERT, UPDATE, DELETE and BATCH statements run on one Helenus node and on
refcass (as test_differential.py finds it; skipped without Java or the script), compared by
their [applied] rows (columns, types, values) and their refusals (code and message).

The statements hold the forms the brief lists: IF NOT EXISTS, IF EXISTS, every comparison
operator, IN, CONTAINS, null semantics, conditions on list and map elements, UDT fields,
frozen and non-frozen collections and static columns, several conditions with AND, batches
on several rows of one partition (and the refusals of batches on several partitions or
tables), USING TIMESTAMP and counters refused."""
import re

from cassandra import ConsistencyLevel
from cassandra.cluster import NoHostAvailable
from cassandra.query import SimpleStatement

from test_differential import mismatches, outcome
from test_differential import reference, sessions  # noqa: F401 (fixtures)

STATEMENTS = [
    'CREATE TABLE t (k int, c int, s int static, v int, w text, PRIMARY KEY (k, c))',
    'INSERT INTO t (k, c, v) VALUES (1, 1, 10) IF NOT EXISTS',
    'INSERT INTO t (k, c, v) VALUES (1, 1, 11) IF NOT EXISTS',
    'INSERT INTO t (k, s) VALUES (1, 5) IF NOT EXISTS',
    'INSERT INTO t (k, s) VALUES (1, 6) IF NOT EXISTS',
    'INSERT INTO t (k, c, v) VALUES (1, 1, 11) IF NOT EXISTS',
    'INSERT INTO t (k, c, s, v) VALUES (1, 1, 7, 11) IF NOT EXISTS',
    'UPDATE t SET v = 12 WHERE k = 1 AND c = 1 IF v = 11',
    'UPDATE t SET v = 12 WHERE k = 1 AND c = 1 IF v = 10',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF w = null',
    "UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF w = 'a' AND v = 12",
    "UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF v = 1 AND w = 'a'",
    "UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF s = 1 AND w = 'a'",
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF s = 1 AND v = 1 AND s > 2',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 2 IF v = 1',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 2 IF v = null',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 3 IF EXISTS',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF EXISTS',
    'UPDATE t SET s = 13 WHERE k = 1 IF s = 1',
    'UPDATE t SET s = 13 WHERE k = 2 IF s = 1',
    'UPDATE t SET s = 13 WHERE k = 1 IF EXISTS',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF v > null',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF v IN (1, 13, null)',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF v IN (1, 2)',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF v < 1',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF v != 1',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF c = 1',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF k = 1',
    'UPDATE t USING TIMESTAMP 5 SET v = 13 WHERE k = 1 AND c = 1 IF v = 1',
    'INSERT INTO t (k, c, v) VALUES (1, 1, 11) IF NOT EXISTS USING TIMESTAMP 5',
    'UPDATE t SET v = 13 WHERE k IN (1, 2) AND c = 1 IF v = 1',
    'UPDATE t SET v = 13 WHERE k = 1 AND c IN (1, 2) IF v = 1',
    'DELETE FROM t WHERE k = 1 AND c = 1 IF v = 1',
    'DELETE FROM t WHERE k = 1 IF v = 1',
    'DELETE FROM t WHERE k = 1 IF s = 1',
    'DELETE FROM t WHERE k = 1 IF EXISTS',
    'DELETE FROM t WHERE k = 1 AND c > 0 IF EXISTS',
    'DELETE FROM t WHERE k = 1 AND c > 0 IF s = 1',
    'DELETE v FROM t WHERE k = 1 IF s = 1',
    'DELETE s FROM t WHERE k = 1 IF s = 1',
    'DELETE s FROM t WHERE k = 1 IF EXISTS',
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF x = 1',
    "UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF v = 'a'",
    'UPDATE t SET v = 13 WHERE k = 1 AND c = 1 IF v CONTAINS 1',
    'SELECT * FROM t',
    'CREATE TYPE u (a int, b text)',
    'CREATE TABLE c (k int PRIMARY KEY, m map<text,int>, l list<int>, st set<int>, u u, fu frozen<u>, fm frozen<map<text,int>>, fl frozen<list<int>>)',
    'CREATE TABLE cnt (k int PRIMARY KEY, n counter)',
    "INSERT INTO c (k, m, l, st, u, fu, fm, fl) VALUES (1, {'a': 1, 'b': 2}, [1, 2, 3], {5, 6}, {a: 1, b: 'x'}, {a: 2, b: 'y'}, {'z': 9}, [7, 8])",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF m['a'] = 1",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF m['a'] = 2",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF m['q'] = null",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF m['q'] > 1",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF m['a'] IN (5, 1)",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF l[0] = 1",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF l[1] = 5",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF l[10] = null",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF l[-1] = null",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF st[1] = null",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF fm['z'] = 9",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF fl[1] = 8",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF u.a = 1",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF u.a = 2 AND fu.b = 'y'",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF u.zz = 2",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF fu = {a: 2, b: 'y'}",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF u = {a: 1, b: 'x'}",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF u = {a: 1}",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF u > {a: 0, b: 'x'}",
    "UPDATE c SET m['c'] = 3 WHERE k = 1 IF m = {'a': 1, 'b': 2, 'c': 3}",
    "UPDATE c SET m['d'] = 3 WHERE k = 1 IF m > {'a': 1}",
    "UPDATE c SET m['e'] = 3 WHERE k = 1 IF m < {'a': 1}",
    "UPDATE c SET m['e'] = 3 WHERE k = 1 IF l = [1, 2, 3] AND st = {5, 6}",
    "UPDATE c SET m['e'] = 3 WHERE k = 1 IF l >= [1, 2] AND st < {7}",
    "UPDATE c SET m['e'] = 3 WHERE k = 1 IF l = null",
    "UPDATE c SET m['e'] = 3 WHERE k = 1 IF l != null",
    "UPDATE c SET m['e'] = 3 WHERE k = 1 IF l IN ([1], [1,2,3])",
    "UPDATE c SET m['e'] = 3 WHERE k = 1 IF l IN ([1], null)",
    "UPDATE c SET m['f'] = 3 WHERE k = 1 IF st CONTAINS 5",
    "UPDATE c SET m['f'] = 3 WHERE k = 1 IF m CONTAINS KEY 'a'",
    "UPDATE c SET m['f'] = 3 WHERE k = 1 IF fl = [7, 8] AND fm = {'z': 9}",
    "UPDATE c SET m['f'] = 3 WHERE k = 1 IF fl > [7] AND fm <= {'z': 9}",
    "UPDATE c SET l[0] = 4 WHERE k = 1 IF m['a'] = 0",
    'UPDATE c SET l[0] = 4 WHERE k = 1 IF EXISTS',
    "UPDATE c SET l = l - [2] WHERE k = 1 IF m['a'] = 0",
    "UPDATE c SET l[7] = 1 WHERE k = 1 IF EXISTS",
    "UPDATE c SET l[0] = 1 WHERE k = 2 IF EXISTS",
    "UPDATE c SET l = l - [9] WHERE k = 1 IF EXISTS",
    "DELETE l[1] FROM c WHERE k = 1 IF EXISTS",
    "SELECT l FROM c WHERE k = 1",
    'UPDATE cnt SET n = n + 1 WHERE k = 1 IF n = 1',
    'UPDATE cnt SET n = n + 1 WHERE k = 1 IF EXISTS',
    'UPDATE cnt SET n = n + 1 WHERE k = 1 IF n > 1 AND k = 1',
    'DELETE FROM cnt WHERE k = 1 IF EXISTS',
    'INSERT INTO c (k) VALUES (2) IF NOT EXISTS',
    'INSERT INTO c (k) VALUES (2) IF NOT EXISTS',
    'UPDATE c SET m = null WHERE k = 2 IF EXISTS',
    'INSERT INTO c (k) VALUES (2) USING TTL 100 IF NOT EXISTS',
    "UPDATE c SET m['c'] = 3 WHERE k = 2 IF m['a'] = 1",
    "UPDATE c SET m['c'] = 3 WHERE k = 2 IF m = {}",
    "UPDATE c SET m['c'] = 3 WHERE k = 2 IF m = null AND l[0] = null AND u.a = null",
    "UPDATE c SET m = m + {'g': 1} WHERE k = 1 IF m['a'] > 0 AND m['b'] > 5 AND l[0] = 1",
    'SELECT * FROM c',
    'CREATE TABLE b (k int, c int, s int static, v int, PRIMARY KEY (k, c))',
    'BEGIN BATCH INSERT INTO b (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS; INSERT INTO b (k, c, v) VALUES (1, 2, 2) IF NOT EXISTS; APPLY BATCH',
    'BEGIN BATCH INSERT INTO b (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS; INSERT INTO b (k, c, v) VALUES (1, 2, 2) IF NOT EXISTS; APPLY BATCH',
    'BEGIN BATCH INSERT INTO b (k, c, v) VALUES (1, 3, 1) IF NOT EXISTS; INSERT INTO b (k, c, v) VALUES (1, 2, 2) IF NOT EXISTS; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 5 WHERE k = 1 AND c = 1 IF v = 0; UPDATE b SET v = 5 WHERE k = 1 AND c = 2 IF v = 2; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 5 WHERE k = 1 AND c = 2 IF v = 2; UPDATE b SET v = 5 WHERE k = 1 AND c = 1 IF v = 0; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 5 WHERE k = 1 AND c = 1 IF v = 1; UPDATE b SET v = 6 WHERE k = 1 AND c = 2 IF v = 2; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 5 WHERE k = 1 AND c = 1 IF v = 1; UPDATE b SET v = 6 WHERE k = 2 AND c = 2 IF v = 2; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 5 WHERE k = 1 AND c = 1 IF v = 1; UPDATE t SET v = 6 WHERE k = 1 AND c = 2 IF v = 2; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 5 WHERE k = 1 AND c = 1 IF v = 1; UPDATE t SET v = 6 WHERE k = 1 AND c = 2; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 7 WHERE k = 1 AND c = 1 IF v = 5; UPDATE b SET v = 7 WHERE k = 1 AND c = 2; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 7 WHERE k = 1 AND c = 1 IF v = 5; UPDATE b SET v = 7 WHERE k = 1 AND c = 2; DELETE FROM b WHERE k = 1 AND c = 3; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF v = 7; UPDATE b SET s = 7 WHERE k = 1 IF s = null; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF v = 7; UPDATE b SET s = 7 WHERE k = 1 IF s = null; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF s = 1; UPDATE b SET v = 9 WHERE k = 1 AND c = 2 IF v = 7; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF v = 1; UPDATE b SET v = 9 WHERE k = 1 AND c = 1 IF v = 7; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF EXISTS; UPDATE b SET v = 9 WHERE k = 1 AND c = 1 IF v = 7; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF EXISTS; INSERT INTO b (k, c) VALUES (1, 1) IF NOT EXISTS; APPLY BATCH',
    'BEGIN BATCH INSERT INTO b (k, c) VALUES (1, 9) IF NOT EXISTS; INSERT INTO b (k, c) VALUES (1, 1) IF NOT EXISTS; APPLY BATCH',
    'BEGIN BATCH USING TIMESTAMP 5 UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF v = 1; APPLY BATCH',
    'BEGIN UNLOGGED BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF v = 1; APPLY BATCH',
    'BEGIN COUNTER BATCH UPDATE cnt SET n = n + 1 WHERE k = 1 IF EXISTS; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF v = 8; UPDATE b USING TIMESTAMP 3 SET v = 9 WHERE k = 1 AND c = 2; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF v = 8; UPDATE b SET v = 9 WHERE k = 1 AND c IN (2, 3); APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF v = 8; DELETE FROM b WHERE k = 1 AND c > 5; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF v = 8; DELETE FROM b WHERE k = 1; APPLY BATCH',
    'BEGIN BATCH UPDATE b SET v = 8 WHERE k = 1 AND c = 1 IF v = 8; UPDATE b SET v = 1 WHERE k = 1 AND c = 1; APPLY BATCH',
    'SELECT * FROM b',
]


def _answer(session, entry):
    """outcome(), with a server error (the driver's NoHostAvailable) without the node's address."""
    try:
        return outcome(session, entry)
    except NoHostAvailable as e:
        return ("error", "NoHostAvailable", re.sub(r"<Host: [^>]*>", "<Host>", str(e)))


def test_statement_count():
    assert len(STATEMENTS) >= 100


def test_same_lwt_answers_as_cassandra(sessions):
    helenus, cassandra = sessions
    report = mismatches(helenus, cassandra, STATEMENTS, answer=_answer)
    assert not report, "\n" + "\n".join(report)


SERIAL_SETUP = [
    "CREATE TABLE sr (k int, c int, v int, PRIMARY KEY (k, c))",
    "INSERT INTO sr (k, c, v) VALUES (1, 1, 1) IF NOT EXISTS",
    "INSERT INTO sr (k, c, v) VALUES (1, 2, 2)",
    "INSERT INTO sr (k, c, v) VALUES (2, 1, 3)",
]

# Read at SERIAL and LOCAL_SERIAL; a write at a serial consistency is refused.
SERIAL = [
    "SELECT * FROM sr WHERE k = 1",
    "SELECT * FROM sr WHERE k = 1 AND c = 2",
    "SELECT * FROM sr WHERE k IN (1, 2)",
    "SELECT count(*) FROM sr WHERE k = 1",
    "SELECT * FROM sr WHERE k = 3",
    "SELECT * FROM sr",
    "UPDATE sr SET v = 5 WHERE k = 1 AND c = 1",
    "UPDATE sr SET v = 5 WHERE k = 1 AND c = 1 IF v = 1",
]


def _at(session, statement, cl):
    try:
        rs = session.execute(SimpleStatement(statement, consistency_level=cl))
        return ("rows", tuple(rs.column_names or ()), sorted(rs))
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return ("error", type(e).__name__, getattr(e, "message", str(e)))


def test_same_serial_reads_as_cassandra(sessions):
    helenus, cassandra = sessions
    for statement in SERIAL_SETUP:
        helenus.execute(statement)
        cassandra.execute(statement)
    report = []
    for cl in (ConsistencyLevel.SERIAL, ConsistencyLevel.LOCAL_SERIAL):
        for statement in SERIAL:
            ours, theirs = _at(helenus, statement, cl), _at(cassandra, statement, cl)
            if ours != theirs:
                report += [f"MISMATCH {statement} at {cl}", f"  helenus:   {ours}",
                           f"  cassandra: {theirs}"]
    assert not report, "\n" + "\n".join(report)
