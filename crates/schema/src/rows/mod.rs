//! Schema ⇄ `system_schema` rows: the rows Cassandra 5.0 stores for a keyspace (keyspaces,
//! tables, columns, dropped_columns, types) and, in `load`, rebuilding keyspaces from them.
mod definition;
mod load;

use crate::column::ColumnMetadata;
use crate::keyspace::KeyspaceMetadata;
use crate::options::TableOptions;
use crate::table::{DroppedColumn, TableMetadata};
use bytes::Bytes;
pub use definition::{decode_keyspace, encode_keyspace};
pub use load::load_schema;
use std::collections::BTreeMap;
use types::{UdtType, Value};

/// One row of a `system_schema` table, keyed by column name. Columns Cassandra leaves unset
/// are absent.
pub type Row = BTreeMap<String, Option<Value>>;

/// Rows per `system_schema` table, in a fixed table order; a table may have no rows.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SchemaRows {
    pub tables: Vec<(&'static str, Vec<Row>)>,
}

impl SchemaRows {
    /// The rows for the `system_schema` table `name`.
    pub fn rows(&self, name: &str) -> &[Row] {
        self.tables
            .iter()
            .find(|(table, _)| *table == name)
            .map(|(_, rows)| rows.as_slice())
            .unwrap_or(&[])
    }
}

/// The `system_schema` rows describing `keyspace`.
pub fn keyspace_rows(keyspace: &KeyspaceMetadata) -> SchemaRows {
    let tables = keyspace.tables.values();
    SchemaRows {
        tables: vec![
            ("keyspaces", vec![keyspace_row(keyspace)]),
            ("tables", tables.clone().map(|t| table_row(t)).collect()),
            (
                "columns",
                tables.clone().flat_map(|t| column_rows(t)).collect(),
            ),
            (
                "dropped_columns",
                tables.flat_map(|t| dropped_rows(t)).collect(),
            ),
            (
                "types",
                keyspace.types.values().map(|u| type_row(u)).collect(),
            ),
        ],
    }
}

fn text(value: &str) -> Option<Value> {
    Some(Value::Text(value.to_string()))
}

fn text_map(map: &BTreeMap<String, String>) -> Option<Value> {
    let entries = map
        .iter()
        .map(|(k, v)| (Value::Text(k.clone()), Value::Text(v.clone())))
        .collect();
    Some(Value::Map(entries))
}

fn text_list(items: impl Iterator<Item = String>) -> Option<Value> {
    Some(Value::List(items.map(Value::Text).collect()))
}

