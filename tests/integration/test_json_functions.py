"""JSON (SELECT JSON, INSERT JSON, toJson, fromJson), native functions, CAST, arithmetic and
GROUP BY, through the Python driver.

The expected values in the plain tests were read from Apache Cassandra 5.0.4. The differential
test runs a longer list of statements against Helenus and a reference Cassandra (refcass, as
test_differential.py finds it) and compares columns, types, rows, warnings and errors; it is
skipped when Java or the refcass script is missing."""
import re
import uuid
from decimal import Decimal

import pytest
from cassandra import InvalidRequest
from cassandra.cluster import NoHostAvailable
from cassandra.protocol import FunctionFailure, ServerError
from cassandra.query import SimpleStatement

from test_differential import differences, fresh_keyspace, outcome
from test_differential import reference, sessions  # noqa: F401 (fixtures)

JSON_PARSE = "com.fasterxml.jackson.core.JsonParseException"
JSON_EOF = "com.fasterxml.jackson.core.io.JsonEOFException"


@pytest.fixture(scope="module")
def db(node):
    """A session on a fresh keyspace of the node (protocol v5)."""
    yield from fresh_keyspace(node, "jf")


def rows(session, statement, *values):
    return list(session.execute(statement, values or None))


def error(session, statement, *values):
    """The message of the error the statement fails with."""
    with pytest.raises((InvalidRequest, FunctionFailure)) as raised:
        session.execute(statement, values or None)
    match = re.search(r'message="(.*)"$', str(raised.value), re.DOTALL)
    assert match, str(raised.value)
    return match.group(1)


def test_select_json_writes_each_types_text_as_cassandra(db):
    db.execute("CREATE TABLE types (k int PRIMARY KEY, a ascii, b bigint, bl blob, bo boolean, "
               "d date, de decimal, db double, du duration, f float, i inet, ts timestamp, "
               "tu timeuuid, vi varint, ve vector<float, 3>, m map<int, text>, "
               "t tuple<int, text>, \"Mixed\" int)")
    db.execute("INSERT INTO types (k, a, b, bl, bo, d, de, db, du, f, i, ts, tu, vi, ve, m, t, "
               "\"Mixed\") VALUES (1, 'as\"c', 9223372036854775807, 0xcafe, true, '2024-02-29', "
               "123.456, 1.5e300, 1h2m3s, 3.25, '::1', '2024-01-01 12:00:00.5+0000', "
               "50554d6e-29bb-11e5-b345-feff819cdc9f, 123456789012345678901234567890, "
               "[1.5, -2, 0], {2: 'two', 1: 'one'}, (1, 'x'), 7)")
    (json,), = rows(db, "SELECT JSON * FROM types")
    assert json == (
        '{"k": 1, "\\"Mixed\\"": 7, "a": "as\\"c", "b": 9223372036854775807, "bl": "0xcafe", '
        '"bo": true, "d": "2024-02-29", "db": 1.5E300, "de": 123.456, "du": "1h2m3s", "f": 3.25, '
        '"i": "0:0:0:0:0:0:0:1", "m": {"1": "one", "2": "two"}, "t": [1, "x"], '
        '"ts": "2024-01-01 12:00:00.500Z", "tu": "50554d6e-29bb-11e5-b345-feff819cdc9f", '
        '"ve": [1.5, -2.0, 0.0], "vi": 123456789012345678901234567890}')
    result = db.execute('SELECT JSON k, "Mixed" AS "Alias", toJson(m), count(*) FROM types')
    assert result.column_names == ["[json]"]
    assert list(result)[0][0] == (
        '{"k": 1, "\\"Alias\\"": 7, "system.tojson(m)": "{\\"1\\": \\"one\\", \\"2\\": \\"two\\"}", '
        '"count": 1}')


def test_insert_json_defaults_to_null_or_leaves_columns_unset(db):
    db.execute("CREATE TABLE doc (k int, c text, v int, w text, PRIMARY KEY (k, c))")
    db.execute("""INSERT INTO doc JSON '{"k": 1, "c": "a", "v": 1, "w": "x"}'""")
    db.execute("""INSERT INTO doc JSON '{"k": 1, "c": "a", "v": 2}' DEFAULT UNSET""")
    assert rows(db, "SELECT v, w FROM doc WHERE k = 1") == [(2, "x")]
    db.execute("""INSERT INTO doc JSON '{"k": 1, "c": "a", "v": 3}'""")
    assert rows(db, "SELECT v, w FROM doc WHERE k = 1") == [(3, None)]
    prepared = db.prepare("INSERT INTO doc JSON ? DEFAULT UNSET")
    db.execute(prepared, ['{"K": 2, "c": "b", "w": "y"}'])
    db.execute(prepared, ['{"k": 2, "c": "b", "v": 5}'])
    assert rows(db, "SELECT JSON * FROM doc WHERE k = 2") == [
        ('{"k": 2, "c": "b", "v": 5, "w": "y"}',)]


