"""Collection and UDT operations (element, slice and field selectors, list operations by
index, UDT field updates, non-frozen UDTs) and ALTER TYPE / DROP TYPE, through the Python
driver.

The expected values in the plain tests were read from Apache Cassandra 5.0.4; the
differential test runs the statements below against Helenus and a reference Cassandra
(refcass, as test_differential.py finds it) and is skipped without Java or the script."""
import re

import pytest
from cassandra import InvalidRequest
from cassandra.query import UNSET_VALUE

from test_differential import mismatches
from test_differential import reference, sessions  # noqa: F401 (fixtures)
from test_json_functions import db  # noqa: F401 (fixture: a session on a fresh keyspace)


def error(session, statement):
    """The message of the InvalidRequest the statement fails with."""
    with pytest.raises(InvalidRequest) as raised:
        session.execute(statement)
    match = re.search(r'message="(.*)"$', str(raised.value), re.DOTALL)
    assert match, str(raised.value)
    return match.group(1)


def test_selectors_and_updates_of_elements_and_fields(db):
    session = db
    session.execute("CREATE TYPE addr (street text, zip int)")
    session.execute("CREATE TABLE c (k int PRIMARY KEY, l list<int>, m map<text, int>, u addr)")
    session.execute("INSERT INTO c (k, l, m, u) VALUES (1, [10, 20, 30], {'x': 1, 'y': 2}, "
                    "{street: 'Main', zip: 123})")
    row = session.execute("SELECT m['x'], m['y'..], u.street FROM c").one()
    assert tuple(row) == (1, {"y": 2}, "Main")
    assert error(session, "SELECT l[1] FROM c") == (
        "Element selection is only allowed on sets and maps, but l is a list")
    session.execute("UPDATE c SET l[1] = 99, u.zip = 456 WHERE k = 1")
    session.execute("DELETE l[0], u.street FROM c WHERE k = 1")
    lst, udt = session.execute("SELECT l, u FROM c").one()
    assert lst == [99, 30] and (udt.street, udt.zip) == (None, 456)
    assert error(session, "UPDATE c SET l[5] = 1 WHERE k = 1") == (
        "List index 5 out of bound, list has size 2")


def test_bound_keys_and_bounds_of_selections(db):
    """An unset slice bound leaves that end open; a null key or bound is refused before any
    row is read (the table is empty), as Cassandra 5.0.4 refuses them."""
    session = db
    session.execute("CREATE TABLE b (k int PRIMARY KEY, m map<text, int>)")
    session.execute("CREATE TABLE empty (k int PRIMARY KEY, m map<text, int>)")
    session.execute("INSERT INTO b (k, m) VALUES (1, {'a': 1, 'b': 2, 'c': 3})")
    prepared = session.prepare("SELECT m[?], m[?..?] FROM b WHERE k = 1")
    element, sliced = session.execute(prepared, ("b", UNSET_VALUE, "b")).one()
    assert element == 2 and dict(sliced) == {"a": 1, "b": 2}
    assert error(session, session.prepare("SELECT m[?] FROM empty").bind((None,))) == (
        "Invalid null value for element selection on m")
    assert error(session, session.prepare("SELECT m[?..'b'] FROM empty").bind((None,))) == (
        "Invalid null value for slice selection on m")


def test_alter_type_reaches_every_use_and_keeps_the_data(db):
    session, keyspace = db, db.keyspace
    session.execute("CREATE TYPE p (a int, b text)")
    session.execute("CREATE TYPE q (inner frozen<p>, n int)")
    session.execute("CREATE TABLE tp (k int PRIMARY KEY, fp frozen<p>, np p, fq frozen<q>)")
    session.execute("INSERT INTO tp (k, fp, np, fq) VALUES (1, {a: 1, b: 'x'}, {a: 2, b: 'y'}, "
                    "{inner: {a: 3, b: 'z'}, n: 4})")
    session.execute("ALTER TYPE p ADD c int")
    session.execute("ALTER TYPE p RENAME a TO aa AND b TO bb")
    session.execute("UPDATE tp SET np.c = 7 WHERE k = 1")
    row = session.execute("SELECT np.aa, np.c, fp.bb, fp.c, fq.inner FROM tp").one()
    assert tuple(row[:4]) == (2, 7, "x", None)
    assert (row[4].aa, row[4].bb, row[4].c) == (3, "z", None)
    assert error(session, "ALTER TYPE p RENAME aa TO c") == (
        f"Duplicate field name c in type {keyspace}")
    assert error(session, "ALTER TYPE p ADD x frozen<q>") == (
        f"Cannot add new field x of type frozen<{keyspace}.q> to user type {keyspace}.p as it "
        "would create a circular reference")
    assert error(session, "DROP TYPE p") == (
        f"Cannot drop user type '{keyspace}.p' as it is still used by user types q")
    session.execute("DROP TYPE IF EXISTS nosuch")
    session.execute("ALTER TYPE IF EXISTS nosuch ADD f int")


