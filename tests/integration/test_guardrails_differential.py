"""Guardrails against Apache Cassandra 5.0.4 (refcass): with the same settings (test_guardrails's
GUARDRAILS), the same statements give the same guardrail and batch warnings and the same errors
on both, and a flush logs the same collection and tombstone messages.

Cassandra applies guardrails only to roles that are not superusers (under AllowAllAuthenticator
every client is one, and nothing is checked), so the reference runs PasswordAuthenticator and the
statements run as an ordinary role; Helenus, which has no roles, checks every client. Skipped
when Java or the refcass script (REFCASS, else on PATH, else ../shared/tools beside the
checkout) is missing, as in CI. REFCASS_GUARDRAILS_ADDR picks the
reference's loopback address (default 127.0.0.42); a reference already running there is left
alone and the test skipped, since it must start empty with these settings."""
import os
import re
import shutil
import subprocess
import time

import pytest
from cassandra import ConsistencyLevel, DriverException
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster, NoHostAvailable
from cassandra.policies import RoundRobinPolicy
from cassandra.query import SimpleStatement

from conftest import connect
from helenus_node import BIN, Node
from test_guardrails import GUARDRAILS

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REFCASS = os.environ.get("REFCASS") or shutil.which("refcass") or \
    os.path.join(REPO, "..", "shared", "tools", "refcass")
REF_ADDR = os.environ.get("REFCASS_GUARDRAILS_ADDR", "127.0.0.42")
REF_LOG = os.path.join(os.environ.get("REFCASS_HOME", os.path.expanduser("~/.cache/refcass")),
                       "run", REF_ADDR, "logs", "system.log")
START_TIMEOUT = 300  # seconds; a loaded machine starts Cassandra in 30-90

SIMPLE = "{'class': 'SimpleStrategy', 'replication_factor': %d}"
NTS = "{'class': 'NetworkTopologyStrategy', 'datacenter1': %d}"
COLUMNS = ", ".join(f"c{i} int" for i in range(9))
WIDER = ", ".join(f"c{i} int" for i in range(11))
TWCS = "{'class': 'TimeWindowCompactionStrategy'}"
ROW = "WHERE k = 1 AND c = 1 AND d = 1"
KEY = ("t = '2024-01-02 03:04:05.678+0000' AND u = 01234567-0123-0123-0123-0123456789ab AND "
       "b = true AND x = 0xcafe AND d = 1.5 AND i = '10.0.0.1'")


def batch(kind, statements):
    return f"BEGIN {kind}BATCH " + " ".join(s + ";" for s in statements) + " APPLY BATCH"


def inserts(partitions, value):
    return [f"INSERT INTO gdiff.c (k, c, d, v) VALUES ({k}, 1, 1, '{'x' * value}')"
            for k in range(partitions)]


