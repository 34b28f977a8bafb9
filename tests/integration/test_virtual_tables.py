"""Virtual keyspaces system_views and system_virtual_schema: live contents read through the
ordinary SELECT path (key restrictions, filtering, LIMIT, paging), writes refused as
Cassandra refuses them, the Python driver's and cqlsh's view of them, and their schemas
compared with Apache Cassandra 5.0.4 when the reference node is available."""

import pytest
from cassandra import InvalidRequest
from cassandra.query import SimpleStatement

from conftest import connect, cqlsh
from test_differential import reference, _session  # noqa: F401 (pytest fixture)
from test_nodetool import ok as nodetool_ok

SERVED = {
    "system_views": {
        "caches", "clients", "coordinator_read_latency", "coordinator_scan_latency",
        "coordinator_write_latency", "disk_usage", "local_read_latency", "local_scan_latency",
        "local_write_latency", "max_partition_size", "repairs", "rows_per_read", "settings",
        "sstable_tasks", "streaming", "thread_pools", "tombstones_per_read",
    },
    "system_virtual_schema": {"columns", "keyspaces", "tables"},
}


@pytest.fixture(scope="module")
def sess(node):
    cluster, session = connect(node)
    session.execute("CREATE KEYSPACE IF NOT EXISTS vt WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE IF NOT EXISTS vt.kv (k int PRIMARY KEY, v text)")
    yield session
    cluster.shutdown()


def test_virtual_schema_lists_every_served_table(sess):
    keyspaces = {r.keyspace_name for r in sess.execute("SELECT * FROM system_virtual_schema.keyspaces")}
    assert keyspaces == set(SERVED)
    for ks, tables in SERVED.items():
        rows = sess.execute("SELECT table_name FROM system_virtual_schema.tables WHERE keyspace_name = %s", [ks])
        assert {r.table_name for r in rows} == tables
    cols = sess.execute("SELECT column_name, kind, position, type FROM system_virtual_schema.columns "
                        "WHERE keyspace_name = 'system_views' AND table_name = 'clients'")
    by_name = {r.column_name: r for r in cols}
    assert (by_name["address"].kind, by_name["address"].type) == ("partition_key", "inet")
    assert (by_name["port"].kind, by_name["port"].position) == ("clustering", 0)
    assert by_name["client_options"].type == "frozen<map<text, text>>"
    # Virtual keyspaces are not in system_schema.
    stored = {r.keyspace_name for r in sess.execute("SELECT keyspace_name FROM system_schema.keyspaces")}
    assert not stored & set(SERVED)


def test_clients_lists_live_connections(node, sess):
    others = [connect(node, protocol_version=v) for v in (4, 5)]
    try:
        others[0][1].execute("USE vt")
        rows = list(sess.execute("SELECT * FROM system_views.clients"))
        assert len(rows) >= 3  # this session's connections plus the two new clusters'
        assert all(r.connection_stage == "ready" and r.username == "anonymous" for r in rows)
        assert {r.protocol_version for r in rows} >= {4, 5}
        assert any(r.keyspace_name == "vt" for r in rows)
        assert all(r.driver_name == r.client_options["DRIVER_NAME"] and "Python" in r.driver_name
                   for r in rows)
        assert all(r.client_options.get("CQL_VERSION") for r in rows)
        assert sum(r.request_count for r in rows) > 0
        # The partition key restricts to one address; the clustering column to one port.
        one = rows[0]
        same = list(sess.execute("SELECT port FROM system_views.clients WHERE address = %s AND port = %s",
                                 [one.address, one.port]))
        assert [r.port for r in same] == [one.port]
    finally:
        for cluster, _ in others:
            cluster.shutdown()