def test_a_type_in_a_partition_key_takes_no_new_field(db):
    session, keyspace = db, db.keyspace
    session.execute("CREATE TYPE kt (z int)")
    session.execute("CREATE TABLE tk (k frozen<kt> PRIMARY KEY, v int)")
    assert error(session, "ALTER TYPE kt ADD y int") == (
        f"Cannot add new field y of type int to user type {keyspace}.kt as the type is being "
        f"used in partition key by the following tables: {keyspace}.tk")
    assert error(session, "DROP TYPE kt") == (
        f"Cannot drop user type '{keyspace}.kt' as it is still used by tables tk")


STATEMENTS = [
    # element, slice and field selectors; list operations by index; UDT fields
    "CREATE TYPE addr (street text, zip int, tags frozen<set<text>>)",
    "CREATE TABLE c (k int PRIMARY KEY, l list<int>, s set<text>, m map<text, int>, "
    "fm frozen<map<int, text>>, u addr, fu frozen<addr>, fl frozen<list<int>>)",
    "INSERT INTO c (k, l, s, m, fm, u, fu, fl) VALUES (1, [10, 20, 30], {'a', 'b', 'c'}, "
    "{'x': 1, 'y': 2, 'z': 3}, {1: 'one', 2: 'two'}, {street: 'Main', zip: 123}, "
    "{street: 'F', zip: 1, tags: {'t'}}, [7, 8])",
    "SELECT m['x'], m['nope'], s['b'], s['q'], l[1], fm[2], fl[0] FROM c",
    "SELECT m['x'..'y'], m[..'y'], m['y'..], s['b'..], fm[1..1] FROM c",
    "SELECT u.street, u.zip, u.tags, fu.tags, fu.street FROM c",
    "SELECT u.nosuch FROM c",
    "SELECT k.x FROM c",
    "SELECT l['a'] FROM c",
    "SELECT m[1] FROM c",
    "SELECT ttl(u.street) FROM c",
    "UPDATE c SET l[1] = 99 WHERE k = 1",
    "UPDATE c SET l[5] = 99 WHERE k = 1",
    "DELETE l[0] FROM c WHERE k = 1",
    "SELECT l FROM c",
    "UPDATE c SET l = l - [30] WHERE k = 1",
    "SELECT l FROM c",
    "UPDATE c SET u.zip = 456, u.street = 'Side' WHERE k = 1",
    "UPDATE c SET u.nosuch = 1 WHERE k = 1",
    "UPDATE c SET fu.zip = 1 WHERE k = 1",
    "DELETE u.street FROM c WHERE k = 1",
    "SELECT u FROM c",
    "UPDATE c SET u = {zip: 7} WHERE k = 1",
    "SELECT u, u.street FROM c",
    "INSERT INTO c (k, u) VALUES (2, {street: 'two'})",
    "UPDATE c SET m['w'] = 4 WHERE k = 2",
    "SELECT k, u, m FROM c",
    "DELETE m['w'] FROM c WHERE k = 2",
    "UPDATE c SET s = s - {'a'} WHERE k = 1",
    "SELECT * FROM c",
    # selections compose with JSON, aliases, functions and GROUP BY; times of elements and fields
    "CREATE TABLE ts (k int, c int, m map<int, text>, u addr, s set<int>, PRIMARY KEY (k, c))",
    "INSERT INTO ts (k, c, m, u, s) VALUES (1, 1, {-1: 'a', 2: 'b'}, {zip: 5}, {-3, 4}) "
    "USING TIMESTAMP 100",
    "UPDATE ts USING TIMESTAMP 200 SET m[3] = 'c', u.street = 's' WHERE k = 1 AND c = 1",
    "INSERT INTO ts (k, c, m, u) VALUES (1, 2, {5: 'e'}, {zip: 6}) USING TIMESTAMP 300",
    "SELECT m, s, u FROM ts",
    "SELECT writetime(m), writetime(m[3]), writetime(m[-1]), writetime(m[2..]), writetime(m[7]), "
    "maxwritetime(m), writetime(u.street), writetime(u.zip), writetime(u.tags), writetime(s[4]), "
    "writetime(s[9..]) FROM ts",
    "SELECT ttl(m[3]), ttl(u.zip) FROM ts",
    "SELECT JSON m[2], u.zip AS z, m[..2] FROM ts",
    "SELECT k, max(u.zip), min(m[3]), count(m[-1]) FROM ts GROUP BY k",
    "SELECT k, c, u.zip FROM ts GROUP BY k, c",
    "SELECT toJson(m[-1..2]), abs(u.zip), u.zip + 1, m[3] AS three FROM ts",
    "SELECT map_keys(m)[2], u.nosuch FROM ts",
    "INSERT INTO ts JSON '{\"k\": 2, \"c\": 1, \"u\": {\"zip\": 9, \"street\": null}}'",
    "SELECT u, u.zip, writetime(u.street) FROM ts WHERE k = 2",
    # ALTER TYPE and DROP TYPE
    "CREATE TYPE a (x int)",
    "CREATE TYPE b (y frozen<a>)",
    "CREATE TYPE cc (z int)",
    "CREATE TABLE t1 (k int PRIMARY KEY, v frozen<a>, n cc)",
    "CREATE TABLE t2 (k frozen<cc> PRIMARY KEY, v int)",
    "CREATE TABLE t3 (k int, ck frozen<a>, PRIMARY KEY (k, ck))",
    "INSERT INTO t1 (k, v, n) VALUES (1, {x: 1}, {z: 2})",
    "ALTER TYPE a ADD w text",
    "ALTER TYPE a ADD w text",
    "ALTER TYPE a ADD IF NOT EXISTS w text",
    "ALTER TYPE a ADD x int",
    "ALTER TYPE a ADD q counter",
    "ALTER TYPE a ADD self frozen<a>",
    "ALTER TYPE a ADD l list<int>",
    "ALTER TYPE a ADD fl frozen<list<int>>",
    "ALTER TYPE cc ADD nl list<int>",
    "ALTER TYPE cc ADD q2 int",
    "ALTER TYPE a ADD nested b",
    "ALTER TYPE a ADD nested frozen<b>",
    "ALTER TYPE a ADD z nosuchtype",
    "ALTER TYPE a ADD z frozen<nosuchtype>",
    "SELECT * FROM t1",
    "SELECT v.w, v.x, n.q2 FROM t1",
    "ALTER TYPE a RENAME x TO xx",
    "ALTER TYPE a RENAME nosuch TO y",
    "ALTER TYPE a RENAME IF EXISTS nosuch TO y",
    "ALTER TYPE a RENAME xx TO w",
    "ALTER TYPE a RENAME xx TO x1 AND w TO w1",
    "ALTER TYPE a RENAME x1 TO x2 AND x1 TO x3",
    "ALTER TYPE a RENAME x2 TO x2",
    "ALTER TYPE a RENAME x3 TO y AND y TO z",
    "SELECT * FROM t1",
    "SELECT v.x3, v.w1 FROM t1",
    "ALTER TYPE nosuch ADD f int",
    "ALTER TYPE IF EXISTS nosuch ADD f int",
    "ALTER TYPE a ALTER x3 TYPE bigint",
    "ALTER TYPE system.a ADD f int",
    "ALTER TYPE nosuchks.a ADD f int",
    "DROP TYPE a",
    "DROP TYPE cc",
    "DROP TYPE b",
    "DROP TYPE nosuch",
    "DROP TYPE IF EXISTS nosuch",
    "DROP TYPE nosuchks.a",
    "DROP TYPE system.a",
    "DROP TABLE t3",
    "DROP TYPE a",
    "DROP TABLE t1",
    "DROP TYPE a",
    "DROP TABLE t2",
    "DROP TYPE cc",
    "CREATE TYPE d (f int)",
    "CREATE TYPE e (c counter)",
    "CREATE TYPE e2 (u d)",
    "ALTER TYPE d ADD \"Quoted\" int",
    "ALTER TYPE d RENAME \"Quoted\" TO \"Other\"",
    "ALTER TYPE d ADD v vector<int, 2>",
    "ALTER TYPE d ADD t tuple<int, text>",
    "DESCRIBE TYPE d",
    "CREATE TYPE p (a int, b text)",
    "CREATE TYPE q (inner frozen<p>, n int)",
    "CREATE TABLE tp (k int PRIMARY KEY, fp frozen<p>, np p, fq frozen<q>, lp list<frozen<p>>)",
    "INSERT INTO tp (k, fp, np, fq, lp) VALUES (1, {a: 1, b: 'x'}, {a: 2, b: 'y'}, "
    "{inner: {a: 3, b: 'z'}, n: 4}, [{a: 5}])",
    "ALTER TYPE p ADD c int",
    "SELECT * FROM tp",
    "SELECT np.c, fp.c, fq.inner FROM tp",
    "UPDATE tp SET np.c = 7 WHERE k = 1",
    "INSERT INTO tp (k, fp, np, fq) VALUES (2, {a: 1, b: 'x', c: 3}, {c: 9}, {inner: {c: 8}})",
    "ALTER TYPE p RENAME a TO aa AND b TO bb",
    "SELECT * FROM tp",
    "SELECT np.aa, fp.bb, fq.inner.aa FROM tp",
    "SELECT np.a FROM tp",
    "UPDATE tp SET np.aa = 11 WHERE k = 1",
    "INSERT INTO tp (k, fp) VALUES (3, {a: 1})",
    "DESCRIBE TABLE tp",
    "DESCRIBE TYPE q",
    "DROP TYPE p",
    "DROP TABLE tp",
    "DROP TYPE q",
    "DROP TYPE p",
    # a field declared as a non-frozen collection stays one; a table may not use the type
    # non-frozen, though ALTER TYPE may add such a field to a type a table uses so
    "CREATE TYPE nc (a int, l list<int>, s set<text>, m map<int, text>, fl frozen<list<int>>)",
    "CREATE TYPE nc2 (m map<int, list<int>>)",
    "CREATE TYPE nc3 (m map<int, frozen<list<int>>>, n frozen<nc>)",
    "DESCRIBE TYPE nc",
    "DESCRIBE TYPE nc3",
    "CREATE TABLE tn (k int PRIMARY KEY, v nc)",
    "CREATE TABLE tn (k int, c int, v nc static, PRIMARY KEY (k, c))",
    "CREATE TABLE tn (k int PRIMARY KEY, v frozen<nc>, w nc3, x list<frozen<nc>>)",
    "ALTER TABLE tn ADD y nc",
    "ALTER TABLE tn ADD y frozen<nc>",
    "INSERT INTO tn (k, v, w) VALUES (1, {a: 1, l: [3, 1], s: {'b', 'a'}, m: {2: 'x'}}, "
    "{m: {1: [2]}, n: {l: [4]}})",
    "SELECT v, v.l, v.s, v.m, w.n.l FROM tn",
    "SELECT JSON v FROM tn",
    "UPDATE tn SET v.l = [1] WHERE k = 1",
    "CREATE TYPE plain (a int)",
    "CREATE TABLE tq (k int PRIMARY KEY, p plain)",
    "ALTER TYPE plain ADD l list<int>",
    "DESCRIBE TYPE plain",
    "SELECT * FROM tq",
    "INSERT INTO tq (k, p) VALUES (1, {a: 1, l: [2, 1]})",
    "UPDATE tq SET p.l = [3] WHERE k = 2",
    "SELECT k, p, p.l FROM tq",
    "DROP TABLE tq",
    "DROP TABLE tn",
    "DROP TYPE plain",
    "DROP TYPE nc3",
    "DROP TYPE nc",
]


def test_same_collection_and_type_operations_as_cassandra(sessions):
    helenus, cassandra = sessions
    report = mismatches(helenus, cassandra, STATEMENTS)
    assert not report, "\n" + "\n".join(report)