# (statement, page size, consistency), run in order on both servers.
STEPS = [
    # schema: counts, replication factors, flags
    (f"CREATE KEYSPACE gdiff WITH replication = {SIMPLE % 1}",),
    ("CREATE TABLE gdiff.c (k int, c int, d int, v text, l list<int>, s set<text>, "
     "m map<int, text>, PRIMARY KEY (k, c, d))",),
    ("CREATE TABLE gdiff.k (t timestamp, u uuid, b boolean, x blob, d double, i inet, c int, "
     "PRIMARY KEY ((t, u, b, x, d, i), c))",),
    (f"CREATE KEYSPACE g2 WITH replication = {SIMPLE % 2}",),
    (f"CREATE KEYSPACE g3 WITH replication = {NTS % 6}",),
    (f"CREATE KEYSPACE g4 WITH replication = {NTS % 2}",),
    (f"CREATE KEYSPACE g5 WITH replication = {SIMPLE % 2}",),
    (f"CREATE KEYSPACE g6 WITH replication = {SIMPLE % 2}",),
    (f"CREATE KEYSPACE IF NOT EXISTS g2 WITH replication = {SIMPLE % 2}",),
    (f"ALTER KEYSPACE g2 WITH replication = {SIMPLE % 4}",),
    (f"ALTER KEYSPACE g2 WITH replication = {SIMPLE % 7}",),
    ("DROP KEYSPACE g5",),
    ("DROP KEYSPACE IF EXISTS nosuch",),
    (f"CREATE TABLE g2.wide (k int PRIMARY KEY, {COLUMNS})",),
    (f"CREATE TABLE g2.wider (k int PRIMARY KEY, {WIDER})",),
    ("ALTER TABLE g2.wide ADD c9 int",),
    ("ALTER TABLE g2.wide DROP c8",),
    ("ALTER TABLE g2.wide ADD c8 int",),
    ("CREATE TABLE g2.plain (k int PRIMARY KEY) WITH compression = {'enabled': false}",),
    ("ALTER TABLE g2.wide WITH compression = {'enabled': false}",),
    (f"CREATE TABLE g2.tw (k int PRIMARY KEY) WITH compaction = {TWCS}",),
    (f"CREATE TABLE g2.tw2 (k int PRIMARY KEY) WITH compaction = {TWCS} AND default_time_to_live = 60",),
    ("CREATE TYPE g2.pair (a int, b int, c int)",),
    ("CREATE TYPE g2.quad (a int, b int, c int, d int)",),
    ("CREATE TYPE g2.two (a int, b int)",),
    ("ALTER TYPE g2.two ADD c int",),
    ("ALTER TYPE g2.two ADD IF NOT EXISTS c int",),
    ("ALTER TYPE g2.two ADD d int",),
    ("ALTER TYPE g2.two ADD a int",),
    ("CREATE TABLE g4.t0 (k int PRIMARY KEY)",),
    ("CREATE TABLE g4.t1 (k int PRIMARY KEY)",),
    ("CREATE TABLE IF NOT EXISTS g4.t1 (k int PRIMARY KEY)",),
    ("TRUNCATE g4.t0",),
    # reads
    ("SELECT * FROM gdiff.c", 101),
    ("SELECT * FROM gdiff.c", 5000),
    ("SELECT * FROM gdiff.c", None),
    ("SELECT * FROM gdiff.c LIMIT 101", 101),
    ("SELECT * FROM gdiff.c LIMIT 102", 101),
    ("SELECT count(*) FROM gdiff.c WHERE k = 1 LIMIT 5", 101),
    ("SELECT * FROM system.local", 101),
    ("SELECT * FROM gdiff.c WHERE k IN (1, 2, 3)",),
    ("SELECT * FROM gdiff.c WHERE k IN (1, 1, 1)",),
    ("SELECT * FROM gdiff.c WHERE k IN (1, 2, 3, 4, 5) LIMIT 1",),
    ("SELECT * FROM gdiff.c WHERE k = 1 AND c IN (1, 2, 3, 4, 5) AND d IN (1)",),
    ("SELECT * FROM gdiff.c WHERE k = 1 AND c IN (1, 2, 3, 4, 5) AND d > 1",),
    ("SELECT * FROM gdiff.c WHERE k = 1 AND c IN (1, 2, 3, 4, 5) AND d IN (1, 2)",),
    ("SELECT * FROM gdiff.c WHERE k IN (1, 2) AND c IN (1, 2, 3) AND d IN (1)",),
    ("SELECT * FROM gdiff.c WHERE k IN () AND c IN (1, 2, 3, 4, 5) AND d IN (1, 2)",),
    ("SELECT * FROM gdiff.c WHERE v = 'a' ALLOW FILTERING",),
    ("SELECT * FROM system_schema.tables WHERE table_name = 'c' ALLOW FILTERING",),
    ("SELECT k, count(*) FROM gdiff.c GROUP BY k",),
    ("SELECT * FROM gdiff.c WHERE k = 1", 100, ConsistencyLevel.EACH_QUORUM),
    # writes
    ("INSERT INTO gdiff.c (k, c, d, l) VALUES (1, 1, 1, [1, 2, 3])",),
    (f"UPDATE gdiff.c SET l = l + [1, 2, 3, 4, 5] {ROW}",),
    (f"UPDATE gdiff.c SET l = [1, 2, 3] + l {ROW}",),
    ("INSERT INTO gdiff.c (k, c, d, s) VALUES (1, 1, 1, {'%s', '%s'})" % ("a" * 42, "b" * 42),),
    ("INSERT INTO gdiff.c (k, c, d, m) VALUES (1, 1, 1, {1: '%s', 2: '%s'})" % ("a" * 42, "b" * 42),),
    (f"UPDATE gdiff.c SET m[3] = 'x' {ROW}",),
    (f"UPDATE gdiff.c SET m = m + {{4: 'a', 5: 'b', 6: 'c'}} {ROW}",),
    (f"UPDATE gdiff.c SET s = s - {{'a', 'b', 'c'}} {ROW}",),
    ("INSERT INTO gdiff.c (k, c, d, v) VALUES (1, 1, 1, '%s')" % ("x" * 150),),
    ("INSERT INTO gdiff.c (k, c, d, v) VALUES (1, 1, 1, '%s')" % ("x" * 250),),
    (f"UPDATE gdiff.c SET l[0] = 5 {ROW}",),
    (f"UPDATE gdiff.c SET l = l - [5] {ROW}",),
    (f"DELETE l[0] FROM gdiff.c {ROW}",),
    ("INSERT INTO gdiff.c (k, c, d) VALUES (1, 1, 1)", 100, ConsistencyLevel.ALL),
    ("INSERT INTO gdiff.c (k, c, d) VALUES (1, 1, 1)", 100, ConsistencyLevel.ANY),
    ("UPDATE gdiff.c SET v = 'a' WHERE k IN (1, 2, 3, 4, 5) AND c = 1 AND d = 1",),
    ("UPDATE gdiff.c SET v = 'a' WHERE k IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10) AND c = 1 AND d = 1",),
    ("UPDATE gdiff.c SET v = 'a' WHERE k = 1 AND c IN (1, 2, 3, 4, 5) AND d = 1",),
    ("INSERT INTO gdiff.c (k, c, d) VALUES (1, 1, 1) USING TIMESTAMP 99999999999999999",),
    ("INSERT INTO gdiff.c (k, c, d) VALUES (1, 1, 1) USING TIMESTAMP 1000",),
    (batch("", ["INSERT INTO gdiff.c (k, c, d) VALUES (1, 1, 1) USING TIMESTAMP 99999999999999999"]),),
    # grown by appends that each pass, then reported at flush
    ("UPDATE gdiff.c SET l = l + [1, 2] WHERE k = 5 AND c = 1 AND d = 1",),
    ("UPDATE gdiff.c SET l = l + [1, 2] WHERE k = 5 AND c = 1 AND d = 1",),
    ("UPDATE gdiff.c SET l = l + [1, 2] WHERE k = 5 AND c = 1 AND d = 1",),
    ("UPDATE gdiff.c SET s = s + {'%s', '%s'} WHERE k = 5 AND c = 2 AND d = 1" % ("a" * 20, "b" * 21),),
    ("UPDATE gdiff.c SET s = s + {'%s'} WHERE k = 5 AND c = 2 AND d = 1" % ("c" * 20),),
    ("UPDATE gdiff.c SET s = s - {'%s'} WHERE k = 5 AND c = 2 AND d = 1" % ("a" * 20),),
    ("DELETE FROM gdiff.c WHERE k = 7 AND c = 1",),
    ("DELETE FROM gdiff.c WHERE k = 7 AND c = 2 AND d = 1",),
    ("DELETE FROM gdiff.c WHERE k = 7 AND c = 3 AND d = 1",),
    ("DELETE v FROM gdiff.c WHERE k = 7 AND c = 4 AND d = 1",),
    ("DELETE FROM gdiff.c WHERE k = 7 AND c > 5",),
    *((f"DELETE FROM gdiff.k WHERE {KEY} AND c = {c}",) for c in range(6)),
    # batches: Cassandra's default thresholds (5KiB warned, 50KiB refused, 10 partitions)
    (batch("", inserts(60, 100)),),
    (batch("", inserts(400, 100)),),
    (batch("UNLOGGED ", inserts(11, 1)),),
    (batch("UNLOGGED ", inserts(10, 1)),),
    (batch("", ["INSERT INTO gdiff.c (k, c, d, l) VALUES (%d, 1, 1, [1, 2, 3])" % k for k in range(2)]),),
]