def test_settings_filter_limit_and_paging(sess):
    rows = list(sess.execute("SELECT * FROM system_views.settings"))
    settings = {r.name: r.value for r in rows}
    assert [r.name for r in rows] == sorted(settings)  # key order, as Cassandra keeps it
    assert settings["cluster_name"]
    assert settings["native_transport_port"].isdigit()
    one = list(sess.execute("SELECT value FROM system_views.settings WHERE name = 'cluster_name'"))
    assert [r.value for r in one] == [settings["cluster_name"]]
    # Filtering on a regular column needs no ALLOW FILTERING on a virtual table.
    same = list(sess.execute("SELECT name FROM system_views.settings WHERE value = %s",
                             [settings["native_transport_port"]]))
    assert "native_transport_port" in {r.name for r in same}
    assert len(list(sess.execute("SELECT * FROM system_views.settings LIMIT 3"))) == 3
    paged = list(sess.execute(SimpleStatement("SELECT name FROM system_views.settings", fetch_size=5)))
    assert [r.name for r in paged] == [r.name for r in rows]
    count = sess.execute("SELECT count(*) FROM system_views.settings").one()[0]
    assert count == len(rows)
    prepared = sess.prepare("SELECT value FROM system_views.settings WHERE name = ?")
    assert sess.execute(prepared, ["cluster_name"]).one().value == settings["cluster_name"]


def test_settings_show_values_changed_at_run_time(node, sess):
    def setting(name):
        return sess.execute("SELECT value FROM system_views.settings WHERE name = %s", [name]).one().value

    nodetool_ok(node, "setcompactionthroughput", "17")
    nodetool_ok(node, "settimeout", "read", "1234")
    try:
        assert setting("compaction_throughput") == "17MiB/s"
        assert setting("read_request_timeout") == "1234ms"
    finally:
        nodetool_ok(node, "setcompactionthroughput", "64")
        nodetool_ok(node, "settimeout", "read", "5000")


def test_use_a_virtual_keyspace(node):
    cluster, session = connect(node)
    try:
        session.set_keyspace("system_views")
        assert session.execute("SELECT value FROM settings WHERE name = 'cluster_name'").one().value
    finally:
        cluster.shutdown()


def test_writes_and_truncate_are_refused(sess):
    with pytest.raises(InvalidRequest, match="Modification is not supported by table system_views.settings"):
        sess.execute("INSERT INTO system_views.settings (name, value) VALUES ('a', 'b')")
    with pytest.raises(InvalidRequest, match="Modification is not supported by table system_views.settings"):
        sess.execute("DELETE FROM system_views.settings WHERE name = 'a'")
    with pytest.raises(InvalidRequest, match="Truncation is not supported by table system_views.clients"):
        sess.execute("TRUNCATE system_views.clients")
    update = "UPDATE system_views.clients SET username = 'x' WHERE address = '127.0.0.1' AND port = 1;"
    with pytest.raises(InvalidRequest, match="Cannot include a virtual table statement in a logged batch"):
        sess.execute(f"BEGIN BATCH {update} APPLY BATCH")
    with pytest.raises(InvalidRequest, match="Mutations for virtual and regular tables cannot exist in the same batch"):
        sess.execute(f"BEGIN UNLOGGED BATCH INSERT INTO vt.kv (k, v) VALUES (1, 'a'); {update} APPLY BATCH")
    with pytest.raises(InvalidRequest, match="Modification is not supported by table system_views.clients"):
        sess.execute(f"BEGIN UNLOGGED BATCH {update} APPLY BATCH")
    with pytest.raises(InvalidRequest, match="table nope does not exist"):
        sess.execute("SELECT * FROM system_views.nope")


def latency(sess, table):
    return sess.execute(f"SELECT * FROM system_views.{table} "
                        "WHERE keyspace_name = 'vt' AND table_name = 'kv'").one()


def test_latency_and_per_table_figures_follow_requests(sess):
    before = {t: latency(sess, t).count for t in ("local_write_latency", "local_read_latency",
                                                 "coordinator_scan_latency", "rows_per_read")}
    for k in range(20):
        sess.execute("INSERT INTO vt.kv (k, v) VALUES (%s, 'x')", [k])
    for k in range(10):
        sess.execute("SELECT v FROM vt.kv WHERE k = %s", [k])
    sess.execute("SELECT * FROM vt.kv")
    writes = latency(sess, "local_write_latency")
    assert writes.count == before["local_write_latency"] + 20
    assert 0 < writes.p50th_ms <= writes.max_ms and writes.per_second > 0
    assert latency(sess, "coordinator_write_latency").count == writes.count
    assert latency(sess, "local_read_latency").count == before["local_read_latency"] + 10
    assert latency(sess, "coordinator_scan_latency").count == before["coordinator_scan_latency"] + 1
    rows_per_read = latency(sess, "rows_per_read")
    assert rows_per_read.count >= before["rows_per_read"] + 11 and rows_per_read.max >= 20
    assert latency(sess, "tombstones_per_read").count == rows_per_read.count
    for table in ("disk_usage", "max_partition_size"):
        assert latency(sess, table).mebibytes == 0  # nothing flushed yet


