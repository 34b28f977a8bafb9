"""Differential test: the same statements against Helenus and a reference Apache Cassandra 5.0.4
(refcass), comparing result columns, their types, rows (in order) and error classes, codes and
messages. Skipped when Java or the refcass script is missing. $HELENUS_REFCASS names the script
(default ../shared/tools/refcass beside the repository), $HELENUS_REFCASS_ADDR its address."""
import os
import re
import shutil
import subprocess
import uuid

import pytest
from cassandra import AlreadyExists, DriverException
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
from cassandra.policies import RoundRobinPolicy
from cassandra.protocol import ErrorMessage, SyntaxException
from cassandra.query import FETCH_SIZE_UNSET, SimpleStatement, tuple_factory

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REFCASS = os.environ.get("HELENUS_REFCASS", os.path.join(REPO, "..", "shared", "tools", "refcass"))
REF_ADDR = os.environ.get("HELENUS_REFCASS_ADDR", "127.0.0.2")
REF_PORT = 9042
TTL_SLACK = 5  # seconds two servers may disagree on a remaining TTL

TYPES_COLUMNS = ("k, a, b, bl, bo, d, de, db, du, f, i, ii, si, t, ti, ts, tu, ty, u, vc, vi, ve")

# Statements run in order on both servers; every one must give the same outcome.
STATEMENTS = [
    # --- every native type, plus a vector ---
    "CREATE TABLE types (k int PRIMARY KEY, a ascii, b bigint, bl blob, bo boolean, d date, de decimal, "
    "db double, du duration, f float, i inet, ii int, si smallint, t text, ti time, ts timestamp, "
    "tu timeuuid, ty tinyint, u uuid, vc varchar, vi varint, ve vector<float, 3>)",
    f"INSERT INTO types ({TYPES_COLUMNS}) VALUES (1, 'ascii', 9223372036854775807, 0xcafe, true, "
    "'2024-02-29', 123.456, 1.5e300, 1h2m3s, 3.25, '192.168.0.1', -42, 32767, 'text é', "
    "'13:45:00.123456789', '2024-01-01 12:00:00+0000', 50554d6e-29bb-11e5-b345-feff819cdc9f, -128, "
    "01234567-0123-0123-0123-0123456789ab, 'varchar', 123456789012345678901234567890, [1.5, -2, 0])",
    f"INSERT INTO types ({TYPES_COLUMNS}) VALUES (2, '', -1, 0x, false, '1970-01-01', -0.000001, "
    "-0.0, -1mo2d, -1.5e-10, '::1', 2147483647, -32768, '', '00:00:00', 0, "
    "00000000-0000-1000-8000-000000000000, 127, 00000000-0000-0000-0000-000000000000, 'x', -1, "
    "[0, 0, 0])",
    "INSERT INTO types (k, t) VALUES (3, 'mostly null')",
    "SELECT * FROM types WHERE k = 1",
    "SELECT * FROM types",
    "SELECT k, de, vi, du FROM types WHERE k IN (3, 1, 2)",
    "SELECT k, ve FROM types WHERE k = 2",
    ("SELECT k, t FROM types WHERE k IN (3, 1, 2)", 1),
    # --- composite partition key, three clustering columns with mixed order ---
    "CREATE TABLE ev (tenant text, day int, c1 int, c2 text, c3 timestamp, v text, "
    "PRIMARY KEY ((tenant, day), c1, c2, c3)) WITH CLUSTERING ORDER BY (c1 ASC, c2 DESC, c3 ASC)",
    "INSERT INTO ev (tenant, day, c1, c2, c3, v) VALUES ('a', 1, 1, 'a', '2024-01-01', 'x')",
    "INSERT INTO ev (tenant, day, c1, c2, c3, v) VALUES ('a', 1, 1, 'b', '2024-01-01', 'y')",
    "INSERT INTO ev (tenant, day, c1, c2, c3, v) VALUES ('a', 1, 1, 'b', '2024-01-02', 'x')",
    "INSERT INTO ev (tenant, day, c1, c2, c3, v) VALUES ('a', 1, 1, 'c', '2024-01-01', 'z')",
    "INSERT INTO ev (tenant, day, c1, c2, c3, v) VALUES ('a', 1, 2, 'a', '2024-01-01', 'x')",
    "INSERT INTO ev (tenant, day, c1, c2, c3, v) VALUES ('a', 1, 2, 'd', '2024-01-01', 'y')",
    "INSERT INTO ev (tenant, day, c1, c2, c3, v) VALUES ('a', 1, 4, 'a', '2024-01-01', 'x')",
    "INSERT INTO ev (tenant, day, c1, c2, c3, v) VALUES ('a', 1, 5, 'a', '2024-01-01', 'x')",
    "INSERT INTO ev (tenant, day, c1, c2, c3, v) VALUES ('a', 2, 1, 'a', '2024-01-01', 'w')",
    "INSERT INTO ev (tenant, day, c1, c2, c3, v) VALUES ('b', 1, 1, 'a', '2024-01-01', 'x')",
    "INSERT INTO ev (tenant, day, c1, c2, c3, v) VALUES ('b', 1, 3, 'a', '2024-01-01', 'y')",
    "SELECT * FROM ev WHERE tenant = 'a' AND day = 1",
    "SELECT c1, c2, v FROM ev WHERE tenant = 'a' AND day = 1 AND c1 = 1 AND c2 > 'a'",
    "SELECT c1, c2, c3 FROM ev WHERE tenant = 'a' AND day = 1 AND c1 = 1 AND c2 >= 'b' AND c2 < 'c'",
    "SELECT c1, c2, c3 FROM ev WHERE tenant = 'a' AND day = 1 AND c1 = 1 AND c2 = 'b' AND c3 > '2024-01-01'",
    "SELECT c1, c2, c3 FROM ev WHERE tenant = 'a' AND day = 1 ORDER BY c1 DESC, c2 ASC, c3 DESC",
    "SELECT c1, c2 FROM ev WHERE tenant = 'a' AND day = 1 AND c1 > 1 ORDER BY c1 DESC",
    "SELECT day, c1, v FROM ev WHERE tenant = 'a' AND day IN (2, 1)",
    ("SELECT day, c1, v FROM ev WHERE tenant = 'a' AND day IN (2, 1)", 2),
    "SELECT c1, c2, v FROM ev WHERE tenant = 'a' AND day = 1 AND c1 IN (2, 1)",
    "SELECT c1, c2, v FROM ev WHERE tenant = 'a' AND day = 1 AND c1 IN (2, 1) AND c2 > 'a'",
    "SELECT * FROM ev WHERE tenant = 'a' AND day = 1 LIMIT 3",
    "SELECT tenant, day, c1 FROM ev PER PARTITION LIMIT 2",
    "SELECT tenant, day, c1 FROM ev PER PARTITION LIMIT 1 LIMIT 2",
    "SELECT DISTINCT tenant, day FROM ev",
    "SELECT COUNT(*) FROM ev WHERE tenant = 'a' AND day = 1",
    "SELECT token(tenant, day), tenant, day FROM ev WHERE tenant = 'a' AND day = 1 LIMIT 1",
    "SELECT tenant, day, c1 FROM ev WHERE token(tenant, day) > token('a', 1)",
    "SELECT tenant, day, c1 FROM ev WHERE token(tenant, day) <= token('a', 1)",
    "SELECT tenant, day, c1, v FROM ev WHERE v = 'x' ALLOW FILTERING",
    "SELECT c1, c2, c3 FROM ev WHERE tenant = 'a' AND day = 1 AND c2 = 'a' ALLOW FILTERING",
    "DELETE FROM ev WHERE tenant = 'a' AND day = 1 AND c1 = 1 AND c2 = 'b' AND c3 = '2024-01-02'",
    "DELETE FROM ev WHERE tenant = 'a' AND day = 1 AND c1 = 2",
    "DELETE FROM ev WHERE tenant = 'a' AND day = 1 AND c1 > 4",
    "DELETE FROM ev WHERE tenant = 'b' AND day = 1",
    "SELECT * FROM ev",
    "UPDATE ev SET v = 'u' WHERE tenant = 'a' AND day = 1 AND c1 = 1 AND c2 = 'a' AND c3 = '2024-01-01'",
    "DELETE v FROM ev WHERE tenant = 'a' AND day = 1 AND c1 = 1 AND c2 = 'c' AND c3 = '2024-01-01'",
    "SELECT * FROM ev WHERE tenant = 'a' AND day = 1",
    # --- multi-column relations on mixed-order clustering columns ---
    "CREATE TABLE mc (p int, a int, b int, c int, v int, PRIMARY KEY (p, a, b, c)) "
    "WITH CLUSTERING ORDER BY (a DESC, b ASC, c DESC)",
    *[f"INSERT INTO mc (p, a, b, c, v) VALUES ({p}, {a}, {b}, {c}, {p * 100 + a * 10 + b + c})"
      for p in (1, 2) for a in (1, 2, 3) for b in (1, 2) for c in (1, 2)],
    "SELECT a, b, c FROM mc WHERE p = 1",
    "SELECT a, b, c FROM mc WHERE p = 1 AND (a, b) > (2, 1)",
    "SELECT a, b, c FROM mc WHERE p = 1 AND (a, b, c) > (1, 1, 1) AND (a, b, c) <= (2, 2, 1)",
    "SELECT a, b, c FROM mc WHERE p = 1 AND (a, b) IN ((1, 1), (3, 2))",
    "SELECT a, b, c FROM mc WHERE p = 1 AND a = 2 AND (b, c) >= (1, 2)",
    "SELECT a, b, c FROM mc WHERE p = 1 AND a > 1 AND a <= 3",
    "SELECT a, b, c FROM mc WHERE p = 1 AND a = 1 AND b IN (2, 1) AND c < 2",
    "SELECT a, b, c FROM mc WHERE p = 1 AND (a, b, c) = (2, 2, 1)",
    "SELECT a, b, c FROM mc WHERE p = 1 AND (a, b) < (2, 2)",
    "SELECT p, a, b, c FROM mc WHERE p IN (2, 1) AND (a, b) >= (3, 2)",
    "SELECT a, b, c FROM mc WHERE p = 1 AND a IN (1, 2) AND (b, c) > (1, 1)",
    "SELECT a, b, c FROM mc WHERE p = 1 AND (a, b) > (1, 1) ORDER BY a ASC, b DESC, c ASC",
    "SELECT a, b, c FROM mc WHERE p = 1 AND c > 1 ALLOW FILTERING",
    "SELECT p, a, b, c FROM mc WHERE b = 2 AND c < 2 ALLOW FILTERING",
    "SELECT a, b, c FROM mc WHERE p = 1 AND a = 3 AND c IN (1, 5) ALLOW FILTERING",
    ("SELECT p, a, b, c FROM mc WHERE p IN (2, 1) AND a = 3", 3),
    "SELECT a, b, c FROM mc WHERE p = 1 ORDER BY a ASC, b DESC, c ASC LIMIT 5",
    "SELECT p, a, b FROM mc WHERE p IN (2, 1) AND a = 3 AND b = 2",
    "SELECT MIN(v), MAX(v), SUM(v), AVG(v), COUNT(v) FROM mc WHERE p = 1",
    "SELECT COUNT(*) FROM mc",
    "SELECT COUNT(1) FROM mc WHERE p = 2 AND a = 2",
    "SELECT p, a, b, c FROM mc WHERE p = 1 AND b = 1 AND c = 2 ALLOW FILTERING",
    "SELECT p, a, v FROM mc WHERE v > 220 ALLOW FILTERING",
    "DELETE FROM mc WHERE p = 2 AND (a, b) >= (2, 2)",
    "DELETE FROM mc WHERE p = 2 AND a = 1 AND b = 1",
    "SELECT a, b, c FROM mc WHERE p = 2",
    # --- static columns ---
    "CREATE TABLE st (p int, c int, s text static, v int, PRIMARY KEY (p, c))",
    "INSERT INTO st (p, s) VALUES (1, 'static only')",
    "SELECT * FROM st",
    "INSERT INTO st (p, c, v) VALUES (1, 1, 10)",
    "INSERT INTO st (p, c, v) VALUES (1, 2, 20)",
    "UPDATE st SET s = 'updated' WHERE p = 1",
    "INSERT INTO st (p, c, s, v) VALUES (2, 1, 's2', 21)",
    "SELECT * FROM st",
    "SELECT DISTINCT p, s FROM st",
    "SELECT s FROM st WHERE p = 1",
    "SELECT p, s FROM st PER PARTITION LIMIT 1",
    "DELETE s FROM st WHERE p = 1",
    "SELECT * FROM st WHERE p = 1",
    "DELETE FROM st WHERE p = 2 AND c = 1",
    "SELECT * FROM st WHERE p = 2",
    "SELECT COUNT(*) FROM st",
    # --- counters ---
    "CREATE TABLE cnt (k text PRIMARY KEY, hits counter, misses counter)",
    "UPDATE cnt SET hits = hits + 5 WHERE k = 'a'",
    "UPDATE cnt SET hits = hits - 2, misses = misses + 1 WHERE k = 'a'",
    "UPDATE cnt SET misses = misses + 7 WHERE k = 'b'",
    "SELECT * FROM cnt",
    "SELECT k, hits FROM cnt WHERE k = 'b'",
    "SELECT SUM(hits), MAX(misses) FROM cnt",
    # --- collections, frozen and not ---
    "CREATE TABLE coll (k int PRIMARY KEY, fl frozen<list<int>>, fs frozen<set<text>>, "
    "fm frozen<map<text, int>>, ft frozen<tuple<int, text>>, l list<int>, s set<int>, m map<int, text>)",
    "INSERT INTO coll (k, fl, fs, fm, ft, l, s, m) VALUES (1, [3, 1, 2], {'b', 'a'}, {'x': 1, 'a': 2}, "
    "(1, 'one'), [1, 2], {5, 3}, {2: 'b', 1: 'a'})",
    "INSERT INTO coll (k, fl, ft) VALUES (2, [], (2, null))",
    "UPDATE coll SET l = l + [9], s = s - {3}, m[3] = 'c' WHERE k = 1",
    "UPDATE coll SET l = [0] + l, m = m - {1} WHERE k = 1",
    "SELECT * FROM coll",
    "SELECT fm, ft FROM coll WHERE k = 1",
    "SELECT k FROM coll WHERE fl = [3, 1, 2] ALLOW FILTERING",
    "DELETE m[2] FROM coll WHERE k = 1",
    "SELECT m FROM coll WHERE k = 1",
    "UPDATE coll SET l = [7, 8] + l WHERE k = 1",
    "UPDATE coll SET l = l + [10], l = [6] + l WHERE k = 2",
    "SELECT k, l FROM coll",
    "UPDATE coll SET fl = [1] + fl WHERE k = 1",
    "UPDATE coll SET s = {1} + s WHERE k = 1",
    # --- USING TIMESTAMP / TTL, WRITETIME and TTL ---
    "CREATE TABLE tt (k int, c int, v int, w text, PRIMARY KEY (k, c))",
    "INSERT INTO tt (k, c, v, w) VALUES (1, 1, 10, 'a') USING TIMESTAMP 1000",
    "INSERT INTO tt (k, c, v) VALUES (1, 1, 5) USING TIMESTAMP 500",
    "UPDATE tt USING TIMESTAMP 2000 AND TTL 3600 SET w = 'b' WHERE k = 1 AND c = 2",
    "INSERT INTO tt (k, c, v) VALUES (1, 3, 30) USING TTL 1000 AND TIMESTAMP 3000",
    "SELECT c, v, w, WRITETIME(v), TTL(v), WRITETIME(w), TTL(w) FROM tt WHERE k = 1",
    "DELETE FROM tt USING TIMESTAMP 1500 WHERE k = 1 AND c = 1",
    "DELETE FROM tt USING TIMESTAMP 2500 WHERE k = 1 AND c = 3",
    "SELECT * FROM tt WHERE k = 1",
    "INSERT INTO tt (k, c, v) VALUES (1, 1, 11) USING TIMESTAMP 1600",
    "SELECT c, v, w, WRITETIME(v) FROM tt WHERE k = 1",
    # --- errors ---
    "SELECT a, b, c FROM mc WHERE p = 1 AND b > 1",
    "SELECT a, b, c FROM mc WHERE p = 1 AND (a, c) > (1, 1)",
    "SELECT a, b, c FROM mc WHERE p = 1 AND (b, c) > (1, 1)",
    "SELECT a, b, c FROM mc WHERE p = 1 AND a = 1 AND (a, b) > (1, 1)",
    "SELECT a, b, c FROM mc WHERE p = 1 AND (a, b) > (1, 1) AND (a, b) = (2, 2)",
    "SELECT * FROM ev WHERE tenant = 'a'",
    "SELECT * FROM mc WHERE p IN (1, 2) ORDER BY a DESC",
    ("SELECT * FROM mc WHERE p IN (1, 2) ORDER BY a DESC", None),
    ("SELECT p, a, b, c FROM mc WHERE p IN (1, 2) ORDER BY a ASC, b DESC LIMIT 7", None),
    "SELECT a, b, c FROM mc WHERE p = 1 AND (a, b) IN ((1, 2), (3))",
    "SELECT * FROM mc WHERE p = 1 ORDER BY b",
    "SELECT DISTINCT a FROM mc",
    "SELECT v FROM mc WHERE p = 1 PER PARTITION LIMIT 0",
    "SELECT SUM(t) FROM types",
    "SELECT WRITETIME(k) FROM tt",
    "SELECT TTL(c) FROM tt",
    "INSERT INTO types (k, ii) VALUES (5, 'x')",
    "INSERT INTO mc (p, a, b, c, v) VALUES (1, 1, 1, null, 1)",
    "UPDATE cnt SET hits = 3 WHERE k = 'a'",
    "UPDATE cnt SET hits = hits + 1 WHERE k = 'a' USING TTL 5",
    "DELETE FROM ev WHERE tenant = 'a' AND day = 1 AND c2 = 'x'",
    "CREATE TABLE bad1 (k int PRIMARY KEY, n counter, v int)",
    "CREATE TABLE bad2 (k int PRIMARY KEY, s int static)",
    "CREATE TABLE bad3 (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (k DESC)",
    "CREATE TABLE types (k int PRIMARY KEY)",
    "SELECT * FROM ev WHERE tenant = 'a' AND day = 1 AND c1 = 1 AND c3 > '2024-01-01'",
    "SELECT * FROM mc WHERE p = 1 AND a IN (1, 2) AND (b, c) > (1, 1)",
    "SELECT * FROM st WHERE p = 1 AND s = 'x'",
    "INSERT INTO tt (k, c, v) VALUES (1, 9, 1) USING TTL 700000000",
    "SELECT * FROM tt WHERE k = 1 AND c = 1 AND c = 2",
]