def test_insert_json_errors_are_cassandras(db):
    db.execute("CREATE TABLE bad (k int PRIMARY KEY, l list<int>)")
    assert error(db, """INSERT INTO bad JSON '{"k": 1, "nosuch": 2}'""") == (
        "JSON values map contains unrecognized column: nosuch")
    assert error(db, """INSERT INTO bad JSON '{"k": 1.5}'""") == (
        "Error decoding JSON value for k: Expected an int value, but got a Double: 1.5")
    assert error(db, "INSERT INTO bad JSON '{\"k\": 1, \"l\": [1,'") == (
        f"Could not decode JSON string as a map: {JSON_PARSE}: Unexpected end-of-input "
        "within/between Array entries\n at [Source: (String)\"{\"k\": 1, \"l\": [1,\"; line: 1, "
        "column: 18]. (String was: {\"k\": 1, \"l\": [1,)")
    assert error(db, "INSERT INTO bad JSON '{\"k\": [1}'") == (
        f"Could not decode JSON string as a map: {JSON_PARSE}: Unexpected close marker '}}': "
        "expected ']' (for Array starting at [Source: (String)\"{\"k\": [1}\"; line: 1, "
        "column: 7])\n at [Source: (String)\"{\"k\": [1}\"; line: 1, column: 10]. "
        "(String was: {\"k\": [1})")
    assert error(db, "INSERT INTO bad JSON 'null'") == "Got null for INSERT JSON values"


def test_fromjson_and_tojson_round_trip_and_fail_as_cassandra(db):
    db.execute("CREATE TABLE fj (k int PRIMARY KEY, l list<int>, t text)")
    db.execute("INSERT INTO fj (k, l, t) VALUES (fromJson('1'), fromJson('[3, 1]'), fromJson('\"é\"'))")
    assert rows(db, "SELECT toJson(l), toJson(t), toJson(k) FROM fj") == [('[3, 1]', '"é"', '1')]
    assert error(db, "INSERT INTO fj (k, t) VALUES (2, fromJson('{'))") == (
        f"execution of 'system.fromjson[text]' failed: Could not decode JSON string '{{': "
        f"{JSON_EOF}: Unexpected end-of-input: expected close marker for Object (start marker at "
        "[Source: (String)\"{\"; line: 1, column: 1])\n at [Source: (String)\"{\"; line: 1, "
        "column: 2]")
    assert error(db, "INSERT INTO fj (k, l) VALUES (2, fromJson('1'))") == (
        "org.apache.cassandra.serializers.MarshalException: Expected a list, but got a Integer: 1")
    assert error(db, "SELECT fromJson(t) FROM fj") == (
        "fromjson() cannot be used in the selection clause of a SELECT statement")


def test_functions_arithmetic_and_casts_give_cassandras_values(db):
    db.execute("CREATE TABLE n (k int PRIMARY KEY, i int, de decimal, f float, ts timestamp, "
               "tx text, a ascii, v vector<float, 3>)")
    db.execute("INSERT INTO n (k, i, de, f, ts, tx, a, v) VALUES (1, 2147483647, 10.50, 1.5, "
               "'2024-03-31 10:00:00Z', 'hello', 'abc', [1, 2, 2])")
    assert rows(db, "SELECT i + 1, de / 3, de * 2, tx + 'x', a + 'y', a + 'é' FROM n") == [
        (-2147483648, Decimal("3.5"), Decimal("21.000"), "hellox", "abcy", "abcé")]
    result = db.execute("SELECT CAST(ts AS text), CAST(f AS decimal), CAST(i AS int), "
                        "toDate(ts), toUnixTimestamp(ts), similarity_cosine(v, [1, 2, 3]) FROM n")
    assert result.column_names == ["cast(ts as text)", "cast(f as decimal)", "i",
                                   "system.todate(ts)", "system.tounixtimestamp(ts)",
                                   "system.similarity_cosine(v, [1, 2, 3])"]
    (row,) = list(result)
    assert row[0] == "2024-03-31T10:00:00.000Z" and str(row[1]) == "1.5" and row[2] == 2147483647
    assert row[4] == 1711879200000 and abs(row[5] - 0.9899789) < 1e-6
    assert error(db, "SELECT CAST(tx AS blob) FROM n") == "tx cannot be cast to blob"
    assert error(db, "SELECT i / 0 FROM n") == "the operation 'int / int' failed: / by zero"
    assert error(db, "SELECT nosuch(i) FROM n") == "Unknown function 'nosuch'"
    assert error(db, "INSERT INTO n (k, i) VALUES (2, nosuch())") == "Unknown function nosuch called"


def test_masking_a_timeuuid_is_described_as_the_legacy_custom_type(db):
    """Cassandra 5.0.4 quirk: min/max/mask_* of a timeuuid report LegacyTimeUUIDType."""
    db.execute("CREATE TABLE tu (k int PRIMARY KEY, t timeuuid)")
    db.execute("INSERT INTO tu (k, t) VALUES (1, 50554d6e-29bb-11e5-b345-feff819cdc9f)")
    result = db.execute("SELECT mask_default(t), min(t), toJson(min(t)) FROM tu")
    types = [t.cql_parameterized_type() for t in result.column_types]
    assert types[:2] == ["'org.apache.cassandra.db.marshal.LegacyTimeUUIDType'"] * 2
    (row,) = list(result)
    assert row[0] == uuid.UUID("13814000-1dd2-11b2-8080-808080808080").bytes
    assert row[2] == '"50554d6e-29bb-11e5-b345-feff819cdc9f"'