REPORTED = ("Guardrail ", "Batch for ", "Unlogged batch ")


def outcome(session, query, page_size=100, consistency=ConsistencyLevel.ONE):
    """What a step produced, comparable across servers: the guardrail and batch warnings (not
    Cassandra's other warnings, such as a replication factor above the node count), or the
    error's class and text (code and message); times in the timestamp guardrails are left out."""
    statement = SimpleStatement(query, fetch_size=page_size, consistency_level=consistency)
    future = session.execute_async(statement, timeout=60)
    try:
        future.result()
    except DriverException as e:
        return ("error", type(e).__name__, _timeless(str(e)))
    return ("ok", [_timeless(w) for w in future.warnings or [] if w.startswith(REPORTED)])


def _timeless(message):
    return re.sub(r"(allowable (?:warning|failure) threshold) \d+", r"\1 T", message)


def _refcass_missing():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Java is not installed: no Cassandra reference to compare with"
    if not os.path.isfile(REFCASS):
        return f"refcass script not found at {REFCASS}"
    return None


def _refcass(command, *args, timeout=120):
    return subprocess.run([REFCASS, command, "--addr", REF_ADDR, *args], capture_output=True,
                          text=True, timeout=timeout)


def _login(user):
    cluster = Cluster([REF_ADDR], protocol_version=5, connect_timeout=10,
                      auth_provider=PlainTextAuthProvider(user, user),
                      load_balancing_policy=RoundRobinPolicy())
    return cluster, cluster.connect()


