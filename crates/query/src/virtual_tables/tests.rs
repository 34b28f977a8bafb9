//! Tests of the virtual table registry against the virtual schema.
use super::*;

#[test]
fn every_defined_table_has_a_producer_and_back() {
    let registry = VirtualTables::new();
    let produced: Vec<(&str, &str)> = registry.tables.iter().map(|t| t.name()).collect();
    let defined: Vec<(&str, &str)> = catalog()
        .iter()
        .flat_map(|k| {
            k.tables
                .values()
                .map(|t| (k.name.as_str(), t.name.as_str()))
        })
        .collect();
    for name in &defined {
        assert!(produced.contains(name), "{name:?} has no producer");
    }
    assert_eq!(produced.len(), defined.len());
}

#[test]
fn lookup_and_rejections() -> CqlResult<()> {
    assert!(lookup("system_views", "clients")?.is_some());
    assert!(lookup("ks", "clients")?.is_none());
    assert!(lookup("system_views", "nope").is_err());
    let settings = lookup("system_views", "settings")?.ok_or(CqlError::invalid("missing"))?;
    let err = reject(&settings, "Modification").err();
    assert_eq!(
        err,
        Some(CqlError::invalid(
            "Modification is not supported by table system_views.settings"
        ))
    );
    Ok(())
}

#[test]
fn schema_tables_describe_the_virtual_keyspaces() -> CqlResult<()> {
    let own = lookup("system_virtual_schema", "columns")?.ok_or(CqlError::invalid("missing"))?;
    let rows = schema_tables::catalog_rows("columns")?;
    let port = rows
        .iter()
        .find(|r| {
            r.get("table_name") == Some(&text("clients"))
                && r.get("column_name") == Some(&text("port"))
        })
        .ok_or(CqlError::invalid("no clients.port"))?;
    assert_eq!(port.get("kind"), Some(&text("clustering")));
    assert_eq!(port.get("type"), Some(&text("int")));
    assert!(rows
        .iter()
        .all(|r| r.keys().all(|c| own.column(c).is_some())));
    Snapshot::new(&own, &rows)?;
    let keyspaces = schema_tables::catalog_rows("keyspaces")?;
    assert_eq!(keyspaces.len(), 2);
    let tables = schema_tables::catalog_rows("tables")?;
    assert!(tables
        .iter()
        .any(|r| r.get("comment") == Some(&text("currently connected clients"))));
    Ok(())
}

fn names(partitions: &[mutation::Partition]) -> Vec<String> {
    partitions
        .iter()
        .map(|p| String::from_utf8_lossy(&p.key.key).into_owned())
        .collect()
}

#[tokio::test]
async fn snapshots_scan_in_key_order_and_resume_after_a_key() -> CqlResult<()> {
    use mutation::{KeyRange, PartitionPosition, ReadFilter, ReadStats, TableId};
    use types::Consistency;

    let table = lookup("system_views", "settings")?.ok_or(CqlError::invalid("missing"))?;
    let rows: Vec<ValueRow> = ["num_tokens", "auto_snapshot", "cluster_name", "rpc_address"]
        .iter()
        .map(|n| row(vec![("name", text(n)), ("value", text("v"))]))
        .collect();
    let snapshot = Snapshot::new(&table, &rows)?;
    let scope = ReadScope {
        keyspace: "system_views",
        table: TableId(table.id),
        cl: Consistency::One,
        now: 0,
        trace: None,
        policy: &coordinator::ReadPolicy::default(),
    };
    let (snapshot, scope) = (&snapshot, &scope);
    let scan = |range: KeyRange, limit: usize| async move {
        let mut stats = ReadStats::default();
        let filter = ReadFilter::all();
        snapshot
            .scan(scope, &range, &filter, limit, &mut stats)
            .await
    };
    let all = scan(KeyRange::all(), 10).await?;
    assert_eq!(
        names(&all),
        ["auto_snapshot", "cluster_name", "num_tokens", "rpc_address"]
    );
    let resumed = KeyRange {
        start: std::ops::Bound::Excluded(PartitionPosition::Key(all[1].key.clone())),
        end: std::ops::Bound::Unbounded,
    };
    assert_eq!(names(&scan(resumed.clone(), 1).await?), ["num_tokens"]);
    assert_eq!(
        names(&scan(resumed, 10).await?),
        ["num_tokens", "rpc_address"]
    );
    Ok(())
}