# Errors whose message Cassandra builds from a hash set (column order varies between runs):
# only the error class and code are compared.
UNORDERED_MESSAGES = {
    "SELECT a, b, c FROM mc WHERE p = 1 AND (a, b) > (1, 1) AND (a, b) = (2, 2)",
}


# Syntax errors compared whole (position, wording and snippet) and float literals Cassandra's
# parser refuses: a name where a term is expected (after a minus, alone, after `+` outside a
# prepend, after a type hint) is reported at the token where Cassandra's prediction fails, the
# end of the text as `line 0:-1`; a float literal beyond a double (or with an exponent
# BigDecimal refuses) fails the statement whatever receives it.
EXACT_STATEMENTS = [
    "CREATE TABLE nt (k int PRIMARY KEY, v int, b bigint, de decimal, d double, f float, "
    "vi varint, l list<int>, m map<int, int>)",
    "SELECT * FROM nt WHERE k = -k",
    "SELECT * FROM nt WHERE k = -k  ",
    "SELECT * FROM nt WHERE k = -k AND v = 1",
    "SELECT * FROM nt WHERE k = -k;",
    "SELECT * FROM nt WHERE k = -k ;",
    "SELECT * FROM nt WHERE k = -k ALLOW FILTERING",
    "SELECT * FROM nt WHERE k = -k + 1",
    "SELECT * FROM nt WHERE k = -k[1]",
    "SELECT * FROM nt WHERE k = -k)",
    "SELECT * FROM nt WHERE k = - k",
    "SELECT * FROM nt WHERE k = k",
    "SELECT * FROM nt WHERE k = k AND v = 1",
    "SELECT * FROM nt WHERE k IN (-k)",
    "SELECT * FROM nt WHERE k IN (1, -k, 2)",
    "SELECT * FROM nt WHERE k = -k.x",
    "SELECT * FROM nt WHERE k = -k.x AND v = 1",
    "SELECT * FROM nt WHERE k = -k.ttl AND v = 1",
    "SELECT * FROM nt WHERE k = -k.token AND v = 1",
    "SELECT * FROM nt WHERE k = -k.x.y AND v = 1",
    "SELECT * FROM nt WHERE k = -token.x AND v = 1",
    "SELECT * FROM nt WHERE k = -count.x AND v = 1",
    "SELECT * FROM nt WHERE k = -key",
    "SELECT * FROM nt WHERE k = -select",
    'SELECT * FROM nt WHERE k = -"k" AND v = 1',
    'SELECT * FROM nt WHERE k = -"" AND v = 1',
    "SELECT * FROM nt WHERE k = -k /* a */ /* b */ AND v = 1",
    "SELECT * FROM nt WHERE k = /* a */ /* b */ -k AND v = 1",
    "SELECT * FROM nt WHERE k = -k\n AND v = 1",
    "SELECT * FROM nt WHERE k = abs(-k)",
    "SELECT * FROM nt WHERE k = abs(1, -k)",
    "SELECT * FROM nt WHERE k = 1 + -k",
    "SELECT * FROM nt WHERE token(k) > token(-k)",
    "SELECT * FROM nt WHERE k = 1 AND l CONTAINS -v ALLOW FILTERING",
    "SELECT * FROM nt WHERE (k, v) = (1, -v)",
    "SELECT * FROM nt WHERE k = (int) -k",
    "SELECT * FROM nt WHERE k = -(k)",
    "SELECT * FROM nt WHERE k = -(k) AND v = 1",
    "SELECT * FROM nt WHERE k = (int)",
    "SELECT * FROM nt WHERE k = 1 + v AND v = 1",
    "SELECT * FROM nt WHERE k = 1 + v",
    "SELECT * FROM nt WHERE k = 1 + v,",
    "SELECT * FROM nt WHERE k = 1 + v.x AND v = 1",
    "SELECT * FROM nt WHERE k IN (1 + v, 2)",
    "SELECT * FROM nt WHERE",
    "SELECT * FROM nt WHERE k = @",
    "SELECT * FROM nt WHERE k = 1 é",
    "SELECT * FROM nt WHERE k = -é",
    "SELECT * FROM nt WHERE k = 中",
    "SELECT * FORM nt WHERE k = @",
    "SELECT * FROM nt WHERE k = -k AND v = 'abc",
    "SELECT * FROM nt WHERE k = 1 AND v = 'abc",
    "SELECT * FROM nt WHERE k = k @",
    "SELECT * FROM nt @",
    "SELECT * FROM nt WHERE k = 'abc  ",
    'SELECT * FROM nt WHERE k = "abc',
    "SELECT * FROM nt WHERE k = $$abc",
    "SELECT * FROM nt WHERE k = $$abc$",
    "SELECT * FROM nt WHERE k = $$",
    "SELECT * FROM nt WHERE k = $$ab$c",
    "SELECT * FROM nt WHERE k = 1 /* abc",
    "SELECT * FROM nt WHERE k IN (",
    "SELECT * FROM nt WHERE k IN (FROM)",
    "SELECT * FROM nt WHERE k IN (,)",
    "SELECT * FROM nt WHERE k IN (select)",
    "SELECT * FROM nt WHERE k IN (k)",
    "SELECT * FROM nt WHERE k IN (1,)",
    "SELECT * FROM nt WHERE k IN (1",
    "SELECT * FROM nt WHERE k = abs(",
    "SELECT * FROM nt WHERE k = abs(,)",
    "SELECT * FROM nt WHERE k = abs(FROM)",
    "SELECT abs( FROM nt",
    "SELECT abs(, FROM nt",
    "SELECT abs(FROM nt",
    "UPDATE nt SET l = [ WHERE k = 1",
    "UPDATE nt SET l = [,] WHERE k = 1",
    "UPDATE nt SET l = [1, WHERE k = 1",
    "INSERT INTO nt (k, v) VALUES (",
    "INSERT INTO nt (k, v) VALUES ()",
    "SELECT * FROM nt WHERE k = 1 AND v IN ( ALLOW FILTERING",
    # after a term: a token that may follow one somewhere (mismatched) or not (no viable)
    *[f"SELECT * FROM nt WHERE k = 1 {t} v" for t in (
        "FROM", "SELECT", "IN", "=", "(", "[", "{", "?", "1", "k", "IF", "USING", "APPLY",
        "INSERT", "UPDATE", "DELETE", "BEGIN", ")", "]", "}", ":", "..", "AS", "WHERE", "'x'",
        ".", "BY", "ASC", "DESC", "PRIMARY", "NOT", "CONTAINS", "TOKEN", "NULL", ">", "+=")],
    *[f"UPDATE nt SET v = 1 {t} v" for t in ("FROM", "k", "'x'", ")", "IF", "AND", ";", "APPLY")],
    *[f"INSERT INTO nt (k, v) VALUES (1, 2 {t} v" for t in ("FROM", "k", "'x'", "IF", "WHERE")],
    # after a table's name: a token that follows one nowhere (no viable, the name bracketed) or
    # somewhere (mismatched, the snippet one token further)
    *[f"SELECT * FROM nt {t} x" for t in (
        "nt2", '"nt2"', "1", "'x'", "(", ",", "[", "=", "IF", "APPLY", "AND", "WHERE", "LIMIT",
        "GROUP", "PRIMARY", "JSON", "USING", "SET", "WITH", "AS", "TO", "FROM", "OF", ";")],
    'SELECT * FROM "ks" "t"',
    "SELECT * FROM nt (",
    "SELECT * FROM ks.nt x",
    "INSERT INTO nt x (k) VALUES (1)",
    'INSERT INTO "nt" "x" (k) VALUES (1)',
    "UPDATE nt x SET v = 1 WHERE k = 1",
    "DELETE FROM nt x WHERE k = 1",
    "TRUNCATE nt x",
    "DROP TABLE nt x",
    "CREATE TABLE nt3 x (k int PRIMARY KEY)",
    "ALTER TABLE nt x ADD y int",
    # after a selector, a relation's column or a deleted column: a token the prediction from
    # the name does not expect (no viable, the name bracketed), or FROM wanted
    *[f"SELECT {sel} {t} FROM nt" for sel in ("k", "-v", "1 + v", "k, v.f", "?") for t in (
        "x", '"x"', "1", "'x'", "=", "IN", "AND", "WHERE", "..", ")", "]", "}", ":", ";", "LIMIT",
        "ORDER", "ALLOW", "(", "+") if (sel, t) != ("k, v.f", ";")],
    *[f"SELECT {sel} x FROM nt" for sel in (
        "1", "'a'", "null", "(int) 1", "[1]", "{1}", "k + 1", "CAST(k AS int)", "writetime(v)",
        "ttl(v)", "token(k)", "abs(k)", "COUNT(*)", "k AS y", "k AS y, v")],
    *[f"SELECT {sel}" for sel in ("k", "abs(k)", "k AS x", "1", "k,", "k, v", "?", "k.f", "-k")],
    *[f"DELETE v {t} FROM nt WHERE k = 1" for t in ("x", "(", ")", ";", "=", "AS", "WHERE", "1",
                                                  "'a'", "?", "IN", "..", ",", ".", "[")],
    "DELETE v, m ; FROM nt WHERE k = 1",
    "DELETE l[1] x FROM nt WHERE k = 1",
    "DELETE v",
    *[f"SELECT * FROM nt WHERE {rel} {t} 1" for rel in ("k", "k = 1 AND v", '"k"') for t in (
        "x", "(", ")", ";", ",", "AS", "AND", ".", "..", "]", ":", "+", "IF", "1", "'a'", "?",
        "LIMIT", "IN", "FROM", "{", "-")],
    "SELECT * FROM nt WHERE k = 1 AND l[1] x 1",
    *[f"SELECT * FROM nt GROUP BY {g} {t} 1" for g in ("k", "k, v") for t in (
        "x", ")", ";", "=", "AS", "WHERE", "AND", ".", "]", ":", "1", "'a'", "?", "LIMIT", "ORDER",
        "IN", "FROM", "GROUP", "ASC")],
    *[f"SELECT {sel} . {t} FROM nt" for sel in ("k", "k, v", "?") for t in ("", "1", "(")],
    # after DISTINCT or JSON and a name, selectors that do not parse fail on that name
    *[f"SELECT {m} {sel} FROM nt" for m in ("DISTINCT", "JSON", "JSON DISTINCT") for sel in (
        "k x", "k, v x", "k =", "k )", "abs(k) x", "1 x", "k .", '"k" x', "k", "k AS x y",
        "abs(", "k,", "k AS", "k +", "CAST(k AS)", "-k x", "? x", "x")],
    "SELECT DISTINCT",
    "SELECT JSON",
    "SELECT * FROM nt WHERE k IN ?",
    "SELECT * FROM nt WHERE k",
    "SELECT * FROM nt WHERE k IN (1 FROM",
    "SELECT * FROM nt WHERE k = abs(1 FROM",
    "UPDATE nt SET l = [1 WHERE k = 1",
    "SELECT * FROM nt WHERE k = -",
    "DELETE FROM nt WHERE k = -k",
    "DELETE l[-k] FROM nt WHERE k = 1",
    "INSERT INTO nt (k, v) VALUES (1, -k)",
    "INSERT INTO nt (k, v) VALUES (-k, 1)",
    "INSERT INTO nt (k, v) VALUES (1, -k) USING TTL 5",
    "INSERT INTO nt (k, v) VALUES (1, v)",
    "INSERT INTO nt (k, v) VALUES (1, 1 + v)",
    "INSERT INTO nt (k, v) VALUES (1 + v, 2)",
    "INSERT INTO nt (k, v) VALUES (1, -v * 2)",
    "INSERT INTO nt (k, v) VALUES (1, -(int) v)",
    "INSERT INTO nt (k, l) VALUES (1, [-v])",
    "INSERT INTO nt (k, m) VALUES (1, {1: -v})",
    "UPDATE nt SET v = -k WHERE k = 1",
    "UPDATE nt SET v = -v, b = 1 WHERE k = 1",
    "UPDATE nt SET v = -v",
    "UPDATE nt SET v = v",
    "UPDATE nt SET v = v WHERE k = 1",
    "UPDATE nt SET v = v, b = 1 WHERE k = 1",
    "UPDATE nt SET v = -k + v WHERE k = 1",
    "UPDATE nt SET l = l + -v WHERE k = 1",
    "UPDATE nt SET l[-v] = 1 WHERE k = 1",
    "UPDATE nt SET m = {-v: 1} WHERE k = 1",
    "UPDATE nt SET l = [1] + l IF",
    "UPDATE nt SET l = [1] + l",
    "UPDATE nt SET l = [1] + l + [2] WHERE k = 1",
    "UPDATE nt SET v = 1 WHERE k = 1 IF v = -v",
    "UPDATE nt SET v = 1",
    "BEGIN BATCH UPDATE nt SET v = -v WHERE k = 1; APPLY BATCH",
    "SELECT -k, -v, abs(-k), [-k], CAST(-k AS text), - -k FROM nt",
    # a minus before a value no overload of _negate takes
    "SELECT * FROM nt WHERE k = -'a'",
    "SELECT * FROM nt WHERE k = -true",
    "UPDATE nt SET l = -[1] WHERE k = 1",
    "SELECT -m FROM nt",
    "SELECT -'a' FROM nt",
    # an unknown function inside a term of a statement, and inside a selector
    "SELECT * FROM nt WHERE k = -k(1)",
    "SELECT * FROM nt WHERE k = -ks.f(1)",
    "SELECT * FROM nt WHERE k = abs(abs(nosuch()))",
    "SELECT * FROM nt WHERE k = nosuch1(nosuch2())",
    "SELECT * FROM nt WHERE k = 1 + - nosuch(1)",
    "SELECT * FROM nt WHERE k = nosuch() + 1",
    "SELECT * FROM nt WHERE k = abs((int) nosuch())",
    "SELECT * FROM nt WHERE k = abs(ks.nosuch())",
    "UPDATE nt SET v = - nosuch() WHERE k = 1",
    "INSERT INTO nt (k, v) VALUES (1, abs(nosuch()))",
    "SELECT abs(nosuch(1)) FROM nt",
    "SELECT abs(1 + nosuch(1)) FROM nt",
    # float literals
    *[f"INSERT INTO nt (k, {c}) VALUES (1, {f})" for c in ("de", "d", "f", "vi", "v")
      for f in ("1E+400", "1.8E+308", "-1E+400", "1e400", "-1.7976931348623159E+308")],
    *[f"INSERT INTO nt (k, de) VALUES (1, {f})" for f in (
        "1.7976931348623157E+308", "1.79769313486231580E+308", "1E-400", "0E+400", "1E+2147483647",
        "1E+2147483648", "1E-2147483648", "1.5E-2147483647", "1E+9999999999", "0E+9999999999",
        "1E+12345678901", "1E+00000000000400", "1E+00000000000001", "1E+400 + 1", "-(1E+400)",
        "(decimal)1E+400")],
    "UPDATE nt SET de = 1E+400 WHERE k = 1",
    "SELECT * FROM nt WHERE k = 1 AND de = 1E+400 ALLOW FILTERING",
    "SELECT * FROM nt WHERE k IN (1E+400)",
    "  SELECT * FROM nt WHERE k = 1E+400  ;  ",
    "SELECT * FROM nt WHERE k = 1E+400 'x'",
    "SELECT * FROM nt WHERE k = 1E+2147483648 AND k = 1E+400",
    "SELECT * FROM nt WHERE k = -k AND de = 1E+400",
    "SELECT 1E+400 FROM nt",
    "SELECT CAST(1E+400 AS decimal) FROM nt",
    "INSERT INTO nt (k, l) VALUES (1, [1E+400])",
    "INSERT INTO nt (k, de) VALUES (1, 1E+400) USING TTL 1E+400",
    "INSERT INTO nt JSON '{\"k\": 2, \"de\": 1E+400}'",
    "INSERT INTO nt JSON '{\"k\": 3, \"de\": \"1E+400\"}'",
    "INSERT INTO nt (k, de) VALUES (4, fromJson('1E+400'))",
    "INSERT INTO nt (k, de) VALUES (5, fromJson('\"1E+400\"'))",
    "SELECT k, de, d, f FROM nt",
    "  CREATE TABLE nt2 (k int PRIMARY KEY, v vector<int, 99999999999>)  ",
]

