"""Guardrails and batch checks through real nodes and the Python driver: warnings arrive in
`ResponseFuture.warnings`, failures are InvalidRequest (0x2200) with Cassandra 5.0.4's text,
values show in `system_views.settings`, and large partitions are logged at flush. Every message
here is what refcass (Cassandra 5.0.4, a non-superuser role) answered for the same settings."""
import os
import re
import subprocess
import time

import pytest
from cassandra import ConsistencyLevel, InvalidRequest
from cassandra.query import BatchStatement, BatchType, SimpleStatement

from conftest import connect
from helenus_node import BIN, Node

GUARDRAILS = """\
keyspaces_warn_threshold: 3
keyspaces_fail_threshold: 5
tables_warn_threshold: 4
tables_fail_threshold: 6
columns_per_table_warn_threshold: 8
columns_per_table_fail_threshold: 10
fields_per_udt_warn_threshold: 2
fields_per_udt_fail_threshold: 3
page_size_warn_threshold: 100
page_size_fail_threshold: 1000
partition_keys_in_select_warn_threshold: 2
partition_keys_in_select_fail_threshold: 4
in_select_cartesian_product_warn_threshold: 4
in_select_cartesian_product_fail_threshold: 9
items_per_collection_warn_threshold: 2
items_per_collection_fail_threshold: 4
collection_size_warn_threshold: 100B
collection_size_fail_threshold: 200B
column_value_size_warn_threshold: 100B
column_value_size_fail_threshold: 200B
minimum_replication_factor_warn_threshold: 2
maximum_replication_factor_warn_threshold: 3
maximum_replication_factor_fail_threshold: 5
maximum_timestamp_warn_threshold: 1d
maximum_timestamp_fail_threshold: 2d
read_before_write_list_operations_enabled: false
allow_filtering_enabled: false
user_timestamps_enabled: true
group_by_enabled: false
drop_keyspace_enabled: false
uncompressed_tables_enabled: false
read_consistency_levels_disallowed: [EACH_QUORUM]
write_consistency_levels_warned: [ALL]
write_consistency_levels_disallowed: [ANY]
partition_tombstones_warn_threshold: 5
partition_size_warn_threshold: 1KiB
"""

SIMPLE = "{'class': 'SimpleStrategy', 'replication_factor': 1}"


@pytest.fixture(scope="module")
def guarded():
    node = Node(extra_yaml=GUARDRAILS).start()
    yield node
    node.cleanup()


@pytest.fixture(scope="module")
def session(guarded):
    """A v5 session, with keyspace gd and its two tables made first: the schema test counts
    them among the keyspaces and tables."""
    cluster, s = connect(guarded, protocol_version=5)
    s.execute(f"CREATE KEYSPACE gd WITH replication = {SIMPLE}")
    s.execute("CREATE TABLE gd.c (k int, c int, d int, v text, l list<int>, s set<text>, "
              "m map<int, text>, PRIMARY KEY (k, c, d))")
    s.execute("CREATE TABLE gd.big (k text, c int, v text, l list<int>, PRIMARY KEY (k, c))")
    yield s
    cluster.shutdown()


def run(session, query, fetch_size=100, **kw):
    """(warnings, rows) of a statement that must succeed."""
    future = session.execute_async(SimpleStatement(query, fetch_size=fetch_size, **kw))
    rows = future.result()
    return future.warnings or [], rows


def refused(session, query, fetch_size=100, timeout=10, **kw):
    """The message of the InvalidRequest (0x2200) a statement must fail with."""
    with pytest.raises(InvalidRequest) as error:
        session.execute(SimpleStatement(query, fetch_size=fetch_size, **kw), timeout=timeout)
    found = re.fullmatch(r'Error from server: code=2200 \[Invalid query\] message="(.*)"', str(error.value), re.S)
    assert found, str(error.value)
    return found.group(1)


