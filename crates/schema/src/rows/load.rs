//! Rebuilding a [`Schema`] from `system_schema` rows: keyspaces, user types (in dependency
//! order), tables with their columns, options and dropped columns.
use super::Row;
use crate::column::{ClusteringOrder, ColumnKind, ColumnMetadata};
use crate::error::SchemaError;
use crate::keyspace::KeyspaceMetadata;
use crate::options::TableOptions;
use crate::snapshot::Schema;
use crate::system::is_system_keyspace;
use crate::table::{DroppedColumn, TableMetadata};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::Arc;
use types::{CqlType, UdtType, Value};
use uuid::Uuid;

/// Rebuilds every non-system keyspace from `rows`, which returns all rows of the named
/// `system_schema` table.
pub fn load_schema(rows: &dyn Fn(&str) -> Vec<Row>) -> Result<Schema, SchemaError> {
    let all = SchemaTables {
        types: rows("types"),
        tables: rows("tables"),
        columns: rows("columns"),
        dropped: rows("dropped_columns"),
    };
    let mut keyspaces = Vec::new();
    for row in rows("keyspaces") {
        let keyspace = keyspace_from_row(&row)?;
        if !is_system_keyspace(&keyspace.name) {
            keyspaces.push(Arc::new(all.fill(keyspace)?));
        }
    }
    Ok(Schema::new(keyspaces))
}

struct SchemaTables {
    types: Vec<Row>,
    tables: Vec<Row>,
    columns: Vec<Row>,
    dropped: Vec<Row>,
}

impl SchemaTables {
    fn fill(&self, mut keyspace: KeyspaceMetadata) -> Result<KeyspaceMetadata, SchemaError> {
        let name = keyspace.name.clone();
        let type_rows = rows_of(&self.types, "types", &name, None)?;
        keyspace.types = load_types(&name, &type_rows)?;
        for row in rows_of(&self.tables, "tables", &name, None)? {
            let table = self.table(&keyspace, row)?;
            keyspace.tables.insert(table.name.clone(), Arc::new(table));
        }
        Ok(keyspace)
    }

    fn table(&self, keyspace: &KeyspaceMetadata, row: &Row) -> Result<TableMetadata, SchemaError> {
        let name = text(row, "tables", "table_name")?;
        let resolve = |n: &str| keyspace.types.get(n).cloned();
        let mut columns = Vec::new();
        for column in rows_of(&self.columns, "columns", &keyspace.name, Some(name))? {
            columns.push(column_from_row(column, &resolve)?);
        }
        let mut dropped = BTreeMap::new();
        for column in rows_of(&self.dropped, "dropped_columns", &keyspace.name, Some(name))? {
            let (column_name, info) = dropped_from_row(column, &resolve)?;
            dropped.insert(column_name, info);
        }
        let id = uuid(row, "tables", "id")?;
        let options = options_from_row(row)?;
        let table = TableMetadata::new(&keyspace.name, name, id, columns, options)
            .map_err(|e| SchemaError::corrupt("columns", format!("table {name}: {e}")))?;
        Ok(table.with_dropped_columns(dropped))
    }
}

/// The rows of `keyspace` (and of `table`, when given) among `rows`.
fn rows_of<'a>(
    rows: &'a [Row],
    source: &'static str,
    keyspace: &str,
    table: Option<&str>,
) -> Result<Vec<&'a Row>, SchemaError> {
    let mut selected = Vec::new();
    for row in rows {
        let table_matches = match table {
            Some(name) => text(row, source, "table_name")? == name,
            None => true,
        };
        if text(row, source, "keyspace_name")? == keyspace && table_matches {
            selected.push(row);
        }
    }
    Ok(selected)
}

fn keyspace_from_row(row: &Row) -> Result<KeyspaceMetadata, SchemaError> {
    let name = text(row, "keyspaces", "keyspace_name")?;
    let durable = boolean(row, "keyspaces", "durable_writes")?.unwrap_or(true);
    let replication = text_map(row, "keyspaces", "replication")?;
    Ok(KeyspaceMetadata::new(name, replication, durable))
}

/// The keyspace's types; a type may use types defined in any other row, so rows are parsed
/// in rounds until every type resolves.
fn load_types(
    keyspace: &str,
    rows: &[&Row],
) -> Result<BTreeMap<String, Arc<UdtType>>, SchemaError> {
    let mut done: BTreeMap<String, Arc<UdtType>> = BTreeMap::new();
    let mut pending: Vec<&Row> = rows.to_vec();
    while !pending.is_empty() {
        let before = pending.len();
        let mut failed = Vec::new();
        let mut error = None;
        for row in pending {
            match type_from_row(keyspace, row, &|n: &str| done.get(n).cloned()) {
                Ok(udt) => {
                    done.insert(udt.name.clone(), Arc::new(udt));
                }
                Err(e) => {
                    failed.push(row);
                    error = Some(e);
                }
            }
        }
        if let Some(e) = error.filter(|_| failed.len() == before) {
            return Err(e);
        }
        pending = failed;
    }
    Ok(done)
}