def _start_reference():
    """Starts refcass empty with the guardrails and PasswordAuthenticator; returns once the
    default superuser can log in. refcass's own readiness probe cannot log in, so its start
    command is watched here and stopped once the node answers."""
    env = dict(os.environ, REFCASS_YAML=GUARDRAILS + "authenticator: PasswordAuthenticator\n",
               REFCASS_START_TIMEOUT=str(START_TIMEOUT))
    starter = subprocess.Popen([REFCASS, "start", "--addr", REF_ADDR, "--heap", "1G", "--fresh"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + START_TIMEOUT
    try:
        while time.time() < deadline:
            try:
                return _login("cassandra")
            except NoHostAvailable:
                if starter.poll() is not None and starter.returncode != 0:
                    pytest.skip(f"refcass start failed: {starter.stderr.read()[-500:]}")
                time.sleep(2)
        pytest.skip(f"refcass did not accept a login within {START_TIMEOUT} s")
    finally:
        if starter.poll() is None:
            starter.terminate()
            starter.wait(timeout=10)


@pytest.fixture(scope="module")
def reference():
    """A session of an ordinary role on a fresh Cassandra 5.0.4 (stopped afterwards)."""
    reason = _refcass_missing()
    if reason:
        pytest.skip(reason)
    if _refcass("status").returncode == 0:
        pytest.skip(f"a refcass already runs at {REF_ADDR}; this test needs a fresh one")
    try:
        admin_cluster, admin = _start_reference()
        admin.execute("CREATE ROLE plain WITH PASSWORD = 'plain' AND LOGIN = true AND SUPERUSER = false")
        admin_cluster.shutdown()
        cluster, session = _login("plain")
        yield session
        cluster.shutdown()
    finally:
        _refcass("stop")


@pytest.fixture(scope="module")
def ours():
    node = Node(extra_yaml=GUARDRAILS).start()
    cluster, session = connect(node, protocol_version=5)
    yield node, session
    cluster.shutdown()
    node.cleanup()


def flush_log(lines):
    """The collection and tombstone messages about gdiff's tables, without SSTable paths, by
    table (in the order written: the tables of a keyspace flush in any order)."""
    found = {}
    for line in lines:
        message = line.partition(" - ")[2].strip()
        table = re.search(r"(?:in table |Partition )gdiff\.(\w+)", message)
        if table and ("collection" in message or "tombstones" in message):
            found.setdefault(table.group(1), []).append(re.sub(r" on sstable \S+", "", message))
    return found


def test_guardrails_match_cassandra(ours, reference):
    node, session = ours
    mismatches = []
    for step in STEPS:
        mine, theirs = outcome(session, *step), outcome(reference, *step)
        if mine != theirs:
            mismatches.append(f"{step[0][:120]}\n  helenus:   {mine}\n  cassandra: {theirs}")
    assert not mismatches, "\n".join(mismatches)
    start = os.path.getsize(REF_LOG)
    flushed = subprocess.run([BIN, "nodetool", "-p", str(node.admin_port), "flush", "gdiff"],
                             capture_output=True, text=True, timeout=60)
    assert flushed.returncode == 0, flushed.stderr
    assert _refcass("nodetool", "flush", "gdiff").returncode == 0
    with open(os.path.join(node.data_dir, "logs", "system.log")) as f:
        mine = flush_log(f)
    deadline = time.time() + 30
    while True:
        with open(REF_LOG, errors="replace") as f:
            f.seek(start)
            theirs = flush_log(f)
        if theirs == mine or time.time() > deadline:
            break
        time.sleep(1)
    assert set(mine) == {"c", "k"}
    for table in sorted(set(mine) | set(theirs)):
        helenus, cassandra = mine.get(table, []), theirs.get(table, [])
        assert helenus == cassandra, \
            "\n".join([f"gdiff.{table} helenus:", *helenus, "cassandra:", *cassandra])