def setting(session, name):
    query = SimpleStatement("SELECT value FROM system_views.settings WHERE name = %s", fetch_size=100)
    return session.execute(query, (name,)).one().value


def test_settings_are_listed(session):
    assert setting(session, "keyspaces_warn_threshold") == "3"
    assert setting(session, "page_size_fail_threshold") == "1000"
    assert setting(session, "tables_warn_threshold") == "4"
    assert setting(session, "column_value_size_warn_threshold") == "100B"
    assert setting(session, "partition_size_warn_threshold") == "1KiB"
    assert setting(session, "partition_size_fail_threshold") is None
    assert setting(session, "read_consistency_levels_disallowed") == "[EACH_QUORUM]"
    assert setting(session, "allow_filtering_enabled") == "false"
    assert setting(session, "zero_ttl_on_twcs_warned") == "true"
    assert setting(session, "batch_size_warn_threshold") == "5KiB"
    assert setting(session, "unlogged_batch_across_partitions_warn_threshold") == "10"


def test_schema_guardrails(session):
    keyspaces = "Guardrail keyspaces violated: Creating keyspace {}, current number of keyspaces {} exceeds warning threshold of 3."
    warnings, _ = run(session, f"CREATE KEYSPACE g1 WITH replication = {SIMPLE}")
    assert warnings == ["Guardrail minimum_replication_factor violated: The keyspace g1 has a replication factor of 1, below the warning threshold of 2."]
    assert run(session, "CREATE KEYSPACE g2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}")[0] == []
    assert refused(session, "CREATE KEYSPACE g3 WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 6}") == \
        "Guardrail maximum_replication_factor violated: The keyspace g3 has a replication factor of 6, above the failure threshold of 5."
    warnings, _ = run(session, "CREATE KEYSPACE g4 WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 2}")
    assert warnings == [keyspaces.format("g4", 4)]
    warnings, _ = run(session, "CREATE KEYSPACE g5 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}")
    assert warnings == [keyspaces.format("g5", 5)]
    assert refused(session, f"CREATE KEYSPACE IF NOT EXISTS g1 WITH replication = {SIMPLE}") == \
        "Guardrail keyspaces violated: Cannot have more than 5 keyspaces, aborting the creation of keyspace g1"
    assert refused(session, "DROP KEYSPACE g5") == \
        "Guardrail drop_keyspace_enabled violated: DROP KEYSPACE functionality is not allowed"
    columns = ", ".join(f"c{i} int" for i in range(9))
    warnings, _ = run(session, f"CREATE TABLE g1.wide (k int PRIMARY KEY, {columns})")
    assert warnings == ["Guardrail columns_per_table violated: The table wide has 10 columns, this exceeds the warning threshold of 8."]
    assert refused(session, "ALTER TABLE g1.wide ADD c9 int") == \
        "Guardrail columns_per_table violated: Tables cannot have more than 10 columns, but 11 provided for table wide"
    assert refused(session, "CREATE TABLE g1.plain (k int PRIMARY KEY) WITH compression = {'enabled': false}") == \
        "Guardrail uncompressed_tables_enabled violated: Uncompressed table is not allowed"
    warnings, _ = run(session, "CREATE TABLE g1.tw (k int PRIMARY KEY) WITH compaction = {'class': 'TimeWindowCompactionStrategy'}")
    assert len(warnings) == 1 and warnings[0].startswith(
        "Guardrail zero_ttl_on_twcs violated: 0 default_time_to_live on a table with TimeWindowCompactionStrategy compaction strategy is not recommended. It is suspicious"), warnings
    warnings, _ = run(session, "CREATE TYPE g1.pair (a int, b int, c int)")
    assert warnings == ["Guardrail fields_per_udt violated: The user type pair has 3 columns, this exceeds the warning threshold of 2."]
    run(session, "CREATE TYPE g1.two (a int, b int)")
    warnings, _ = run(session, "ALTER TYPE g1.two ADD c int")
    assert warnings == ["Guardrail fields_per_udt violated: The user type two has 3 columns, this exceeds the warning threshold of 2."]
    assert refused(session, "ALTER TYPE g1.two ADD d int") == \
        "Guardrail fields_per_udt violated: User types cannot have more than 3 columns, but 4 provided for user type two."
    tables = "Guardrail tables violated: Creating table {}, current number of tables {} exceeds warning threshold of 4."
    assert run(session, "CREATE TABLE g2.t0 (k int PRIMARY KEY)")[0] == [tables.format("t0", 5)]
    assert run(session, "CREATE TABLE g2.t1 (k int PRIMARY KEY)")[0] == [tables.format("t1", 6)]
    assert refused(session, "CREATE TABLE g2.t2 (k int PRIMARY KEY)") == \
        "Guardrail tables violated: Cannot have more than 6 tables, aborting the creation of table t2"