def test_caches_thread_pools_and_sstable_tasks(sess):
    keys = sess.execute("SELECT * FROM system_views.caches WHERE name = 'keys'").one()
    assert keys.capacity_bytes > 0 and keys.request_count == keys.hit_count + (keys.request_count - keys.hit_count)
    pools = {r.name: r for r in sess.execute("SELECT * FROM system_views.thread_pools")}
    assert pools["CompactionExecutor"].active_tasks_limit >= 1
    assert pools["Native-Transport-Requests"].completed_tasks > 0
    assert pools["MutationStage"].completed_tasks > 0
    assert list(sess.execute("SELECT * FROM system_views.sstable_tasks")) == []


def test_chunk_cache_row_follows_point_reads_of_flushed_data(node, sess):
    sess.execute("CREATE TABLE IF NOT EXISTS vt.chunked (k int PRIMARY KEY, v text)")
    for k in range(20):
        sess.execute("INSERT INTO vt.chunked (k, v) VALUES (%s, 'x')", [k])
    nodetool_ok(node, "flush", "vt", "chunked")
    query = "SELECT * FROM system_views.caches WHERE name = 'chunks'"
    before = sess.execute(query).one()
    assert before.capacity_bytes > 0  # on by default
    for _ in range(5):
        assert sess.execute("SELECT v FROM vt.chunked WHERE k = 7").one().v == "x"
    after = sess.execute(query).one()
    assert after.request_count >= before.request_count + 5
    assert after.hit_count >= before.hit_count + 4  # every read after the first
    assert after.entry_count >= 1 and 0 < after.size_bytes <= after.capacity_bytes
    info = nodetool_ok(node, "info")
    assert "\nChunk Cache            : entries " in info and " microseconds miss latency\n" in info


def test_driver_metadata_has_virtual_keyspaces(node):
    cluster, _ = connect(node, protocol_version=4)
    try:
        meta = cluster.metadata.keyspaces
        assert meta["system_views"].virtual and meta["system_virtual_schema"].virtual
        clients = meta["system_views"].tables["clients"]
        assert [c.name for c in clients.primary_key] == ["address", "port"]
        assert set(meta["system_views"].tables) == SERVED["system_views"]
    finally:
        cluster.shutdown()



def test_cqlsh_describe(node):
    out = cqlsh(node, "DESCRIBE KEYSPACES")
    assert "system_views" in out and "system_virtual_schema" in out
    out = cqlsh(node, "DESCRIBE TABLE system_views.clients")
    assert "VIRTUAL TABLE system_views.clients (" in out
    assert "PRIMARY KEY (address, port)" in out
    out = cqlsh(node, "SELECT name, value FROM system_views.settings WHERE name = 'cluster_name'")
    assert "(1 rows)" in out


def schema_rows(session, table):
    rows = session.execute(f"SELECT * FROM system_virtual_schema.{table}")
    # In Cassandra's order: virtual tables are kept in key order.
    return [tuple(r) for r in rows
            if r[0] in SERVED and (table == "keyspaces" or r[1] in SERVED[r[0]])]


def test_virtual_schema_matches_cassandra(node, reference):  # noqa: F811
    pairs = [_session(node.addr, node.port), _session(*reference)]
    try:
        for table in ("keyspaces", "tables", "columns"):
            ours, theirs = (schema_rows(s, table) for _, s in pairs)
            assert ours == theirs, table
        for ks, tables in SERVED.items():
            for table in tables:
                ours, theirs = (list(s.execute(f"DESCRIBE TABLE {ks}.{table}")) for _, s in pairs)
                assert ours == theirs, f"{ks}.{table}"
            ours, theirs = (list(s.execute(f"DESCRIBE KEYSPACE {ks}"))[0] for _, s in pairs)
            assert ours == theirs, ks
    finally:
        for cluster, _ in pairs:
            cluster.shutdown()