# Functions as values in terms of statements: token(…) is the token of its arguments as a
# partition key of the statement's table (its parameters are that key's types), anywhere a
# term goes; a call among another's arguments is resolved against each parameter type it is
# tried for, so one that cannot be resolved (an unknown function, token, toJson) fits any and
# the call around it is checked first.
FUNCTION_VALUE_STATEMENTS = [
    "CREATE TABLE tv (k int PRIMARY KEY, v bigint, i int, t text, d double, b blob)",
    "CREATE TABLE tv2 (a text, b int, c int, v bigint, PRIMARY KEY ((a, b), c))",
    *[f"INSERT INTO tv (k, v) VALUES ({k}, {value})" for k, value in enumerate((
        "token(1)", "system.token(2)", "SYSTEM.token(3)", '"token"(4)', "TOKEN(5)", "token(null)",
        "abs(token(1))", "token(1) + 1", "-token(1)", "token(1) * 2", "(bigint) token(1)",
        "token((int) 1)", "token(-1)", "token(1 + 1)", "token(abs(-3))", "token(CAST(1.5 AS int))",
        "blobAsBigint(bigintAsBlob(token(1)))", "token(1) + token(2)"), start=1)],
    "INSERT INTO tv (k, b) VALUES (30, token(1))",
    "UPDATE tv SET v = token(5) WHERE k = 31",
    "BEGIN BATCH INSERT INTO tv (k, v) VALUES (32, token(32)); UPDATE tv SET v = token(33) "
    "WHERE k = 33; APPLY BATCH",
    "SELECT k, v, b, token(k) FROM tv",
    "SELECT k FROM tv WHERE v = token(1) ALLOW FILTERING",
    "SELECT k FROM tv WHERE v IN (token(1), token(2)) ALLOW FILTERING",
    "SELECT k FROM tv WHERE v > token(1) ALLOW FILTERING",
    "SELECT k FROM tv WHERE v = abs(token(1)) ALLOW FILTERING",
    "SELECT k FROM tv WHERE v = token(1)",
    "SELECT k FROM tv WHERE token(k) = token(1)",
    "SELECT k FROM tv WHERE token(k) >= -token(1)",
    "SELECT k FROM tv WHERE token(k) > token(1) AND token(k) < token(1) + 100000000000000000",
    "SELECT k FROM tv WHERE token(k) = token(1, 2)",
    "SELECT k FROM tv WHERE token(k) = token()",
    "SELECT k FROM tv WHERE token(k) = token('a')",
    "SELECT k FROM tv WHERE token(k) = token(null)",
    "SELECT k FROM tv WHERE token(k) = token(token(1))",
    "SELECT k FROM tv WHERE k = token(1)",
    "SELECT k FROM tv WHERE k IN (token(1))",
    "SELECT token(1), abs(token(1)) FROM tv WHERE k = 1",
    *[f"INSERT INTO tv (k, {column}) VALUES (40, {value})" for column, value in (
        ("i", "token(1)"), ("t", "token(1)"), ("v", "token('a')"), ("v", "token(1, 2)"),
        ("v", "token()"), ("v", "token(1.5)"), ("v", "token(2147483648)"), ("v", "token(k)"),
        ("v", "token((bigint) 1)"), ("v", "token(now())"), ("v", "token(nosuch())"),
        ("v", "token(1, nosuch())"), ("v", "nosuch(token(1))"), ("v", "ks.token(1)"),
        ("v", '"TOKEN"(1)'), ("v", "token(system.token(1))"), ("d", "abs(token(1))"),
        ("i", "abs(token(1))"), ("d", "token(1) + 1.5"), ("i", "(int) token(1)"),
        ("b", "intAsBlob(token(1))"), ("t", "blobAsText(bigintAsBlob(token(1)))"),
        ("t", "CAST(token(1) AS text)"), ("v", "CAST(token(1) AS bigint)"),
        ("i", "CAST(token(1) AS int)"), ("k", "token(1)"))],
    "INSERT INTO tv (k, v) VALUES (token(1), 1)",
    "UPDATE tv SET v = token(k) WHERE k = 41",
    "UPDATE tv SET v = v + token(1) WHERE k = 41",
    "INSERT INTO tv2 (a, b, c, v) VALUES ('x', 1, 1, token('x', 1))",
    "INSERT INTO tv2 (a, b, c, v) VALUES ('x', 1, 2, token('x'))",
    "INSERT INTO tv2 (a, b, c, v) VALUES ('x', 1, 3, token(1, 'x'))",
    "INSERT INTO tv2 (a, b, c, v) VALUES ('x', 1, 4, token('x', 1, 2))",
    "SELECT a, b, c, v, token(a, b) FROM tv2",
    "SELECT c FROM tv2 WHERE token(a, b) = token('x', 1)",
    # a call around unknown functions is checked first; a CAST of one is ambiguous
    *[f"SELECT k FROM tv WHERE k = {value}" for value in (
        "abs(nosuch1(), nosuch2())", "abs(nosuch(), 1)", "abs(ks.nosuch(), 1)",
        "abs(abs(nosuch1(), 1))", "intAsBlob(nosuch1(), 2)", "blobAsInt(nosuch1(), 2)",
        "blobAsInt(nosuch1())", "abs(nosuch1())", "CAST(nosuch() AS int)",
        "CAST(nosuch() AS text)", "CAST(nosuch(1, 2) AS int)", "CAST(ks.nosuch() AS int)",
        "CAST(abs(nosuch()) AS int)", "CAST(abs('a') AS int)", "CAST(CAST(nosuch() AS int) AS int)",
        "CAST(CAST(1 AS int) AS int)", "CAST(fromJson('1') AS int)", "CAST(toJson(1) AS int)",
        "abs(toJson(1))", "abs(fromJson('1'))", "abs(now())", "abs(abs('a'))", "abs(abs(1, 2))",
        "nosuch() + nosuch()", "1 + nosuch()", "(int) nosuch()", "abs((int) nosuch())",
        "token(nosuch(), 1)")],
    # a list literal is a value of a list or a vector only
    "CREATE TABLE tl (k int PRIMARY KEY, v bigint, b blob, l list<int>, s set<int>, "
    "m map<int, int>, fs frozen<set<int>>)",
    *[f"INSERT INTO tl (k, {column}) VALUES (1, {value})" for column, value in (
        ("b", "intAsBlob([1])"), ("b", "intAsBlob([])"), ("v", "abs([1])"), ("v", "[1]"),
        ("b", "textAsBlob([1])"), ("s", "[1]"), ("fs", "[1]"), ("m", "[1]"), ("l", "[1]"),
        ("b", "intAsBlob((1, 2))"))],
    *[f"UPDATE tl SET {assignment} WHERE k = 1" for assignment in (
        "s = s + [1]", "s = s - [1]", "s = [1]", "m = m - [1]", "l = l + [2]", "s = s + {2}")],
    "SELECT * FROM tl WHERE fs = [1] ALLOW FILTERING",
    "SELECT k FROM tl WHERE k = abs([1])",
    "SELECT * FROM tl",
    "INSERT INTO tv (k, i) VALUES (50, abs(nosuch1(), nosuch2()))",
    "INSERT INTO tv (k, i) VALUES (51, CAST(nosuch() AS int))",
    "UPDATE tv SET i = CAST(nosuch() AS int) WHERE k = 52",
]