def test_reads(session):
    s = session
    assert run(s, "SELECT * FROM gd.c", fetch_size=101)[0] == \
        ["Guardrail page_size violated: Query for table c with page size 101 exceeds warning threshold of 100."]
    assert refused(s, "SELECT * FROM gd.c", fetch_size=5000) == \
        "Guardrail page_size violated: Aborting query for table c, page size 5000 exceeds fail threshold of 1000."
    assert run(s, "SELECT * FROM gd.c", fetch_size=None)[0] == []
    # Cassandra checks the page size only of paged queries: a LIMIT within one page is read
    # unpaged, an aggregate is always paged.
    assert run(s, "SELECT * FROM gd.c LIMIT 101", fetch_size=101)[0] == []
    assert run(s, "SELECT * FROM gd.c LIMIT 5000", fetch_size=5000)[0] == []
    assert run(s, "SELECT * FROM gd.c LIMIT 102", fetch_size=101)[0] == \
        ["Guardrail page_size violated: Query for table c with page size 101 exceeds warning threshold of 100."]
    # Cassandra checks the page size, then warns about an aggregate over a table scan.
    assert run(s, "SELECT count(*) FROM gd.c LIMIT 5", fetch_size=101)[0] == \
        ["Guardrail page_size violated: Query for table c with page size 101 exceeds warning threshold of 100.",
         "Aggregation query used without partition key"]
    assert run(s, "SELECT * FROM gd.c WHERE k IN (1, 2, 3)")[0] == \
        ["Guardrail partition_keys_in_select violated: Query with partition keys in IN clause on table c, with number of partition keys 3 exceeds warning threshold of 2."]
    assert refused(s, "SELECT * FROM gd.c WHERE k IN (1, 2, 3, 4, 5)") == \
        "Guardrail partition_keys_in_select violated: Aborting query with partition keys in IN clause on table c, number of partition keys 5 exceeds fail threshold of 4."
    cartesian = "Guardrail in_select_cartesian_product violated: The cartesian product of the IN restrictions on clustering key produces 5 values, this exceeds warning threshold of 4."
    assert run(s, "SELECT * FROM gd.c WHERE k = 1 AND c IN (1, 2, 3, 4, 5) AND d IN (1)")[0] == [cartesian, cartesian]
    assert run(s, "SELECT * FROM gd.c WHERE k = 1 AND c IN (1, 2, 3, 4, 5) AND d > 1")[0] == []
    assert refused(s, "SELECT * FROM gd.c WHERE k = 1 AND c IN (1, 2, 3, 4, 5) AND d IN (1, 2)") == \
        "Guardrail in_select_cartesian_product violated: Aborting query because the cartesian product of the IN restrictions on clustering key produces 10 values, this exceeds fail threshold of 9."
    # a bound list of tuples counts as a literal one (Cassandra's valuesAsClustering)
    tuples = s.prepare("SELECT * FROM gd.c WHERE k = 1 AND (c, d) IN ?")
    tuples.fetch_size = 100
    future = s.execute_async(tuples, [[(i, i) for i in range(5)]])
    future.result()
    assert future.warnings == [cartesian]
    with pytest.raises(InvalidRequest, match="clustering key produces 10 values, this exceeds fail"):
        s.execute(tuples, [[(i, i) for i in range(10)]])
    assert refused(s, "SELECT * FROM gd.c WHERE v = 'a' ALLOW FILTERING") == \
        "Guardrail allow_filtering violated: Querying with ALLOW FILTERING is not allowed. ALLOW FILTERING can potentially visit all the data in the table and have unpredictable performance."
    run(s, "SELECT * FROM system_schema.tables WHERE table_name = 'c' ALLOW FILTERING")
    assert refused(s, "SELECT k, count(*) FROM gd.c GROUP BY k") == \
        "Guardrail group_by violated: GROUP BY functionality is not allowed"
    assert refused(s, "SELECT * FROM gd.c WHERE k = 1", consistency_level=ConsistencyLevel.EACH_QUORUM) == \
        "Guardrail read_consistency_levels violated: Provided values [EACH_QUORUM] are not allowed for read consistency levels (disallowed values are: [EACH_QUORUM])"


