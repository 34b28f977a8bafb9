//! Tests of the virtual table registry against the virtual schema.
use super::*;

/// The tables of this crate are among the defined ones (the `system` crate's tests check
/// that every defined table has a producer).
#[test]
fn every_table_here_is_defined() {
    let defined: Vec<(&str, &str)> = catalog()
        .iter()
        .flat_map(|k| {
            k.tables
                .values()
                .map(|t| (k.name.as_str(), t.name.as_str()))
        })
        .collect();
    for name in VirtualTables::new().names() {
        assert!(defined.contains(&name), "{name:?} is not defined");
    }
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
    for row in &rows {
        schema::value_rows::insert(&own, row, 0)?;
    }
    let keyspaces = schema_tables::catalog_rows("keyspaces")?;
    assert_eq!(keyspaces.len(), 2);
    let tables = schema_tables::catalog_rows("tables")?;
    assert!(tables
        .iter()
        .any(|r| r.get("comment") == Some(&text("currently connected clients"))));
    Ok(())
}
