//! Tests of the system keyspace definitions against what Cassandra 5.0.4 reports.
use super::*;
use crate::column::ColumnKind;

fn find(name: &str) -> Option<KeyspaceMetadata> {
    system_keyspaces().into_iter().find(|k| k.name == name)
}

#[test]
fn every_table_builds() {
    let counts: Vec<(String, usize)> = system_keyspaces()
        .into_iter()
        .map(|k| (k.name.clone(), k.tables.len()))
        .collect();
    let expected = [
        ("system_schema", 11),
        ("system", 23),
        ("system_auth", 8),
        ("system_distributed", 4),
        ("system_traces", 2),
    ];
    let expected: Vec<(String, usize)> =
        expected.iter().map(|(n, c)| (n.to_string(), *c)).collect();
    assert_eq!(counts, expected);
    for keyspace in system_keyspaces() {
        for (def, table) in KEYSPACES
            .iter()
            .find(|d| d.name == keyspace.name)
            .map(|d| d.tables)
            .unwrap_or(&[])
            .iter()
            .zip(keyspace.tables.values())
        {
            assert_eq!(def.columns.len(), table.columns.len(), "{}", def.name);
            assert!(!table
                .columns
                .iter()
                .any(|c| matches!(c.ty, CqlType::Custom(_))));
        }
    }
}

#[test]
fn replication_and_options_match_cassandra() -> Result<(), String> {
    let auth = find("system_auth").ok_or("no system_auth")?;
    assert_eq!(
        auth.replication.get("class").map(String::as_str),
        Some("org.apache.cassandra.locator.SimpleStrategy")
    );
    assert_eq!(
        auth.replication
            .get("replication_factor")
            .map(String::as_str),
        Some("1")
    );
    let roles = auth.table("roles").ok_or("no roles")?;
    assert_eq!(roles.options.gc_grace_seconds, 7_776_000);
    assert_eq!(roles.options.comment, "role definitions");
    assert_eq!(roles.id.to_string(), "5bc52802-de25-35ed-aeab-188eecebb090");
    let system = find("system").ok_or("no system")?;
    assert_eq!(system.replication.len(), 1);
    let paxos = system.table("paxos").ok_or("no paxos")?;
    assert_eq!(paxos.id.to_string(), "b7b7f0c2-fd0a-3410-8c05-3ef614bb7c2d");
    assert_eq!(paxos.options.memtable_flush_period_in_ms, 3_600_000);
    let history = system
        .table("compaction_history")
        .ok_or("no compaction_history")?;
    assert_eq!(history.options.default_time_to_live, 604_800);
    Ok(())
}

#[test]
fn local_table_columns() -> Result<(), String> {
    let system = find("system").ok_or("no system")?;
    let local = system.table("local").ok_or("no local")?;
    let key = local.partition_key_columns().next().ok_or("no key")?;
    assert_eq!(
        (key.name.as_str(), key.ty.cql_name()),
        ("key", "text".to_string())
    );
    let tokens = local.column("tokens").ok_or("no tokens")?;
    assert_eq!(tokens.ty.cql_name(), "set<text>");
    assert_eq!(tokens.kind, ColumnKind::Regular);
    assert_eq!(
        local.columns.last().map(|c| c.name.as_str()),
        Some("truncated_at")
    );
    Ok(())
}

#[test]
fn system_keyspace_names() {
    assert!(is_system_keyspace("system_views"));
    assert!(is_system_keyspace("system_schema"));
    assert!(!is_system_keyspace("ks"));
}

#[test]
fn virtual_tables_build_with_cassandra_keys() {
    let keyspaces = virtual_keyspaces();
    let names: Vec<&str> = keyspaces.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["system_views", "system_virtual_schema"]);
    assert_eq!(keyspaces[0].tables.len(), virtual_defs::SYSTEM_VIEWS.len());
    assert_eq!(keyspaces[1].tables.len(), 3);
    let clients = keyspaces[0].table("clients").expect("clients");
    let key: Vec<&str> = clients
        .partition_key_columns()
        .chain(clients.clustering_columns())
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(key, ["address", "port"]);
    assert_eq!(clients.options.comment, "currently connected clients");
    let tasks = keyspaces[0].table("sstable_tasks").expect("sstable_tasks");
    assert_eq!(tasks.clustering_columns().count(), 2);
    assert!(keyspaces
        .iter()
        .all(|k| k.tables.values().all(|t| !t.columns.is_empty())));
}