def test_prepared_reads_are_checked_at_each_execution(session):
    select = session.prepare("SELECT * FROM gd.c WHERE k IN ?")
    select.fetch_size = 100
    future = session.execute_async(select, ([1, 2, 3],))
    future.result()
    assert future.warnings == ["Guardrail partition_keys_in_select violated: Query with partition keys in IN clause on table c, with number of partition keys 3 exceeds warning threshold of 2."]
    with pytest.raises(InvalidRequest):
        session.execute(select, ([1, 2, 3, 4, 5],))


def test_writes(session):
    s = session
    assert run(s, "INSERT INTO gd.c (k, c, d, l) VALUES (1, 1, 1, [1, 2, 3])")[0] == [
        "Guardrail items_per_collection violated: Detected collection l with 3 items, this exceeds the warning threshold of 2.",
        "Guardrail collection_size violated: Detected collection l of size 120, this exceeds the warning threshold of 100."]
    assert refused(s, "UPDATE gd.c SET l = l + [1, 2, 3, 4, 5] WHERE k = 1 AND c = 1 AND d = 1") == \
        "Guardrail items_per_collection violated: Detected collection l with 5 items, this exceeds the failure threshold of 4."
    assert run(s, "INSERT INTO gd.c (k, c, d, s) VALUES (1, 1, 1, {'%s', '%s'})" % ("a" * 42, "b" * 42))[0] == \
        ["Guardrail collection_size violated: Detected collection s of size 124, this exceeds the warning threshold of 100."]
    assert run(s, "INSERT INTO gd.c (k, c, d, v) VALUES (1, 1, 1, '%s')" % ("x" * 150))[0] == \
        ["Guardrail column_value_size violated: Value of column 'v' has size 150, this exceeds the warning threshold of 100."]
    assert refused(s, "INSERT INTO gd.c (k, c, d, v) VALUES (1, 1, 1, '%s')" % ("x" * 250)) == \
        "Guardrail column_value_size violated: Value of column 'v' has size 250, this exceeds the failure threshold of 200."
    assert refused(s, "UPDATE gd.c SET l[0] = 5 WHERE k = 1 AND c = 1 AND d = 1") == \
        "Guardrail read_before_write_list_operations violated: Setting of list items by index requiring read before write is not allowed"
    assert refused(s, "DELETE l[0] FROM gd.c WHERE k = 1 AND c = 1 AND d = 1") == \
        "Guardrail read_before_write_list_operations violated: Removal of list items by index requiring read before write is not allowed"
    assert run(s, "INSERT INTO gd.c (k, c, d) VALUES (1, 1, 1)", consistency_level=ConsistencyLevel.ALL)[0] == \
        ["Guardrail write_consistency_levels violated: Provided values [ALL] are not recommended for write consistency levels (warned values are: [ALL])"]
    assert refused(s, "INSERT INTO gd.c (k, c, d) VALUES (1, 1, 1)", consistency_level=ConsistencyLevel.ANY) == \
        "Guardrail write_consistency_levels violated: Provided values [ANY] are not allowed for write consistency levels (disallowed values are: [ANY])"
    assert run(s, "UPDATE gd.c SET v = 'a' WHERE k IN (1, 2, 3, 4, 5) AND c = 1 AND d = 1")[0] == \
        ["Guardrail in_select_cartesian_product violated: The cartesian product of the IN restrictions on partition key produces 5 values, this exceeds warning threshold of 4."]
    future_ts = (int(time.time()) + 3 * 86400) * 1_000_000
    text = refused(s, f"INSERT INTO gd.c (k, c, d) VALUES (1, 1, 1) USING TIMESTAMP {future_ts}")
    assert re.fullmatch(
        rf"Guardrail maximum_timestamp violated: The modification to table c has a timestamp {future_ts} after the maximum allowable failure threshold \d+\. Timestamps too far in the future can lead to data that can't be easily overwritten",
        text), text
    assert run(s, "INSERT INTO gd.c (k, c, d) VALUES (1, 1, 1) USING TIMESTAMP 1000")[0] == []


