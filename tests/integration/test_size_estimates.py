"""system.size_estimates and system.table_estimates (issue 27, point 7): per primary token
range of the node, the partitions of each user table and their mean size, estimated from the
SSTables as Cassandra 5.0.4 estimates them. Against Cassandra 5.0.4 (refcass, 16 tokens): 1,000
partitions flushed read 1,033 over 17 ranges, 10,000 read 10,112, with a mean partition size of
29 bytes; a table not yet flushed reads 0; both range types of table_estimates hold the same."""
import pytest

from test_differential import fresh_keyspace
from test_guardrails import nodetool


@pytest.fixture
def db(node):
    yield from fresh_keyspace(node, "se")


def estimates(db, table):
    """(range_start, range_end, partitions_count, mean_partition_size) rows."""
    return list(db.execute(
        "SELECT range_start, range_end, partitions_count, mean_partition_size "
        f"FROM system.size_estimates WHERE keyspace_name = '{db.keyspace}' "
        f"AND table_name = '{table}'"))


def fill(db, table, count):
    db.execute(f"CREATE TABLE {table} (k int PRIMARY KEY, v text)")
    insert = db.prepare(f"INSERT INTO {table} (k, v) VALUES (?, 'x')")
    for k in range(count):
        db.execute(insert, (k,))


def test_flushed_partitions_are_estimated_per_primary_range(node, db):
    fill(db, "t1000", 1000)
    fill(db, "unflushed", 300)
    nodetool(node, "flush", db.keyspace, "t1000")
    nodetool(node, "refreshsizeestimates")
    rows = estimates(db, "t1000")
    tokens = sorted(int(t) for t in db.execute("SELECT tokens FROM system.local").one()[0])
    # One range per token, the wrapping one split at the minimum token.
    assert len(rows) == len(tokens) + 1
    assert {(r[0], r[1]) for r in rows} >= {
        (str(tokens[-1]), str(-2**63)), (str(-2**63), str(tokens[0]))}
    total = sum(r[2] for r in rows)
    assert 1000 <= total <= 1000 + len(rows), total
    assert {r[3] for r in rows} == {rows[0][3]}
    assert 10 < rows[0][3] < 100, rows[0][3]
    assert sum(r[2] for r in estimates(db, "unflushed")) == 0
    typed = list(db.execute(
        "SELECT range_type, partitions_count FROM system.table_estimates "
        f"WHERE keyspace_name = '{db.keyspace}' AND table_name = 't1000'"))
    assert {r[0] for r in typed} == {"primary", "local_primary"}
    assert sum(r[1] for r in typed) == 2 * total


def test_a_dropped_table_loses_its_estimates(node, db):
    fill(db, "gone", 10)
    nodetool(node, "flush", db.keyspace, "gone")
    nodetool(node, "refreshsizeestimates")
    assert estimates(db, "gone")
    db.execute("DROP TABLE gone")
    nodetool(node, "refreshsizeestimates")
    assert estimates(db, "gone") == []