def _refcass_state():
    """(script, reason to skip or None)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return None, "Java is not installed: no Cassandra reference to compare with"
    if not os.path.isfile(REFCASS):
        return None, f"refcass script not found at {REFCASS}"
    return REFCASS, None


def _run_refcass(script, command, timeout=300):
    return subprocess.run([script, command, "--addr", REF_ADDR], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="session")
def reference():
    """A running Cassandra 5.0.4 at REF_ADDR; started (and stopped at the end of the run) only if
    not already up. Session-wide: the modules that compare with it share one xdist worker
    (conftest.py), so one Cassandra serves them all."""
    script, reason = _refcass_state()
    if script is None:
        pytest.skip(reason)
    started = False
    if _run_refcass(script, "status").returncode != 0:
        result = _run_refcass(script, "start")
        if result.returncode != 0:
            pytest.skip(f"refcass start failed: {result.stderr.strip()[-500:]}")
        started = True
    yield REF_ADDR, REF_PORT
    if started:
        _run_refcass(script, "stop")


def _session(addr, port):
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy(), row_factory=tuple_factory,
                               request_timeout=60)
    cluster = Cluster([addr], port=port, protocol_version=5, connect_timeout=20,
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    return cluster, cluster.connect()


def fresh_keyspace(node, prefix):
    """For fixtures (`yield from`): a v5 session of `node` USE-ing a fresh keyspace, dropped
    afterwards."""
    cluster, session = _session(node.addr, node.port)
    keyspace = f"{prefix}_{uuid.uuid4().hex[:10]}"
    session.execute(f"CREATE KEYSPACE {keyspace} WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.set_keyspace(keyspace)
    yield session
    session.execute(f"DROP KEYSPACE {keyspace}")
    cluster.shutdown()


@pytest.fixture(scope="module")
def sessions(node, reference):
    """(helenus session, reference session), both USE-ing a fresh keyspace of the same name."""
    keyspace = f"diff_{uuid.uuid4().hex[:12]}"
    pairs = [_session(node.addr, node.port), _session(*reference)]
    for _, session in pairs:
        session.execute(f"CREATE KEYSPACE {keyspace} WITH replication = "
                        "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        session.set_keyspace(keyspace)
    yield pairs[0][1], pairs[1][1]
    for cluster, session in pairs:
        session.execute(f"DROP KEYSPACE IF EXISTS {keyspace}")
        cluster.shutdown()


def outcome(session, entry, whole_syntax_message=False):
    """What a statement (or a (statement, page size) pair; None disables paging) produced, in
    a form comparable across servers; all pages are fetched. A syntax error is compared by its
    first word only (the wording of ANTLR's recovery messages is not reproduced everywhere)
    unless `whole_syntax_message` is set."""
    statement, fetch_size = entry if isinstance(entry, tuple) else (entry, FETCH_SIZE_UNSET)
    try:
        rs = session.execute(SimpleStatement(statement, fetch_size=fetch_size))
    except AlreadyExists as e:
        return ("error", "AlreadyExists", e.keyspace, e.table)
    except SyntaxException as e:
        shown = e.message if whole_syntax_message else e.message.split(" ", 1)[0]
        return ("error", "SyntaxException", e.code, shown)
    except ErrorMessage as e:
        return ("error", type(e).__name__, e.code, e.message)
    except DriverException as e:
        return ("error", type(e).__name__, _sorted_signatures(str(e)))
    names = tuple(rs.column_names or ())
    types = tuple(t.cql_parameterized_type() for t in (rs.column_types or ()))
    return ("rows", names, types, list(rs))


def _sorted_signatures(message):
    """Cassandra lists a function's overloads (all of them, or the ambiguous ones) in hash-map
    order, which changes from one JVM run to the next; the list is compared as a set."""
    match = (re.search(r"\(known type signatures: (.*)\)", message)
             or re.search(r"\(can be matched by following signatures: (.*)\): use type casts", message))
    if not match:
        return message
    listed = ", ".join(sorted(match.group(1).split(", ")))
    return message[:match.start(1)] + listed + message[match.end(1):]


def _same_value(name, a, b):
    if name.startswith("ttl(") and isinstance(a, int) and isinstance(b, int):
        return abs(a - b) <= TTL_SLACK
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True  # NaN
    return a == b


def _same_rows(names, ours, theirs):
    if len(ours) != len(theirs):
        return False
    return all(_same_value(n, x, y) for r, s in zip(ours, theirs) for n, x, y in zip(names, r, s))


def differences(ours, theirs):
    """Readable lines describing how two outcomes differ (empty when they match)."""
    if ours[0] != theirs[0] or ours[0] == "error":
        return [] if ours == theirs else [f"  helenus:   {ours}", f"  cassandra: {theirs}"]
    lines = []
    if ours[1:3] != theirs[1:3]:
        lines += [f"  columns helenus:   {list(zip(ours[1], ours[2]))}",
                  f"  columns cassandra: {list(zip(theirs[1], theirs[2]))}"]
    if not _same_rows(theirs[1], ours[3], theirs[3]):
        lines.append(f"  rows helenus ({len(ours[3])}):")
        lines += [f"    {r}" for r in ours[3]]
        lines.append(f"  rows cassandra ({len(theirs[3])}):")
        lines += [f"    {r}" for r in theirs[3]]
    return lines


# Timestamp literals, as TimestampSerializer's java.time patterns read them: zone names and ids
# resolved as java.time resolves them (PST is America/Los_Angeles, so daylight time in July; a
# gap moves later, an overlap takes the earlier offset), offsets, SMART resolving (February 30
# is the 29th, 24:00 the next midnight), refusals and the overflow Cassandra lets through.
TIMESTAMP_LITERALS = [
    "2024-01-02 03:04 PST", "2024-07-02 03:04:05 PST", "2024-07-02 03:04 PDT",
    "2024-01-02 03:04:05 Europe/Paris", "2024-01-02T03:04:05.123 Asia/Calcutta",
    "2024-01-02 03:04 Pacific Standard Time", "2024-01-02 03:04 Central European Time",
    "2024-01-02 03:04 CET", "1900-01-02 03:04 CET", "2024-01-02 IST", "2024-01-02 03:04 BST",
    "2024-01-02 03:04 EST", "2024-01-02 03:04 JST", "2024-01-02 03:04 AEST",
    "2024-03-10 02:30 America/New_York", "2024-11-03 01:30 America/New_York",
    "2024-03-31 02:30 Europe/Paris", "2024-10-27 02:30 Europe/Paris",
    "2024-07-02 03:04 SystemV/PST8PDT", "2024-01-02 03:04 US/Pacific", "2024-01-02 03:04 Zulu",
    "12345-07-02 03:04 Europe/Paris", "+10000-01-02 PST",
    "2024-01-02 03:04 UTC+01:00", "2024-01-02 03:04 UT+05:30", "2024-01-02 03:04 GMT-18:00",
    "2024-01-02 03:04 +01:00:30", "2024-01-02+01:00:30", "0000-01-02+01:00", "-0001-01-01",
    "2024-02-30", "2024-02-31 00:00", "2024-01-02 24:00", "2024-001-02 003:04", "24-1-2 3:4:5.1",
    "2024-01-02 03:04 pst", "2024-01-02 03:04  PST", "2024-01-02 03:04 Etc/GMT+1",
    "2024-01-02 03:04 GMT+01", "2024-01-02 03:04 +18:30", "2024-01-02 24:01", "2024-1-2",
    "0000-01-02 PST", "292278995-01-02 03:04", "999999999-01-02 03:04 PST",
]


def _timestamp_statements():
    yield "CREATE TABLE tsl (k int PRIMARY KEY, t timestamp)"
    for k, text in enumerate(TIMESTAMP_LITERALS):
        yield f"INSERT INTO tsl (k, t) VALUES ({k}, '{text}')"
    yield "INSERT INTO tsl JSON '{\"k\": 100, \"t\": \"2024-07-02 03:04 Europe/Paris\"}'"
    yield "INSERT INTO tsl JSON '{\"k\": 101, \"t\": \"292278995-01-02 03:04\"}'"
    yield "SELECT k, blobAsBigint(timestampAsBlob(t)) FROM tsl"


def _without_host(session, entry):
    """outcome(), a server error (which the driver gives as NoHostAvailable) without the
    address of the node."""
    try:
        return outcome(session, entry)
    except NoHostAvailable as e:
        return ("error", "NoHostAvailable", re.sub(r"<Host: [^>]*>", "<Host>", str(e)))


def test_same_timestamp_literals_as_cassandra(sessions):
    helenus, cassandra = sessions
    report = mismatches(helenus, cassandra, _timestamp_statements(), answer=_without_host)
    assert not report, "\n" + "\n".join(report)


def test_statement_count():
    assert len(STATEMENTS) >= 50


def mismatches(helenus, cassandra, entries, answer=outcome, unordered=()):
    """A MISMATCH line and how they differ for each entry the two servers answer differently;
    for entries in `unordered` the answer's last part (a message whose wording order varies
    between runs) is left out."""
    report = []
    for entry in entries:
        ours, theirs = answer(helenus, entry), answer(cassandra, entry)
        if entry in unordered:
            ours, theirs = ours[:-1], theirs[:-1]
        diff = differences(ours, theirs)
        if diff:
            report += [f"MISMATCH {str(entry)[:300]}", *diff]
    return report


def test_same_results_as_cassandra(sessions):
    helenus, cassandra = sessions
    report = mismatches(helenus, cassandra, STATEMENTS, unordered=UNORDERED_MESSAGES)
    print("\n".join(report))
    assert not report, "\n" + "\n".join(report)


def _exact_outcome(session, entry):
    """outcome() with a syntax error's whole message, the overloads an error lists sorted; a
    server error (which the driver gives as NoHostAvailable) without the node's address."""
    try:
        result = outcome(session, entry, whole_syntax_message=True)
    except NoHostAvailable as e:
        return ("error", "NoHostAvailable", re.sub(r"<Host: [^>]*>", "<Host>", str(e)))
    if result[0] == "error" and isinstance(result[-1], str):
        return (*result[:-1], _sorted_signatures(result[-1]))
    return result


def test_same_syntax_errors_and_float_literals_as_cassandra(sessions):
    helenus, cassandra = sessions
    report = mismatches(helenus, cassandra, EXACT_STATEMENTS, answer=_exact_outcome)
    assert not report, "\n" + "\n".join(report)


def test_same_function_values_as_cassandra(sessions):
    helenus, cassandra = sessions
    report = mismatches(helenus, cassandra, FUNCTION_VALUE_STATEMENTS, answer=_exact_outcome)
    assert not report, "\n" + "\n".join(report)