def test_warnings_reach_protocol_v4_clients(guarded):
    cluster, s = connect(guarded, protocol_version=4)
    try:
        assert run(s, "SELECT * FROM system.local", fetch_size=101)[0] == \
            ["Guardrail page_size violated: Query for table local with page size 101 exceeds warning threshold of 100."]
    finally:
        cluster.shutdown()


def nodetool(node, *args):
    result = subprocess.run([BIN, "nodetool", "-p", str(node.admin_port), *args],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def system_log(node):
    with open(os.path.join(node.data_dir, "logs", "system.log")) as f:
        return f.read()


def test_large_partitions_are_logged_at_flush(guarded, session):
    """Partition size and tombstones, and collections grown past the thresholds by appends that
    each passed the write-time checks, are logged at flush as Cassandra 5.0.4 logs them."""
    s = session
    for _ in range(3):
        assert run(s, "UPDATE gd.big SET l = l + [1, 2] WHERE k = 'c' AND c = 1")[0] == []
    s.execute("UPDATE gd.big SET l = l + [3] WHERE k = 'c' AND c = 2")
    for c in range(20):
        s.execute("INSERT INTO gd.big (k, c, v) VALUES ('a:b', %s, %s)", (c, "x" * 90))
    for c in range(8):
        s.execute("DELETE FROM gd.big WHERE k = 'tomb' AND c = %s", (c,))
    nodetool(guarded, "flush", "gd", "big")
    log = system_log(guarded)
    size = re.search(r"Guardrail partition_size violated: Partition gd\.big:a:b on sstable (\S+) has size (\d+), "
                     r"this exceeds the warning threshold of 1024\. Too large partitions can cause performance problems\.", log)
    assert size, log[-3000:]
    assert size.group(1).endswith("Data.db") and int(size.group(2)) > 1800
    assert re.search(r"Guardrail partition_tombstones violated: Partition gd\.big:tomb on sstable \S+ has 8 tombstones, "
                     r"this exceeds the warning threshold of 5\. Partitions with too many tombstones can cause performance problems\.", log), log[-3000:]
    collection = "Guardrail {} violated: Detected collection l in row ('c', 1) in table gd.big {}, this exceeds the failure threshold of {}."
    for line in (collection.format("collection_size", "of size 252", 200),
                 collection.format("items_per_collection", "with 6 items", 4)):
        assert "ERROR [" in next((l for l in log.splitlines() if line in l), ""), (line, log[-3000:])
    assert "in row ('c', 2)" not in log


@pytest.fixture(scope="module")
def batches():
    """A node with Cassandra's default batch thresholds and no guardrails."""
    node = Node().start()
    cluster, s = connect(node, protocol_version=5)
    s.execute(f"CREATE KEYSPACE bk WITH replication = {SIMPLE}")
    s.execute("CREATE TABLE bk.t (k int, c int, v text, PRIMARY KEY (k, c))")
    s.execute("CREATE TABLE bk.u (k int PRIMARY KEY, v text)")
    yield node, s
    cluster.shutdown()
    node.cleanup()


def batch_text(kind, statements):
    return f"BEGIN {kind}BATCH " + " ".join(st + ";" for st in statements) + " APPLY BATCH"


def test_batch_size_warns_then_fails(batches):
    node, s = batches
    inserts = [f"INSERT INTO bk.t (k, c, v) VALUES ({k}, 1, '{'x' * 1000}')" for k in range(6)]
    assert run(s, batch_text("", inserts))[0] == ["Batch for [bk.t] is of size 6444, exceeding specified threshold of 5120 by 1324."]
    mixed = inserts[:4] + [f"INSERT INTO bk.u (k, v) VALUES ({k}, '{'y' * 1000}')" for k in range(2)]
    assert run(s, batch_text("", mixed))[0] == ["Batch for [bk.t, bk.u] is of size 6436, exceeding specified threshold of 5120 by 1316."]
    assert "Batch for [bk.t] is of size 6.293KiB, exceeding specified threshold of 5.000KiB by 1.293KiB." in system_log(node)
    big = [f"INSERT INTO bk.t (k, c, v) VALUES ({k}, 1, '{'x' * 1000}')" for k in range(60)]
    assert refused(s, batch_text("", big)) == "Batch too large"
    assert "Batch for [bk.t] is of size 62.930KiB, exceeding specified threshold of 50.000KiB by 12.930KiB. (see batch_size_fail_threshold)" in system_log(node)
    one_partition = [f"INSERT INTO bk.t (k, c, v) VALUES (1, {c}, '{'x' * 1000}')" for c in range(60)]
    assert run(s, batch_text("", one_partition))[0] == []


def test_unlogged_batches_over_many_partitions_warn(batches):
    _, s = batches
    inserts = [f"INSERT INTO bk.t (k, c, v) VALUES ({k}, 1, 'x')" for k in range(11)]
    assert run(s, batch_text("UNLOGGED ", inserts))[0] == [
        "Unlogged batch covering 11 partitions detected against table [bk.t]. You should use a logged batch for atomicity, or asynchronous writes for performance."]
    assert run(s, batch_text("UNLOGGED ", inserts[:10]))[0] == []
    assert run(s, batch_text("", inserts))[0] == []
    insert = s.prepare("INSERT INTO bk.u (k, v) VALUES (?, ?)")
    batch = BatchStatement(batch_type=BatchType.UNLOGGED)
    for k in range(6):
        batch.add(SimpleStatement(f"INSERT INTO bk.t (k, c, v) VALUES ({k}, 1, 'x')"))
        batch.add(insert, (k + 10, "y"))
    future = s.execute_async(batch)
    future.result()
    assert future.warnings == [
        "Unlogged batch covering 12 partitions detected against tables [bk.t, bk.u]. You should use a logged batch for atomicity, or asynchronous writes for performance."]


def test_a_50000_statement_batch_is_refused(batches):
    """Regression: a batch of 50,000 single-row inserts used to be written whole."""
    _, s = batches
    statements = [f"INSERT INTO bk.t (k, c, v) VALUES ({k}, {k}, 'x')" for k in range(50_000)]
    assert refused(s, batch_text("", statements), timeout=120) == "Batch too large"
    insert = s.prepare("INSERT INTO bk.t (k, c, v) VALUES (?, ?, 'p')")
    batch = BatchStatement(batch_type=BatchType.LOGGED)
    for k in range(50_000):
        batch.add(insert, (k, k))
    with pytest.raises(InvalidRequest, match="Batch too large"):
        s.execute(batch, timeout=120)
    assert s.execute("SELECT count(*) FROM bk.t WHERE k = 49999").one()[0] == 0
