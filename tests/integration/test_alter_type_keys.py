"""Frozen user types in clustering keys across ALTER TYPE ADD (issue 27, point 6): a value
written before the ALTER and the same value with the new fields null are one clustering, as
Cassandra's comparator holds them equal, and every row reads back from the memtable, after a
flush and after a compaction. Nested in tuples, collections and other user types, in ascending
and descending columns.

The expected values of the plain test were read from Apache Cassandra 5.0.4; the differential
test runs the same phases against Helenus and a reference Cassandra (refcass, as
test_differential.py finds it), flushing and compacting both between them, and is skipped
without Java or the script."""
import subprocess

from conftest import connect
from helenus_node import Node
from test_differential import REF_ADDR, REFCASS, mismatches
from test_differential import reference, sessions  # noqa: F401 (fixtures)
from test_guardrails import nodetool


def rows(session, statement):
    return [tuple(r) for r in session.execute(statement)]


def test_rows_written_before_alter_type_add_read_back_after_flush_compaction_and_restart():
    """The issue's scenario: a row before ALTER TYPE ADD, then the same clustering as JSON
    with the new field missing and null: one row, readable throughout (Cassandra 5.0.4), and
    still the same row after a restart (the type keeps which fields were added)."""
    node = Node().start()
    cluster, session = connect(node)
    try:
        session.execute("CREATE KEYSPACE ks WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.set_keyspace("ks")
        session.execute("CREATE TYPE ty (foo text)")
        session.execute("CREATE TABLE t (pk int, ck frozen<ty>, v int, PRIMARY KEY (pk, ck))")
        session.execute("INSERT INTO t (pk, ck, v) VALUES (0, {foo: 'foo'}, 1)")
        session.execute("INSERT INTO t (pk, ck, v) VALUES (0, {foo: 'zzz'}, 1)")
        session.execute("ALTER TYPE ty ADD bar text")
        session.execute("INSERT INTO t (pk, ck, v) VALUES (0, fromJson('{\"foo\": \"foo\"}'), 2)")
        session.execute("INSERT INTO t (pk, ck, v) VALUES (0, system.fromJson("
                        "'{\"foo\": \"foo\", \"bar\": null}'), 3)")
        session.execute("INSERT INTO t (pk, ck, v) VALUES (0, {foo: 'foo', bar: 'b'}, 4)")
        expected = [
            ('{"pk": 0, "ck": {"foo": "foo", "bar": null}, "v": 3}',),
            ('{"pk": 0, "ck": {"foo": "foo", "bar": "b"}, "v": 4}',),
            ('{"pk": 0, "ck": {"foo": "zzz", "bar": null}, "v": 1}',),
        ]
        for step in (None, "flush", "compact", "restart"):
            if step == "restart":
                cluster.shutdown()
                node.stop()
                cluster, session = connect(node.start())
                session.set_keyspace("ks")
            elif step:
                nodetool(node, step, "ks")
            assert rows(session, "SELECT JSON * FROM t WHERE pk = 0") == expected, step
            assert rows(session, "SELECT v FROM t WHERE pk = 0 AND ck = {foo: 'foo'}") == [(3,)]
            assert rows(session, "SELECT v FROM t WHERE pk = 0 AND ck > {foo: 'foo'}") == [
                (4,), (1,)]
        session.execute("INSERT INTO t (pk, ck, v) VALUES (0, {foo: 'foo', bar: null}, 5)")
        assert rows(session, "SELECT v FROM t WHERE pk = 0") == [(5,), (4,), (1,)]
    finally:
        cluster.shutdown()
        node.cleanup()


SHAPES = {
    # table: (clustering type, value before the ALTER, values after it)
    "plain": ("frozen<ty>", "{foo: 'foo'}",
              ["{foo: 'foo'}", "{foo: 'foo', bar: null}", "{foo: 'foo', bar: 'b'}",
               "{foo: 'foo', bar: ''}", "{foo: null, bar: 'b'}", "{bar: 'a'}",
               "{foo: 'foo', baz: 1}", "{foo: 'foo', bar: null, baz: null}"]),
    "tup": ("frozen<tuple<int, frozen<ty>>>", "(1, {foo: 'foo'})",
            ["(1, {foo: 'foo', bar: null})", "(1, {foo: 'foo', bar: 'b'})", "(1, null)"]),
    "lst": ("frozen<list<frozen<ty>>>", "[{foo: 'foo'}, {foo: 'x'}]",
            ["[{foo: 'foo', bar: null}, {foo: 'x'}]", "[{foo: 'foo', bar: 'b'}]",
             "[{foo: 'foo'}]"]),
    "st": ("frozen<set<frozen<ty>>>", "{{foo: 'foo'}}",
           ["{{foo: 'foo', bar: null}}", "{{foo: 'foo'}, {foo: 'foo', bar: null}}",
            "{{foo: 'foo', bar: 'b'}, {foo: 'foo'}}"]),
    "mp": ("frozen<map<frozen<ty>, int>>", "{{foo: 'foo'}: 1}",
           ["{{foo: 'foo', bar: null}: 1}", "{{foo: 'foo', bar: 'b'}: 1}"]),
    # `inner` ends where `wrap` ends: both may gain fields
    "wr": ("frozen<wrap>", "{n: 1, inner: {foo: 'foo'}}",
           ["{n: 1, inner: {foo: 'foo', bar: null}}", "{n: 1, inner: {foo: 'foo'}, m: 2}",
            "{n: 1, inner: {foo: 'foo', bar: 'b'}}", "{n: 1, inner: {foo: 'foo', bar: 'b'}, m: 2}"]),
}

BEFORE = [
    "CREATE TYPE ty (foo text)",
    "CREATE TYPE wrap (n int, inner frozen<ty>)",
    "CREATE TABLE dsc (pk int, c frozen<ty>, d int, v int, PRIMARY KEY (pk, c, d)) "
    "WITH CLUSTERING ORDER BY (c DESC, d ASC)",
    "INSERT INTO dsc (pk, c, d, v) VALUES (0, {foo: 'foo'}, 1, 0)",
    "INSERT INTO dsc (pk, c, d, v) VALUES (0, {foo: 'zzz'}, 1, 0)",
    "CREATE TABLE del (pk int, c frozen<ty>, v int, PRIMARY KEY (pk, c))",
    *[f"INSERT INTO del (pk, c, v) VALUES (0, {{foo: '{foo}'}}, 0)" for foo in "abcd"],
    # a tuple literal may leave out its last items: they are nulls, in one clustering
    "CREATE TABLE short (pk int, c frozen<tuple<int, text>>, v int, PRIMARY KEY (pk, c))",
    "INSERT INTO short (pk, c, v) VALUES (0, (1, null), 1)",
    "INSERT INTO short (pk, c, v) VALUES (0, (1), 2)",
    "CREATE TABLE reg (pk int PRIMARY KEY, r frozen<ty>)",
    "INSERT INTO reg (pk, r) VALUES (0, {foo: 'foo'})",
    *[f"CREATE TABLE {table} (pk int, c {ty}, v int, PRIMARY KEY (pk, c))"
      for table, (ty, _, _) in SHAPES.items()],
    *[f"INSERT INTO {table} (pk, c, v) VALUES (0, {value}, 0)"
      for table, (_, value, _) in SHAPES.items()],
]

ALTER = [
    "ALTER TYPE ty ADD bar text",
    "ALTER TYPE wrap ADD m int",
    "INSERT INTO plain (pk, c, v) VALUES (0, fromJson('{\"foo\": \"foo\"}'), 100)",
    "INSERT INTO plain (pk, c, v) VALUES (0, fromJson('{\"foo\": \"foo\", \"bar\": null}'), 101)",
    "INSERT INTO dsc (pk, c, d, v) VALUES (0, {foo: 'foo', bar: null}, 1, 1)",
    "INSERT INTO dsc (pk, c, d, v) VALUES (0, {foo: 'foo', bar: 'b'}, 1, 2)",
    "INSERT INTO dsc (pk, c, d, v) VALUES (0, {foo: 'foo', bar: 'b'}, 0, 3)",
    "INSERT INTO reg (pk, r) VALUES (1, {foo: 'foo', bar: null})",
    "INSERT INTO del (pk, c, v) VALUES (0, {foo: 'b', bar: 'x'}, 1)",
    "DELETE FROM del WHERE pk = 0 AND c = {foo: 'a', bar: null}",
    "DELETE FROM del WHERE pk = 0 AND c > {foo: 'b'} AND c <= {foo: 'c', bar: null}",
    "ALTER TYPE ty ADD baz int",
    *[f"INSERT INTO {table} (pk, c, v) VALUES (0, {value}, {i + 1})"
      for table, (_, _, values) in SHAPES.items() for i, value in enumerate(values)],
]

QUERIES = [
    *[f"SELECT c, v FROM {table}" for table in SHAPES],
    *[f"SELECT JSON c, v FROM {table}" for table in SHAPES],
    "SELECT * FROM dsc",
    "SELECT c, d FROM dsc WHERE pk = 0 ORDER BY c ASC, d DESC",
    "SELECT c, d, v FROM dsc WHERE pk = 0 AND c = {foo: 'foo'}",
    "SELECT c, d, v FROM dsc WHERE pk = 0 AND c < {foo: 'foo', bar: 'b'}",
    "SELECT c, d, v FROM dsc WHERE pk = 0 AND c >= {foo: 'foo', bar: null, baz: null}",
    "SELECT c, v FROM plain WHERE pk = 0 AND c > {foo: 'foo'}",
    "SELECT c, v FROM plain WHERE pk = 0 AND c >= {foo: 'foo'} AND c <= {foo: 'foo', bar: null}",
    "SELECT c, v FROM plain WHERE pk = 0 AND c IN ({foo: 'foo', bar: ''}, {foo: 'foo'})",
    "SELECT v FROM plain WHERE pk = 0 AND c = {foo: 'foo', bar: 'b', baz: null}",
    "SELECT v FROM plain WHERE pk = 0 AND (c) < ({foo: 'foo', baz: 1})",
    "SELECT v FROM tup WHERE pk = 0 AND c = (1, {foo: 'foo'})",
    "SELECT v FROM wr WHERE pk = 0 AND c > {n: 1, inner: {foo: 'foo'}, m: 2}",
    "SELECT c, v FROM short WHERE pk = 0 AND c = (1, null)",
    "SELECT c, v FROM del",
    "SELECT * FROM reg",
    "SELECT JSON * FROM reg",
]

# Partition keys: ALTER TYPE ADD is refused for a type a partition key uses, nested or not.
PARTITION_KEYS = [
    "CREATE TYPE kt (z int)",
    "CREATE TYPE holder (h frozen<kt>)",
    "CREATE TABLE pkt (k frozen<tuple<int, frozen<kt>>> PRIMARY KEY, v int)",
    "ALTER TYPE kt ADD y int",
    "DROP TABLE pkt",
    "CREATE TABLE pkh (k frozen<holder>, c int, PRIMARY KEY (k, c))",
    "ALTER TYPE kt ADD y int",
    "ALTER TYPE holder ADD y int",
]


def _both(node, *args):
    nodetool(node, *args)
    result = subprocess.run([REFCASS, "nodetool", "--addr", REF_ADDR, *args],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_clusterings_across_alter_type_add_as_cassandra(node, sessions):
    helenus, cassandra = sessions
    keyspace = helenus.keyspace
    report = mismatches(helenus, cassandra, BEFORE)
    _both(node, "flush", keyspace)
    report += mismatches(helenus, cassandra, ALTER + QUERIES)
    for step in ("flush", "compact"):
        _both(node, step, keyspace)
        report += [f"after {step}: {line}" for line in mismatches(helenus, cassandra, QUERIES)]
    report += mismatches(helenus, cassandra, PARTITION_KEYS)
    assert not report, "\n" + "\n".join(report)