def test_group_by_pages_between_groups_and_warns(db):
    db.execute("CREATE TABLE g (p int, c1 int, c2 int, v int, PRIMARY KEY (p, c1, c2))")
    for p, c1, c2 in [(1, 1, 1), (1, 1, 2), (1, 2, 1), (1, 3, 1), (2, 1, 1)]:
        db.execute("INSERT INTO g (p, c1, c2, v) VALUES (%s, %s, %s, %s)", (p, c1, c2, c1 * 10 + c2))
    statement = SimpleStatement("SELECT p, c1, count(*), sum(v) FROM g GROUP BY p, c1", fetch_size=2)
    result = db.execute(statement)
    assert result.response_future.warnings == ["Aggregation query used without partition key"]
    assert list(result) == [(1, 1, 2, 23), (1, 2, 1, 21), (1, 3, 1, 31), (2, 1, 1, 11)]
    assert error(db, "SELECT count(*) FROM g GROUP BY c1") == (
        "Group by currently only support groups of columns following their declared order in the "
        "PRIMARY KEY")


# --- differential: the same statements against a reference Cassandra 5.0.4 -------------------

STATEMENTS = [
    # SELECT JSON / toJson of every type, quoting of keys
    "CREATE TABLE t (k int PRIMARY KEY, a ascii, b bigint, bl blob, bo boolean, d date, de decimal, "
    "db double, du duration, f float, i inet, ii int, si smallint, tx text, ti time, ts timestamp, "
    "tu timeuuid, ty tinyint, u uuid, vi varint, ve vector<float, 3>, l list<int>, s set<text>, "
    "m map<text, int>, fm frozen<map<int, text>>, tp tuple<int, text>, \"Mixed\" int)",
    "INSERT INTO t (k, a, b, bl, bo, d, de, db, du, f, i, ii, si, tx, ti, ts, tu, ty, u, vi, ve, l, s, "
    "m, fm, tp, \"Mixed\") VALUES (1, 'as\"c', 9223372036854775807, 0xcafe, true, '2024-02-29', "
    "123.456, 1.5e300, 1h2m3s, 3.25, '::1', -42, 32767, 'text é\n', '13:45:00.123456789', "
    "'2024-01-01 12:00:00.5+0000', 50554d6e-29bb-11e5-b345-feff819cdc9f, -128, "
    "01234567-0123-0123-0123-0123456789ab, 123456789012345678901234567890, [1.5, -2, 0], [1,2], "
    "{'b','a'}, {'x': 1}, {1: 'one', 2: 'two'}, (1, 'x'), 7)",
    "INSERT INTO t (k) VALUES (2)",
    "SELECT JSON * FROM t",
    "SELECT JSON k, \"Mixed\", tojson(m), ii AS \"Alias\", ii AS lower FROM t WHERE k = 1",
    "SELECT k, toJson(a), toJson(b), toJson(bl), toJson(bo), toJson(d), toJson(de), toJson(db), "
    "toJson(du) FROM t",
    "SELECT toJson(f), toJson(i), toJson(ii), toJson(si), toJson(tx), toJson(ti), toJson(ts), "
    "toJson(tu) FROM t",
    "SELECT toJson(ty), toJson(u), toJson(vi), toJson(ve), toJson(l), toJson(s), toJson(m), "
    "toJson(fm), toJson(tp) FROM t",
    "SELECT JSON count(*) FROM t",
    "SELECT JSON DISTINCT k FROM t",
    # INSERT JSON, DEFAULT NULL / UNSET, reading of each type
    "INSERT INTO t JSON '{\"k\": 3, \"ii\": 5, \"tx\": \"hello\", \"l\": [1, 2], \"m\": {\"a\": 1}, "
    "\"fm\": {\"3\": \"x\"}, \"\\\"Mixed\\\"\": 9}'",
    "SELECT JSON k, ii, tx, l, m, fm, \"Mixed\" FROM t WHERE k = 3",
    "INSERT INTO t JSON '{\"k\": 3, \"ii\": 6}' DEFAULT UNSET",
    "SELECT k, ii, tx FROM t WHERE k = 3",
    "INSERT INTO t JSON '{\"k\": 3, \"ii\": 7}'",
    "SELECT k, ii, tx FROM t WHERE k = 3",
    "INSERT INTO t JSON '{\"K\": 5, \"ii\": \"12\"}'",
    "INSERT INTO t JSON '{\"k\": 6, \"b\": \"12\", \"de\": \"1.5\", \"db\": \"NaN\", \"f\": 1}'",
    "INSERT INTO t JSON '{\"k\": 7, \"ts\": 1000, \"d\": 0, \"ti\": 1000, \"i\": \"127.0.0.1\", "
    "\"bl\": \"0x00ff\", \"bo\": \"true\", \"du\": \"1d\"}'",
    "INSERT INTO t JSON '{\"k\": 8, \"s\": [\"a\", \"a\"], \"l\": null, \"tp\": [1, \"y\"], "
    "\"ve\": [1, 2, 3]}'",
    "SELECT k, ii, b, de, db, f, ts, d, ti, i, bl, bo, du, s, l, tp, ve FROM t WHERE k IN (5, 6, 7, 8)",
    "INSERT INTO t JSON '{\"k\": 4, \"nosuch\": 1}'",
    "INSERT INTO t JSON '{\"k\": \"x\"}'",
    "INSERT INTO t JSON '{\"k\": 4, \"Mixed\": 1}'",
    "INSERT INTO t JSON '{\"k\": 6, \"ii\": 1.5}'",
    "INSERT INTO t JSON '{\"k\": 6, \"ii\": 3000000000}'",
    "INSERT INTO t JSON '{\"k\": 8, \"ts\": \"2024-01-01 10:00:00+0100\", \"bl\": \"00ff\"}'",
    "INSERT INTO t JSON '{\"k\": 9, \"ve\": [1, 2]}'",
    "INSERT INTO t JSON '{\"k\": 9, \"tp\": [1]}'",
    "INSERT INTO t JSON '{\"k\": 9, \"m\": {\"a\": null}}'",
    "INSERT INTO t JSON '{\"k\": 9, \"s\": [null]}'",
    "INSERT INTO t JSON '{}'",
    "INSERT INTO t JSON '{\"k\": null}'",
    "INSERT INTO t JSON null",
    # malformed documents: Jackson's messages and locations
    *[f"INSERT INTO t JSON '{doc}'" for doc in [
        "{", "{\"k\"", "{\"k\":", "{\"k\": 1", "{\"k\": 1,", "{\"k\": 1 \"v\": 2}", "{k: 1}",
        "{\"k\" 1}", "{\"k\": 1, \"l\": [1 2]}", "{\"k\": 1, \"l\": [1,", "{\"k\": -}", "{\"k\": 01}",
        "{\"k\": 1.}", "{\"k\": 1e}", "{\"k\": 0.}", "{\"k\": 1e+}", "{\"k\": -01}", "{\"k\": +1}",
        "{\"k\": .5}", "{\"k\": NaN}", "{\"k\": -Infinity}", "{\"k\": tru", "{\"k\": \"abc",
        "{\"k\": \"a\\q\"}", "{\"k\": \"a\\u12G4\"}", "{\"k\": \"a\tb\"}", "{\"k\": 1} x",
        "{/*c*/\"k\": 1}", "{\"k\": é}", "{\"k\": [1, \"a\"]}", "true", "1.5", "12", "\"s\"",
        "\"\"", " [1]", "]", ",", "   ", "", "\n {\"k\": 1,\n \"v\": x}", "{\"k\": [1}",
        "{\"k\": 1]", "{\"k\": }", "{\"k\": ''x''}", "{\"k\": NaNx}", "{\"k\": -Ix}",
        "{\"k\": 1, \"l\": [1, }}", "{\"k\": 1, \"l\": [1, ,2]}", "{\"k\": 1, \"m\": {\"a\": }}",
        "{\"k\": 1, \"m\": {\"a\": 1, \"b\": }}", "{\"kéé\": 1, \"tx\": \"x\\q\"}",
        "[" + "1, " * 200 + "x]",
    ]],
    "INSERT INTO t (k, tx) VALUES (10, fromJson('\"abc\"'))",
    "INSERT INTO t (k, l) VALUES (11, fromJson('[1, 2, 3]'))",
    "INSERT INTO t (k, ii) VALUES (12, fromJson('\"x\"'))",
    "INSERT INTO t (k, ii) VALUES (12, fromJson('{'))",
    "INSERT INTO t (k, ii) VALUES (12, fromJson(''))",
    "INSERT INTO t (k, ii) VALUES (12, fromJson('12a'))",
    "INSERT INTO t (k, l) VALUES (12, fromJson('[1] x'))",
    "INSERT INTO t (k, l) VALUES (12, fromJson('{\"a\": }'))",
    "SELECT k, tx, l FROM t WHERE k IN (10, 11, 12)",
    "SELECT fromJson(tx) FROM t",
    "SELECT toJson(1) FROM t",
    "SELECT toJson((int)1) FROM t WHERE k = 1",
    # UDTs, tuples and nested collections in JSON
    "CREATE TYPE addr (street text, \"Zip\" int, tags frozen<set<text>>)",
    "CREATE TABLE u (k int, c text, s int static, a frozen<addr>, t tuple<int, frozen<list<text>>>, "
    "mm map<frozen<set<int>>, frozen<list<int>>>, mt map<timestamp, blob>, mu map<uuid, frozen<addr>>, "
    "PRIMARY KEY (k, c))",
    "INSERT INTO u JSON '{\"k\": 1, \"c\": \"x\", \"s\": 5, \"a\": {\"street\": \"Main\", "
    "\"\\\"Zip\\\"\": 123, \"tags\": [\"b\", \"a\"]}, \"t\": [1, [\"p\", \"q\"]], "
    "\"mm\": {\"[1, 2]\": [3], \"[0]\": []}, \"mt\": {\"2024-01-01 00:00:00+0000\": \"0x01\"}, "
    "\"mu\": {\"01234567-0123-0123-0123-0123456789ab\": {\"street\": null}}}'",
    "SELECT JSON * FROM u",
    "SELECT toJson(a), toJson(t), toJson(mm), toJson(mt), toJson(mu) FROM u",
    "INSERT INTO u JSON '{\"k\": 1, \"c\": \"y\", \"a\": {\"street\": \"S\", \"zip\": 1}}'",
    "INSERT INTO u JSON '{\"k\": 1, \"c\": \"y\", \"a\": {\"nosuch\": 1}}'",
    "INSERT INTO u JSON '{\"k\": 1, \"c\": \"y\", \"a\": \"{\\\"street\\\": \\\"quoted\\\"}\"}'",
    "INSERT INTO u JSON '{\"k\": 1, \"c\": \"y\", \"mm\": {\"x\": [1]}}'",
    "INSERT INTO u JSON '{\"k\": 1, \"c\": \"y\", \"mt\": {\"notadate\": \"0x01\"}}'",
    "INSERT INTO u JSON '{\"k\": 2, \"c\": \"z\", \"s\": 7}' DEFAULT UNSET",
    "INSERT INTO u JSON '{\"k\": 3, \"c\": \"w\", \"s\": 4}' USING TTL 100",
    "SELECT JSON k, c, s FROM u",
    "SELECT JSON k, count(*) AS n FROM u GROUP BY k",
    "SELECT JSON k, ttl(a), c AS \"C\", c AS cc, toJson(c) FROM u WHERE k = 1",
    "UPDATE u SET a = fromJson('{\"street\": \"Upd\", \"\\\"Zip\\\"\": 9}') WHERE k = 1 AND c = 'x'",
    "SELECT a FROM u WHERE k = 1 AND c = 'x'",
    "SELECT k FROM u WHERE k = fromJson('1')",
    "CREATE TABLE \"Q\" (\"K\" int PRIMARY KEY, \"select\" int, \"a b\" text)",
    "INSERT INTO \"Q\" JSON '{\"\\\"K\\\"\": 1, \"select\": 2, \"\\\"a b\\\"\": \"x\"}'",
    "SELECT JSON * FROM \"Q\"",
    "CREATE TABLE cn (k int PRIMARY KEY, n counter)",
    "UPDATE cn SET n = n + 3 WHERE k = 1",
    "SELECT JSON * FROM cn",
    "INSERT INTO cn JSON '{\"k\": 2, \"n\": 1}'",
    # native functions
    "CREATE TABLE n (k int PRIMARY KEY, ti tinyint, si smallint, i int, b bigint, f float, d double, "
    "de decimal, vi varint, tx text, a ascii, ts timestamp, dt date, tm time, tu timeuuid, u uuid, "
    "bl blob, bo boolean, du duration, ip inet, l list<int>, s set<text>, m map<text, int>, "
    "v vector<float, 3>, fl frozen<list<double>>)",
    "INSERT INTO n (k, ti, si, i, b, f, d, de, vi, tx, a, ts, dt, tm, tu, u, bl, bo, du, ip, l, s, m, "
    "v, fl) VALUES (1, 7, -300, 2147483647, -9223372036854775808, 1.5, -2.25, 10.50, "
    "12345678901234567890, 'hello', 'abc', '2024-03-31 10:00:00Z', '2024-01-31', '10:11:12.5', "
    "50554d6e-29bb-11e5-b345-feff819cdc9f, 01234567-0123-0123-0123-0123456789ab, 0xff00, true, "
    "1mo2d3h, '10.0.0.1', [3, 1, 2], {'x', 'a'}, {'k1': 5, 'k2': -1}, [1.0, 2.0, 2.0], [1.5, 2.5])",
    "INSERT INTO n (k) VALUES (2)",
    "SELECT abs(i), abs(b), abs(ti), abs(si), abs(f), abs(d), abs(de), abs(vi) FROM n",
    "SELECT exp(i), exp(f), exp(d), exp(ti) FROM n WHERE k = 1",
    "SELECT log(i), log(f), log(d), log10(i), log10(d), log(ti) FROM n WHERE k = 1",
    "SELECT round(f), round(d), round(de), round(i), round(vi) FROM n WHERE k = 1",
    "SELECT i + 1, i + b, ti + si, f + d, de + i, vi * 2, d / 0 FROM n WHERE k = 1",
    "SELECT i / 0 FROM n WHERE k = 1",
    "SELECT de / 3, de % 3, vi % 7, i % 5, -de, -f, b - 1, 1 - i, - i FROM n WHERE k = 1",
    "SELECT de / 0 FROM n WHERE k = 1",
    "SELECT ts + 1d, ts - 1mo, dt + 1mo, dt - 2d, ts + 1h30m FROM n WHERE k = 1",
    "SELECT dt + 1h FROM n WHERE k = 1",
    "SELECT tx + 'x', a + 'y', tx + a, a + 'é' FROM n WHERE k = 1",
    "SELECT tx + 1 FROM n WHERE k = 1",
    "SELECT i + tx FROM n WHERE k = 1",
    "SELECT currentDate() - currentDate() FROM n WHERE k = 1",
    "SELECT toDate(ts), toTimestamp(dt), toUnixTimestamp(ts), toUnixTimestamp(dt), toDate(tu), "
    "toTimestamp(tu), toUnixTimestamp(tu) FROM n WHERE k = 1",
    "SELECT dateOf(tu), unixTimestampOf(tu) FROM n WHERE k = 1",
    "SELECT minTimeuuid(ts), maxTimeuuid(ts) FROM n WHERE k = 1",
    "SELECT intAsBlob(i), blobAsInt(intAsBlob(i)), textAsBlob(tx), blobAsText(bl), varcharAsBlob(tx), "
    "bigintAsBlob(b), booleanAsBlob(bo), blobAsBoolean(0x01) FROM n WHERE k = 1",
    "SELECT blobAsInt(bl) FROM n WHERE k = 1",
    "SELECT map_keys(m), map_values(m), collection_count(l), collection_count(m), collection_min(l), "
    "collection_max(s), collection_sum(l), collection_avg(l), collection_sum(fl), collection_avg(fl) "
    "FROM n",
    "SELECT map_keys(l) FROM n",
    "SELECT collection_sum(s) FROM n",
    "SELECT mask_null(tx), mask_default(tx), mask_default(i), mask_default(ts), mask_default(l), "
    "mask_default(m), mask_default(tu), mask_default(v), mask_null(tu), mask_replace(tu, tu) "
    "FROM n WHERE k = 1",
    "SELECT mask_replace(tx, 'zz'), mask_inner(tx, 1, 2), mask_outer(tx, 1, 2), "
    "mask_inner(tx, 1, 1, '#'), mask_outer(a, 0, 1), mask_hash(tx), mask_hash(i, 'MD5'), "
    "mask_hash(tx, 'SHA-512') FROM n WHERE k = 1",
    "SELECT mask_inner(tx, 1, 1, '##') FROM n",
    "SELECT mask_hash(tx, 'nope') FROM n",
    "SELECT mask_inner(i, 1, 1) FROM n",
    "SELECT similarity_cosine(v, [1, 2, 3]), similarity_euclidean(v, [1, 2, 3]), "
    "similarity_dot_product(v, [1, 2, 3]) FROM n WHERE k = 1",
    "SELECT similarity_cosine(v, [0, 0, 0]) FROM n WHERE k = 1",
    "SELECT similarity_cosine(v, [1, 2]) FROM n WHERE k = 1",
    "SELECT similarity_cosine([1, 2], [1, 2]) FROM n WHERE k = 1",
    "SELECT toJson(i) AS j, i AS \"Big\", k AS kk FROM n WHERE k = 1",
    "SELECT abs(-1), abs(1), (int)1 + 1, system.abs(i) FROM n WHERE k = 1",
    "SELECT 1 + 1 FROM n WHERE k = 1",
    "SELECT nosuch(i) FROM n",
    "SELECT abs(i, i) FROM n",
    "SELECT abs(tx) FROM n",
    "SELECT ks.abs(i) FROM n",
    "SELECT token(k), token(1), k FROM n WHERE k = 1",
    "SELECT writetime(i) > 0, ttl(i) FROM n WHERE k = 1",
    "SELECT count(*), count(i), min(i), max(tx), sum(b), avg(d), sum(de), avg(de), sum(vi), avg(ti), "
    "sum(f) FROM n",
    "SELECT sum(tx) FROM n",
    "SELECT min(l), max(m), min(tu), max(tu) FROM n",
    "SELECT count(1), count(l) FROM n",
    "SELECT abs(max(i)), max(abs(i)) FROM n",
    "SELECT max(max(i)) FROM n",
    "SELECT [i, 2], {tx, 'z'}, (i, tx), {'a': i} FROM n WHERE k = 1",
    "SELECT k, i + 1 AS p FROM n WHERE k IN (1, 2)",
    "SELECT toTimestamp(min(tu)), toDate(mask_null(tu)), tojson(min(tu)), CAST(min(tu) AS text) FROM n",
    "SELECT JSON min(tu), mask_default(tu) FROM n",
    # exp, log and log10 of decimals and varints: big-math's digits at 32 or more
    "CREATE TABLE bm (k int PRIMARY KEY, de decimal, vi varint)",
    *[f"INSERT INTO bm (k, de, vi) VALUES ({k}, {de}, {vi})" for k, de, vi in [
        (1, "1", "1"), (2, "1.5", "100"), (3, "-1.5", "-1"), (4, "10.50", "1000"),
        (5, "100", "12345678901234567890"), (6, "1000", "99999999999999999999999999999999999999999"),
        (7, "-1000", "10"), (8, "0.001", "2147483647"), (9, "123.456", "3000000000"),
        (10, "2147483647", "7"), (11, "0.115", "1000000000000000000000000000000000000000"),
        (12, "1E+300", "2"), (14, "1E-2000", "3"),
        (13, "12345678901234567890123456789012345678901234567890.123", "65536"),
    ]],
    # big-math keeps ln 10 once computed at more digits than asked before; the first call
    # divides by the unrounded value, so both servers start with the same one
    "SELECT k, log10(de) FROM bm WHERE k = 13",
    "SELECT k, exp(de), log(de), log10(de) FROM bm WHERE k IN (1, 2, 4, 5, 6, 8, 11, 13)",
    "SELECT k, exp(de) FROM bm WHERE k IN (3, 7, 10)",
    "SELECT k, log(de), log10(de) FROM bm WHERE k IN (9, 12, 14)",
    "SELECT k, exp(vi), log(vi), log10(vi) FROM bm WHERE k IN (1, 2, 4, 5, 6, 7, 10, 11, 12, 13)",
    "SELECT exp(vi) FROM bm WHERE k = 3",
    "SELECT exp(vi) FROM bm WHERE k = 9",
    "SELECT exp(de) FROM bm WHERE k = 12",
    "SELECT log(de) FROM bm WHERE k = 3",
    "SELECT log10(vi) FROM bm WHERE k = 3",
    # CAST between every pair Cassandra has (and the ones it refuses)
    *[f"SELECT CAST({c} AS {t}) FROM n" for c in
      ["ti", "si", "i", "b", "f", "d", "de", "vi", "tx", "a", "ts", "dt", "tm", "tu", "u", "bl", "bo",
       "du", "ip"]
      for t in ["text", "ascii", "int", "bigint", "timestamp", "date", "decimal", "varint", "blob",
                "counter", "varchar"]],
    "SELECT CAST(1.50 AS decimal) FROM n",
    "INSERT INTO n (k, tx) VALUES (3, CAST(1 AS varchar))",
    # unary minus and parentheses: `-i…` and `-n…` start -Infinity and -NaN in Cassandra's lexer,
    # and `(x)` (a tuple of one element to Cassandra) needs a receiver to have a type
    "SELECT -de, -(d), - i, -(-b), -((f)), -(5), abs((i)), (d) + 1, [d, (d)] FROM n WHERE k = 1",
    "SELECT -i FROM n",
    "SELECT 1 - -ip FROM n",
    "SELECT -nosuch FROM n",
    "SELECT -NaN FROM n",
    "SELECT (i) FROM n",
    "SELECT (i + 1) AS x FROM n",
    "SELECT [(i)] FROM n",
    "SELECT CAST((i) AS text) FROM n",
    # functions as values in VALUES, SET and WHERE
    "CREATE TABLE wt (k int, c timeuuid, v int, t text, ts timestamp, d date, de decimal, b blob, "
    "PRIMARY KEY (k, c))",
    "INSERT INTO wt (k, c, v, t) VALUES (abs(-1), minTimeuuid('2024-01-01'), 1 + 2, 'a' + 'b')",
    "INSERT INTO wt (k, c, v, ts, d) VALUES (1, maxTimeuuid('2024-06-01'), (int)7 * 3, "
    "toTimestamp(toDate('2024-01-05 10:00:00')), toDate(minTimeuuid('2024-02-02')))",
    "INSERT INTO wt (k, c, v, de, b) VALUES (2, 50554d6e-29bb-11e5-b345-feff819cdc9f, "
    "CAST(1.9 AS int), 1 / 3, intAsBlob(5))",
    "INSERT INTO wt (k, c, v) VALUES (2, 50554d6e-29bb-11e5-b345-feff819cdc9f, 10 / 0)",
    "INSERT INTO wt (k, c, v) VALUES (2, 50554d6e-29bb-11e5-b345-feff819cdc9f, 'x' + 1)",
    "INSERT INTO wt (k, c, t) VALUES (2, 50554d6e-29bb-11e5-b345-feff819cdc9f, abs(1))",
    "INSERT INTO wt (k, c, v) VALUES (2, 50554d6e-29bb-11e5-b345-feff819cdc9f, now())",
    "INSERT INTO wt (k, c, v) VALUES (2, 50554d6e-29bb-11e5-b345-feff819cdc9f, nosuch())",
    "INSERT INTO wt (k, c, de) VALUES (3, 50554d6e-29bb-11e5-b345-feff819cdc9f, 1 + 1.5)",
    "INSERT INTO wt (k, c, ts) VALUES (4, 50554d6e-29bb-11e5-b345-feff819cdc9f, "
    "(timestamp)'2024-01-31' + 1mo)",
    "INSERT INTO wt (k, c, d) VALUES (4, 50554d6e-29bb-11e5-b345-feff819cdc9f, (date)'2024-03-31' - 1mo)",
    "INSERT INTO wt (k, c, v) VALUES (5, 50554d6e-29bb-11e5-b345-feff819cdc9f, -(5))",
    "SELECT k, c, v, t, ts, d, de, b FROM wt",
    "SELECT k, v FROM wt WHERE k = abs(-1) AND c > minTimeuuid('2024-03-01')",
    "SELECT k, v FROM wt WHERE k IN (1, 1 + 1)",
    "SELECT k, v FROM wt WHERE token(k) > token(0 + 1)",
    "UPDATE wt SET v = 5 * 5 WHERE k = 1 AND c = minTimeuuid('2024-01-01')",
    "UPDATE wt SET v = v + 1 WHERE k = 1 AND c = minTimeuuid('2024-01-01')",
    "UPDATE wt USING TTL 10 + 5 SET v = 1 WHERE k = 1 AND c = minTimeuuid('2024-01-01')",
    "SELECT k, c FROM wt WHERE k = 1 AND c > now() - 1d",
    # GROUP BY and aggregates
    "CREATE TABLE g (p int, q int, c1 int, c2 int, v int, s int static, d double, t text, "
    "PRIMARY KEY ((p, q), c1, c2))",
    *[f"INSERT INTO g (p, q, c1, c2, v, d, t) VALUES ({p}, {q}, {c1}, {c2}, {v}, {v / 4}, '{t}')"
      for p, q, c1, c2, v, t in [(1, 1, 1, 1, 10, "a"), (1, 1, 1, 2, 20, "b"), (1, 1, 2, 1, 30, "c"),
                                 (1, 1, 3, 1, 40, "d"), (1, 2, 1, 1, 50, "e"), (2, 1, 1, 1, 60, "f"),
                                 (2, 1, 1, 2, 70, "g")]],
    "INSERT INTO g (p, q, s) VALUES (3, 3, 99)",
    "SELECT p, q, count(*) FROM g GROUP BY p, q",
    "SELECT p, q, c1, count(*), sum(v), avg(v), min(t), max(d) FROM g GROUP BY p, q, c1",
    "SELECT p, q, c1, c2, v FROM g GROUP BY p, q, c1, c2",
    "SELECT p, q, c1, count(*) FROM g WHERE p = 1 AND q = 1 GROUP BY c1",
    "SELECT p, q, c1, count(*) FROM g GROUP BY p, q, c1 LIMIT 2",
    "SELECT p, q, c1, count(*) FROM g GROUP BY p, q, c1 PER PARTITION LIMIT 1",
    ("SELECT p, q, c1, count(*) FROM g GROUP BY p, q, c1", 2),
    ("SELECT p, q, count(*) FROM g GROUP BY p, q", 1),
    ("SELECT p, q, c1, count(v) FROM g GROUP BY p, q, c1 LIMIT 3", 3),
    "SELECT p, q, s, count(*) FROM g GROUP BY p, q",
    "SELECT count(*) FROM g GROUP BY p",
    "SELECT count(*) FROM g GROUP BY q",
    "SELECT count(*) FROM g GROUP BY p, q, c2",
    "SELECT count(*) FROM g GROUP BY p, q, v",
    "SELECT count(*) FROM g WHERE p = 1 AND q = 1 AND c1 = 1 GROUP BY c2",
    "SELECT DISTINCT p, q FROM g GROUP BY p, q",
    "SELECT DISTINCT p, q FROM g GROUP BY p, q, c1",
    "SELECT p, q, count(*) FROM g WHERE p IN (1, 2) AND q = 1 GROUP BY p, q",
    "SELECT count(*) FROM g WHERE p = 9 AND q = 9",
    "SELECT p, q, count(*) FROM g WHERE p = 9 AND q = 9 GROUP BY p, q",
    "SELECT max(v), p FROM g",
    "SELECT p, q, c1, count(*) FROM g WHERE v > 15 GROUP BY p, q, c1 ALLOW FILTERING",
    "SELECT c1, count(*) FROM g WHERE p = 1 AND q = 1 GROUP BY c1 ORDER BY c1 DESC",
    "CREATE TABLE ag (k int, c int, ti tinyint, si smallint, i int, b bigint, f float, d double, "
    "de decimal, vi varint, t text, u uuid, bo boolean, bl blob, du duration, PRIMARY KEY (k, c))",
    "INSERT INTO ag (k, c, ti, si, i, b, f, d, de, vi, t, u, bo, bl) VALUES (1, 1, 100, 30000, "
    "2147483647, 9223372036854775807, 0.1, 0.1, 1.1, 10, 'b', 01234567-0123-0123-0123-0123456789ab, "
    "true, 0x02)",
    "INSERT INTO ag (k, c, ti, si, i, b, f, d, de, vi, t, u, bo, bl) VALUES (1, 2, 100, 30000, 1, 1, "
    "0.2, 0.2, 2.25, -3, 'a', 11234567-0123-0123-0123-0123456789ab, false, 0x0100)",
    "INSERT INTO ag (k, c, ti, si, i, b, f, d, de, vi) VALUES (1, 3, 1, 1, 1, 1, 0.3, 0.3, 3.333, 7)",
    "INSERT INTO ag (k, c, du) VALUES (1, 4, 1d)",
    "SELECT sum(ti), sum(si), sum(i), sum(b), sum(f), sum(d), sum(de), sum(vi) FROM ag",
    "SELECT avg(ti), avg(si), avg(i), avg(b), avg(f), avg(d), avg(de), avg(vi) FROM ag",
    "SELECT min(t), max(t), min(u), max(u), min(bo), max(bo), min(bl), max(bl), count(du) FROM ag",
    "SELECT min(du) FROM ag",
    "SELECT sum(du) FROM ag",
    "SELECT avg(t) FROM ag",
    "SELECT avg(i), avg(d), avg(de), avg(vi), min(i) FROM ag WHERE k = 2",
]


