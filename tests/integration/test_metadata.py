"""Drivers and cqlsh read the system tables: cluster metadata, DESCRIBE."""

from conftest import connect, cqlsh


def setup_schema(session):
    session.execute("CREATE KEYSPACE IF NOT EXISTS meta WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE IF NOT EXISTS meta.events (day date, at timestamp, id uuid, kind text, n bigint, "
                    "PRIMARY KEY ((day, kind), at, id)) WITH CLUSTERING ORDER BY (at DESC, id ASC) "
                    "AND comment = 'events' AND gc_grace_seconds = 3600")


def test_driver_builds_metadata(node):
    cluster, session = connect(node)
    setup_schema(session)
    cluster.refresh_schema_metadata()
    ks = cluster.metadata.keyspaces["meta"]
    table = ks.tables["events"]
    assert [c.name for c in table.partition_key] == ["day", "kind"]
    assert [c.name for c in table.clustering_key] == ["at", "id"]
    assert table.options["comment"] == "events"
    assert table.options["gc_grace_seconds"] == 3600
    text = ks.export_as_string()
    assert "CREATE TABLE meta.events" in text
    assert "CLUSTERING ORDER BY (at DESC, id ASC)" in text
    assert "system" in cluster.metadata.keyspaces
    host = list(cluster.metadata.all_hosts())[0]
    assert host.release_version.startswith("5.0")
    assert len(cluster.metadata.token_map.ring) > 0
    cluster.shutdown()



def test_cqlsh_describe_and_select(node):
    cluster, session = connect(node)
    setup_schema(session)
    session.execute("INSERT INTO meta.events (day, kind, at, id, n) VALUES ('2026-11-22', 'x', '2026-11-22 10:00:00+0000', "
                    "6ab09bec-e68e-48d9-a5f8-97e6fb4c9b47, 42)")
    cluster.shutdown()
    out = cqlsh(node, "DESCRIBE KEYSPACES")
    assert "meta" in out and "system_schema" in out
    out = cqlsh(node, "DESCRIBE TABLE meta.events")
    assert "CREATE TABLE meta.events" in out
    assert "PRIMARY KEY ((day, kind), at, id)" in out
    out = cqlsh(node, "SELECT kind, n FROM meta.events")
    assert "42" in out and "(1 rows)" in out