type Resolver<'a> = &'a dyn Fn(&str) -> Option<Arc<UdtType>>;

fn type_from_row(keyspace: &str, row: &Row, resolve: Resolver<'_>) -> Result<UdtType, SchemaError> {
    let name = text(row, "types", "type_name")?;
    let names = text_list(row, "types", "field_names")?;
    let type_texts = text_list(row, "types", "field_types")?;
    if names.len() != type_texts.len() {
        return Err(SchemaError::corrupt(
            "types",
            format!("type {name}: field count mismatch"),
        ));
    }
    let mut fields = Vec::new();
    for (field, ty) in names.into_iter().zip(type_texts) {
        fields.push((field, parse_type("types", &ty, resolve)?));
    }
    let mut udt = UdtType::new(keyspace, name, fields);
    udt.added_fields = added_fields(row, udt.fields.len())?;
    Ok(udt)
}

/// The type's `added_fields` (0 when null), at most its field count.
fn added_fields(row: &Row, field_count: usize) -> Result<usize, SchemaError> {
    const COLUMN: &str = "added_fields";
    if optional_cell(row, COLUMN).is_none() {
        return Ok(0);
    }
    usize::try_from(int(row, "types", COLUMN)?)
        .ok()
        .filter(|added| *added <= field_count)
        .ok_or_else(|| SchemaError::corrupt("types", format!("{COLUMN} out of range")))
}

fn parse_type(
    source: &'static str,
    text: &str,
    resolve: Resolver<'_>,
) -> Result<CqlType, SchemaError> {
    CqlType::parse(text, resolve)
        .map_err(|e| SchemaError::corrupt(source, format!("type '{text}': {e}")))
}

fn column_from_row(row: &Row, resolve: Resolver<'_>) -> Result<ColumnMetadata, SchemaError> {
    const SOURCE: &str = "columns";
    let name = text(row, SOURCE, "column_name")?;
    let kind_text = text(row, SOURCE, "kind")?;
    let kind = ColumnKind::from_text(kind_text)
        .ok_or_else(|| SchemaError::corrupt(SOURCE, format!("unknown kind '{kind_text}'")))?;
    let order_text = text(row, SOURCE, "clustering_order")?;
    let order = ClusteringOrder::from_text(order_text)
        .ok_or_else(|| SchemaError::corrupt(SOURCE, format!("unknown order '{order_text}'")))?;
    Ok(ColumnMetadata {
        name: name.to_string(),
        ty: parse_type(SOURCE, text(row, SOURCE, "type")?, resolve)?,
        kind,
        position: int(row, SOURCE, "position")?,
        order,
    })
}

fn dropped_from_row(
    row: &Row,
    resolve: Resolver<'_>,
) -> Result<(String, DroppedColumn), SchemaError> {
    const SOURCE: &str = "dropped_columns";
    let kind_text = text(row, SOURCE, "kind")?;
    let kind = ColumnKind::from_text(kind_text)
        .ok_or_else(|| SchemaError::corrupt(SOURCE, format!("unknown kind '{kind_text}'")))?;
    let millis = match cell(row, SOURCE, "dropped_time")? {
        Value::Timestamp(ms) => *ms,
        _ => return Err(wrong_type(SOURCE, "dropped_time")),
    };
    let dropped = DroppedColumn {
        ty: parse_type(SOURCE, text(row, SOURCE, "type")?, resolve)?,
        kind,
        dropped_time_micros: millis.saturating_mul(1000),
    };
    Ok((text(row, SOURCE, "column_name")?.to_string(), dropped))
}

fn options_from_row(row: &Row) -> Result<TableOptions, SchemaError> {
    const SOURCE: &str = "tables";
    let defaults = TableOptions::default();
    Ok(TableOptions {
        additional_write_policy: text(row, SOURCE, "additional_write_policy")?.to_string(),
        allow_auto_snapshot: boolean(row, SOURCE, "allow_auto_snapshot")?.unwrap_or(true),
        auto_repair: text_map(row, SOURCE, "auto_repair")?,
        bloom_filter_fp_chance: double(row, SOURCE, "bloom_filter_fp_chance")?,
        caching: text_map(row, SOURCE, "caching")?,
        cdc: boolean(row, SOURCE, "cdc")?.unwrap_or(false),
        comment: text(row, SOURCE, "comment")?.to_string(),
        compaction: text_map(row, SOURCE, "compaction")?,
        compression: text_map(row, SOURCE, "compression")?,
        memtable: optional_text(row, SOURCE, "memtable")?.unwrap_or(defaults.memtable),
        crc_check_chance: double(row, SOURCE, "crc_check_chance")?,
        default_time_to_live: int(row, SOURCE, "default_time_to_live")?,
        extensions: blob_map(row, SOURCE, "extensions")?,
        gc_grace_seconds: int(row, SOURCE, "gc_grace_seconds")?,
        incremental_backups: boolean(row, SOURCE, "incremental_backups")?.unwrap_or(true),
        max_index_interval: int(row, SOURCE, "max_index_interval")?,
        memtable_flush_period_in_ms: int(row, SOURCE, "memtable_flush_period_in_ms")?,
        min_index_interval: int(row, SOURCE, "min_index_interval")?,
        read_repair: text(row, SOURCE, "read_repair")?.to_string(),
        speculative_retry: text(row, SOURCE, "speculative_retry")?.to_string(),
    })
}