def _normalized(result):
    """Cassandra lists ambiguous signatures in hash order, and a server error carries the
    address of the node: both are made comparable."""
    if result[0] != "error":
        return result
    text = re.sub(r"<Host: [^>]*>", "<Host>", str(result[-1]))
    match = re.search(r"\(can be matched by following signatures: (.*)\): use", text)
    if match:
        listed = ", ".join(sorted(match.group(1).split(", ")))
        text = text[:match.start(1)] + listed + text[match.end(1):]
    return (*result[:-1], text)


def _outcome(session, entry):
    try:
        result = outcome(session, entry)
    except NoHostAvailable as e:
        result = ("error", "NoHostAvailable", str(e))
    except ServerError as e:
        result = ("error", "ServerError", e.message)
    statement = entry[0] if isinstance(entry, tuple) else entry
    warnings = None
    if result[0] == "rows" and statement.lstrip().upper().startswith("SELECT"):
        warnings = session.execute(statement).response_future.warnings
    return _normalized(result), warnings


def test_same_json_functions_and_grouping_as_cassandra(sessions):
    helenus, cassandra = sessions
    report = []
    for entry in STATEMENTS:
        (ours, our_warnings), (theirs, their_warnings) = (_outcome(helenus, entry),
                                                          _outcome(cassandra, entry))
        diff = differences(ours, theirs)
        if our_warnings != their_warnings:
            diff.append(f"  warnings helenus {our_warnings} cassandra {their_warnings}")
        if diff:
            report += [f"MISMATCH {entry}", *diff]
    assert not report, "\n" + "\n".join(report)
