//! The schema kept in `system_schema` tables: a keyspace is saved by replacing its
//! partitions in every schema table (one atomic batch), and loaded back at start-up.
use std::collections::BTreeMap;
use std::sync::Arc;

use mutation::Mutation;
use schema::{keyspace_rows, load_schema, KeyspaceMetadata, Schema, TableMetadata};
use storage::Storage;
use types::{CqlError, CqlResult, Value};

use crate::tables::read_all;
use schema::value_rows;

/// The `system_schema` keyspace of `schema`.
pub(crate) fn system_schema(schema: &Schema) -> CqlResult<Arc<KeyspaceMetadata>> {
    schema
        .keyspace("system_schema")
        .cloned()
        .ok_or_else(|| CqlError::Server("system_schema keyspace missing".into()))
}

/// Mutations that make `system_schema` describe `ks` exactly (older rows are shadowed).
pub fn save_keyspace(
    system_schema: &KeyspaceMetadata,
    ks: &KeyspaceMetadata,
    ts: i64,
    now: i32,
) -> CqlResult<Vec<Mutation>> {
    let mut by_table: BTreeMap<String, Mutation> = BTreeMap::new();
    let key = [Value::Text(ks.name.clone()).to_bytes()];
    for table in system_schema.tables.values() {
        by_table.insert(
            table.name.clone(),
            value_rows::delete_partition(table, &key, ts - 1, now),
        );
    }
    for (name, rows) in keyspace_rows(ks).tables {
        let table = schema_table(system_schema, name)?;
        for row in &rows {
            let m = value_rows::insert(table, row, ts)?;
            if let Some(existing) = by_table.get_mut(name) {
                existing.update.rows.extend(m.update.rows);
            }
        }
    }
    for m in by_table.values_mut() {
        m.update
            .rows
            .sort_by(|a, b| a.clustering.cmp(&b.clustering));
    }
    Ok(by_table.into_values().collect())
}

/// Mutations removing `name` from every schema table.
pub fn drop_keyspace(
    system_schema: &KeyspaceMetadata,
    name: &str,
    ts: i64,
    now: i32,
) -> Vec<Mutation> {
    let key = [Value::Text(name.to_string()).to_bytes()];
    system_schema
        .tables
        .values()
        .map(|t| value_rows::delete_partition(t, &key, ts, now))
        .collect()
}

fn schema_table<'a>(
    system_schema: &'a KeyspaceMetadata,
    name: &str,
) -> CqlResult<&'a TableMetadata> {
    system_schema
        .table(name)
        .map(|t| t.as_ref())
        .ok_or_else(|| CqlError::Server(format!("system_schema.{name} is not defined")))
}

/// The user keyspaces recorded in `system_schema`.
pub fn load(storage: &Storage, system_schema: &KeyspaceMetadata, now: i32) -> CqlResult<Schema> {
    let read = |name: &str| -> Vec<schema::Row> {
        match system_schema.table(name) {
            Some(t) => read_all(storage, t, now).unwrap_or_else(|e| {
                tracing::error!("cannot read system_schema.{name}: {e}");
                Vec::new()
            }),
            None => Vec::new(),
        }
    };
    load_schema(&read).map_err(|e| CqlError::Server(format!("cannot load the schema: {e}")))
}
