"""DROP, TRUNCATE and ALTER TABLE while the table's flushes and compactions run (issue 27), as
the issue reproduced it: a table created, written and flushed four times (the fourth SSTable
starts a compaction), then at once dropped, truncated or altered, in a loop. Cassandra 5.0.4
drops tables under compaction routinely (the compactions are interrupted); the node must keep
serving CQL and schema changes, declare no disk failure, and on a cluster every node must apply
every schema change."""
import json
import os
import urllib.request

from cluster import ADMIN_PORT, LocalCluster
from conftest import connect
from helenus_node import Node

KEYSPACE = "CREATE KEYSPACE ks WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': {rf}}}"
TABLE = "CREATE TABLE ks.t (k int, c int, v text, PRIMARY KEY (k, c))"
ALTER = ("ALTER TABLE ks.t WITH compaction = {'class': 'LeveledCompactionStrategy'} "
         "AND compression = {'class': 'ZstdCompressor'}")
# What the node logged when the DROP took it out of service.
FAILURES = ("disk_failure_policy", "Stopping native transport", "cannot apply the schema")


def admin(url, body=None):
    """GETs (or POSTs `body` to) an admin API URL; the JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read() or b"null")


def write_and_flush(session, admins, rounds=4):
    """`rounds` times a row then a flush of ks.t on every node: the fourth SSTable starts a
    compaction."""
    for i in range(rounds):
        session.execute(f"INSERT INTO ks.t (k, c, v) VALUES ({i}, {i}, 'x')")
        for url in admins:
            admin(f"{url}/v1/flush", {"keyspace": "ks", "tables": ["t"]})


def churn(session, admins, rounds):
    """`rounds` times: ks.t created, written and flushed, then dropped at once; every third
    round truncated (and written and flushed again) first, every third altered (compaction
    strategy and compression switched) first."""
    for r in range(rounds):
        session.execute(TABLE)
        write_and_flush(session, admins)
        if r % 3 == 1:
            session.execute("TRUNCATE ks.t")
            assert list(session.execute("SELECT * FROM ks.t")) == [], r
            write_and_flush(session, admins)
        elif r % 3 == 2:
            session.execute(ALTER)
            assert len(list(session.execute("SELECT * FROM ks.t"))) == 4, r
        session.execute("DROP TABLE ks.t")


def assert_serves_schema_changes(session):
    session.execute("CREATE TABLE ks.after (k int PRIMARY KEY, v int)")
    session.execute("INSERT INTO ks.after (k, v) VALUES (1, 1)")
    assert session.execute("SELECT v FROM ks.after WHERE k = 1").one().v == 1


def logged_failures(path):
    """The lines of the node's log at `path` that tell of a failure."""
    with open(path, errors="replace") as f:
        lines = f.readlines()
    assert any("flushed ks.t" in line for line in lines), f"{path} is the node's log"
    return [line for line in lines if any(failure in line for failure in FAILURES)]


def test_one_node_drops_truncates_and_alters_tables_under_compaction():
    node = Node().start()
    driver, session = connect(node)
    try:
        session.execute(KEYSPACE.format(rf=1))
        url = f"http://127.0.0.1:{node.admin_port}"
        churn(session, [url], rounds=30)
        assert admin(f"{url}/v1/binary") == {"running": True}
        assert_serves_schema_changes(session)
        assert logged_failures(node.log_path) == []
        # Nothing of the dropped tables is left but their automatic snapshots.
        ks = os.path.join(node.data_dir, "data", "ks")
        for table in os.listdir(ks):
            if table.startswith("t-"):
                assert os.listdir(os.path.join(ks, table)) == ["snapshots"], table
    finally:
        driver.shutdown()
        node.cleanup()


def test_three_nodes_apply_every_drop_truncate_and_alter_under_compaction():
    with LocalCluster(nodes=3) as cluster:
        session = cluster.node(1).session()
        session.execute(KEYSPACE.format(rf=3))
        admins = [f"http://{n.address}:{ADMIN_PORT}" for n in cluster.nodes]
        churn(session, admins, rounds=9)
        assert_serves_schema_changes(session)
        schemas = []
        for node in cluster.nodes:
            assert admin(f"http://{node.address}:{ADMIN_PORT}/v1/binary") == {"running": True}
            mine = node.session()
            tables = {r.table_name for r in mine.execute(
                "SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'ks'")}
            version = mine.execute("SELECT schema_version FROM system.local").one().schema_version
            schemas.append((tables, version))
            assert logged_failures(os.path.join(node.dir, "logs", "system.log")) == [], node
        assert schemas[0][0] == {"after"}
        assert all(s == schemas[0] for s in schemas), schemas