fn wrong_type(source: &'static str, column: &str) -> SchemaError {
    SchemaError::corrupt(source, format!("column {column} has the wrong type"))
}

/// The non-null cell `column`.
fn cell<'a>(row: &'a Row, source: &'static str, column: &str) -> Result<&'a Value, SchemaError> {
    optional_cell(row, column)
        .ok_or_else(|| SchemaError::corrupt(source, format!("missing {column}")))
}

fn optional_cell<'a>(row: &'a Row, column: &str) -> Option<&'a Value> {
    row.get(column).and_then(Option::as_ref)
}

fn text<'a>(row: &'a Row, source: &'static str, column: &str) -> Result<&'a str, SchemaError> {
    match cell(row, source, column)? {
        Value::Text(s) | Value::Ascii(s) => Ok(s),
        _ => Err(wrong_type(source, column)),
    }
}

fn optional_text(
    row: &Row,
    source: &'static str,
    column: &str,
) -> Result<Option<String>, SchemaError> {
    match optional_cell(row, column) {
        None => Ok(None),
        Some(_) => text(row, source, column).map(|s| Some(s.to_string())),
    }
}

fn int(row: &Row, source: &'static str, column: &str) -> Result<i32, SchemaError> {
    match cell(row, source, column)? {
        Value::Int(v) => Ok(*v),
        _ => Err(wrong_type(source, column)),
    }
}

fn double(row: &Row, source: &'static str, column: &str) -> Result<f64, SchemaError> {
    match cell(row, source, column)? {
        Value::Double(v) => Ok(*v),
        _ => Err(wrong_type(source, column)),
    }
}

fn boolean(row: &Row, source: &'static str, column: &str) -> Result<Option<bool>, SchemaError> {
    match optional_cell(row, column) {
        None => Ok(None),
        Some(Value::Boolean(v)) => Ok(Some(*v)),
        Some(_) => Err(wrong_type(source, column)),
    }
}

fn uuid(row: &Row, source: &'static str, column: &str) -> Result<Uuid, SchemaError> {
    match cell(row, source, column)? {
        Value::Uuid(v) | Value::Timeuuid(v) => Ok(*v),
        _ => Err(wrong_type(source, column)),
    }
}

fn text_list(row: &Row, source: &'static str, column: &str) -> Result<Vec<String>, SchemaError> {
    match cell(row, source, column)? {
        Value::List(items) => items.iter().map(|v| as_text(v, source, column)).collect(),
        _ => Err(wrong_type(source, column)),
    }
}

fn as_text(value: &Value, source: &'static str, column: &str) -> Result<String, SchemaError> {
    match value {
        Value::Text(s) | Value::Ascii(s) => Ok(s.clone()),
        _ => Err(wrong_type(source, column)),
    }
}

fn map_entries<'a>(
    row: &'a Row,
    source: &'static str,
    column: &str,
) -> Result<&'a [(Value, Value)], SchemaError> {
    match optional_cell(row, column) {
        None => Ok(&[]),
        Some(Value::Map(entries)) => Ok(entries),
        Some(_) => Err(wrong_type(source, column)),
    }
}

fn text_map(
    row: &Row,
    source: &'static str,
    column: &str,
) -> Result<BTreeMap<String, String>, SchemaError> {
    map_entries(row, source, column)?
        .iter()
        .map(|(k, v)| Ok((as_text(k, source, column)?, as_text(v, source, column)?)))
        .collect()
}

/// A map of text to blobs; the blobs are copied (a value read from an SSTable shares the
/// buffer of the chunk it was read from, which a schema kept for the node's life must not pin).
fn blob_map(
    row: &Row,
    source: &'static str,
    column: &str,
) -> Result<BTreeMap<String, Bytes>, SchemaError> {
    map_entries(row, source, column)?
        .iter()
        .map(|(k, v)| match v {
            Value::Blob(b) => Ok((as_text(k, source, column)?, Bytes::copy_from_slice(b))),
            _ => Err(wrong_type(source, column)),
        })
        .collect()
}
