//! Rows as maps of column name to value (as this crate produces `system_schema` rows) turned
//! into mutations and read back from partitions: what the node writes and reads itself, not a
//! client statement (the schema in `system_schema`, `system.local`, trace sessions).
use bytes::Bytes;
use mutation::{
    Cell, ColumnData, DeletionTime, LivenessInfo, Mutation, Partition, PartitionUpdate, Row,
};
use types::{CqlError, CqlResult, CqlType, Value};

use crate::collections;
use crate::keys::{partition_key, KeyLayout};
use crate::row_view::RowView;
use crate::{ColumnKind, Row as ValueRow, TableMetadata};

/// A mutation inserting `values` (a full primary key plus any other columns) at `ts`.
pub fn insert(table: &TableMetadata, values: &ValueRow, ts: i64) -> CqlResult<Mutation> {
    insert_expiring(table, values, ts, None)
}

/// [`insert`] whose row and cells expire `ttl` seconds after `ts` when `ttl` is given.
pub fn insert_expiring(
    table: &TableMetadata,
    values: &ValueRow,
    ts: i64,
    ttl: Option<i32>,
) -> CqlResult<Mutation> {
    let now = (ts / 1_000_000) as i32;
    let layout = KeyLayout::new(std::sync::Arc::new(table.clone()));
    let pk = key_values(table.partition_key_columns(), values)?;
    let ck = key_values(table.clustering_columns(), values)?;
    let mut row = Row::new(layout.clustering(&ck));
    row.liveness = Some(match ttl {
        Some(ttl) => LivenessInfo::expiring(ts, ttl, now),
        None => LivenessInfo::new(ts),
    });
    let mut static_row = Row::new(Bytes::new());
    for col in table.columns.iter().filter(|c| !c.kind.is_primary_key()) {
        let Some(value) = values.get(&col.name) else {
            continue;
        };
        let data = column_data(&col.name, &col.ty, value.as_ref(), ts, ttl)?;
        if col.kind == ColumnKind::Static {
            static_row.columns.push(data);
        } else {
            row.columns.push(data);
        }
    }
    row.columns.sort_by(|a, b| a.name.cmp(&b.name));
    static_row.columns.sort_by(|a, b| a.name.cmp(&b.name));
    let mut update = PartitionUpdate::default();
    if !static_row.columns.is_empty() {
        update.static_row = Some(static_row);
    }
    update.rows.push(row);
    Ok(Mutation {
        table: mutation::TableId(table.id),
        key: partition_key(&pk),
        update,
    })
}

/// A mutation deleting the whole partition `key_values` at `ts`.
pub fn delete_partition(table: &TableMetadata, key: &[Bytes], ts: i64, now: i32) -> Mutation {
    let update = PartitionUpdate {
        partition_deletion: DeletionTime::new(ts, now),
        ..PartitionUpdate::default()
    };
    Mutation {
        table: mutation::TableId(table.id),
        key: partition_key(key),
        update,
    }
}

fn key_values<'a>(
    cols: impl Iterator<Item = &'a crate::ColumnMetadata>,
    values: &ValueRow,
) -> CqlResult<Vec<Bytes>> {
    cols.map(|c| match values.get(&c.name) {
        Some(Some(v)) => Ok(v.to_bytes()),
        _ => Err(CqlError::Server(format!(
            "internal row lacks key column {}",
            c.name
        ))),
    })
    .collect()
}

fn column_data(
    name: &str,
    ty: &CqlType,
    value: Option<&Value>,
    ts: i64,
    ttl: Option<i32>,
) -> CqlResult<ColumnData> {
    let name = mutation::column_name(name);
    let now = (ts / 1_000_000) as i32;
    let live = |value: Bytes| match ttl {
        Some(ttl) => Cell::expiring(ts, ttl, now, value),
        None => Cell::live(ts, value),
    };
    if !ty.is_multi_cell() {
        let cell = match value {
            Some(v) => live(v.to_bytes()),
            None => Cell::tombstone(ts, now),
        };
        return Ok(ColumnData::simple(name, cell));
    }
    let deletion = DeletionTime::new(ts - 1, now);
    let Some(v) = value else {
        return Ok(ColumnData::complex(name, deletion, Vec::new()));
    };
    let bytes = v.to_bytes();
    let is_map = matches!(ty, CqlType::Map(..));
    let items = collections::split(&bytes, is_map)?;
    let mut cells: Vec<Cell> = match ty {
        CqlType::Set(_) => items
            .into_iter()
            .map(|e| live(Bytes::new()).with_path(e))
            .collect(),
        CqlType::Map(..) => items
            .chunks(2)
            .filter(|c| c.len() == 2)
            .map(|kv| live(kv[1].clone()).with_path(kv[0].clone()))
            .collect(),
        _ => items
            .into_iter()
            .map(|v| live(v).with_path(collections::list_path(ts)))
            .collect(),
    };
    cells.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(ColumnData::complex(name, deletion, cells))
}

/// The live rows of `partitions`, read from `table`, as column-name maps.
pub fn rows_of(
    table: &TableMetadata,
    partitions: &[Partition],
    now: i32,
) -> CqlResult<Vec<ValueRow>> {
    let layout = KeyLayout::new(std::sync::Arc::new(table.clone()));
    let mut out = Vec::new();
    for p in partitions {
        let pk = layout.split_partition_key(&p.key.key)?;
        for row in &p.rows {
            let clustering = layout.decode_clustering(&row.clustering)?;
            let view = RowView {
                key: &p.key,
                pk: &pk,
                clustering: &clustering,
                row: Some(row),
                static_row: p.static_row.as_ref(),
                now,
            };
            out.push(value_row(table, &view)?);
        }
    }
    Ok(out)
}

fn value_row(table: &TableMetadata, view: &RowView) -> CqlResult<ValueRow> {
    let mut row = ValueRow::new();
    for col in &table.columns {
        let value = match view.value(col) {
            Some(b) => Some(Value::deserialize(&col.ty, &b).map_err(|e| {
                CqlError::Server(format!(
                    "corrupt {}.{}.{}: {e}",
                    table.keyspace, table.name, col.name
                ))
            })?),
            None => None,
        };
        if value.is_some() {
            row.insert(col.name.clone(), value);
        }
    }
    Ok(row)
}