fn row(entries: Vec<(&str, Option<Value>)>) -> Row {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

fn keyspace_row(keyspace: &KeyspaceMetadata) -> Row {
    row(vec![
        ("keyspace_name", text(&keyspace.name)),
        (
            "durable_writes",
            Some(Value::Boolean(keyspace.durable_writes)),
        ),
        ("replication", text_map(&keyspace.replication)),
    ])
}

fn table_row(table: &TableMetadata) -> Row {
    let mut row = row(vec![
        ("keyspace_name", text(&table.keyspace)),
        ("table_name", text(&table.name)),
        ("id", Some(Value::Uuid(table.id))),
        (
            "flags",
            Some(Value::Set(
                table
                    .flags()
                    .into_iter()
                    .map(|f| Value::Text(f.into()))
                    .collect(),
            )),
        ),
    ]);
    row.extend(option_cells(&table.options));
    row
}

/// The option columns of a `system_schema.tables` row. Like Cassandra 5.0, the columns added
/// after 4.0 (`allow_auto_snapshot`, `incremental_backups`, `memtable`, `cdc`) are written only
/// when they differ from their default; trunk's `auto_repair` only when the table set it.
fn option_cells(options: &TableOptions) -> Vec<(String, Option<Value>)> {
    let int = |v: i32| Some(Value::Int(v));
    let double = |v: f64| Some(Value::Double(v));
    let extensions = options
        .extensions
        .iter()
        .map(|(k, v)| (Value::Text(k.clone()), Value::Blob(v.clone())))
        .collect();
    let mut cells = vec![
        (
            "additional_write_policy",
            text(&options.additional_write_policy),
        ),
        (
            "bloom_filter_fp_chance",
            double(options.bloom_filter_fp_chance),
        ),
        ("caching", text_map(&options.caching)),
        ("comment", text(&options.comment)),
        ("compaction", text_map(&options.compaction)),
        ("compression", text_map(&options.compression)),
        ("crc_check_chance", double(options.crc_check_chance)),
        ("dclocal_read_repair_chance", double(0.0)),
        ("default_time_to_live", int(options.default_time_to_live)),
        ("extensions", Some(Value::Map(extensions))),
        ("gc_grace_seconds", int(options.gc_grace_seconds)),
        ("max_index_interval", int(options.max_index_interval)),
        (
            "memtable_flush_period_in_ms",
            int(options.memtable_flush_period_in_ms),
        ),
        ("min_index_interval", int(options.min_index_interval)),
        ("read_repair", text(&options.read_repair)),
        ("read_repair_chance", double(0.0)),
        ("speculative_retry", text(&options.speculative_retry)),
    ];
    if !options.allow_auto_snapshot {
        cells.push(("allow_auto_snapshot", Some(Value::Boolean(false))));
    }
    if !options.incremental_backups {
        cells.push(("incremental_backups", Some(Value::Boolean(false))));
    }
    if options.memtable != "default" {
        cells.push(("memtable", text(&options.memtable)));
    }
    if options.cdc {
        cells.push(("cdc", Some(Value::Boolean(true))));
    }
    if !options.auto_repair.is_empty() {
        cells.push(("auto_repair", text_map(&options.auto_repair)));
    }
    cells.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn column_rows(table: &TableMetadata) -> Vec<Row> {
    table.columns.iter().map(|c| column_row(table, c)).collect()
}

fn column_row(table: &TableMetadata, column: &ColumnMetadata) -> Row {
    row(vec![
        ("keyspace_name", text(&table.keyspace)),
        ("table_name", text(&table.name)),
        ("column_name", text(&column.name)),
        ("clustering_order", text(column.order.as_str())),
        (
            "column_name_bytes",
            Some(Value::Blob(Bytes::from(column.name.clone().into_bytes()))),
        ),
        ("kind", text(column.kind.as_str())),
        ("position", Some(Value::Int(column.position))),
        ("type", text(&column.ty.cql_name())),
    ])
}

fn dropped_rows(table: &TableMetadata) -> Vec<Row> {
    table
        .dropped_columns
        .iter()
        .map(|(name, dropped)| dropped_row(table, name, dropped))
        .collect()
}

fn dropped_row(table: &TableMetadata, name: &str, dropped: &DroppedColumn) -> Row {
    row(vec![
        ("keyspace_name", text(&table.keyspace)),
        ("table_name", text(&table.name)),
        ("column_name", text(name)),
        (
            "dropped_time",
            Some(Value::Timestamp(
                dropped.dropped_time_micros.div_euclid(1000),
            )),
        ),
        ("kind", text(dropped.kind.as_str())),
        ("type", text(&dropped.ty.cql_name())),
    ])
}

/// The type's row: Cassandra's columns, and `added_fields` (Helenus's own) once ALTER TYPE
/// has added a field, so that a type never altered has the row Cassandra writes.
fn type_row(udt: &UdtType) -> Row {
    let mut entries = vec![
        ("keyspace_name", text(&udt.keyspace)),
        ("type_name", text(&udt.name)),
        (
            "field_names",
            text_list(udt.fields.iter().map(|(n, _)| n.clone())),
        ),
        (
            "field_types",
            text_list(udt.fields.iter().map(|(_, t)| t.cql_name())),
        ),
    ];
    if udt.added_fields > 0 {
        let added = i32::try_from(udt.added_fields).unwrap_or(i32::MAX);
        entries.push(("added_fields", Some(Value::Int(added))));
    }
    row(entries)
}

#[cfg(test)]
mod tests;
