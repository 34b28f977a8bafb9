//! The node's tables in its storage: registered with their parameters, read whole.
use std::sync::Arc;

use mutation::{KeyRange, ReadFilter, TableId};
use schema::{KeyspaceMetadata, Row as ValueRow, TableMetadata};
use storage::{Storage, TableParams};
use types::{CqlError, CqlResult};

use crate::storage_error;
use schema::value_rows;

/// Every live row of `table` in this node's storage, as column-name maps.
pub(crate) fn read_all(
    storage: &Storage,
    table: &TableMetadata,
    now: i32,
) -> CqlResult<Vec<ValueRow>> {
    let partitions = storage
        .scan(
            TableId(table.id),
            &KeyRange::all(),
            &ReadFilter::all(),
            now,
            usize::MAX,
        )
        .map_err(|e| CqlError::Server(format!("reading {}.{}: {e}", table.keyspace, table.name)))?;
    value_rows::rows_of(table, &partitions, now)
}

/// The storage parameters of a table (compaction, compression, filters, grace periods, the
/// dropped columns compaction purges).
pub(crate) fn table_params(t: &TableMetadata) -> TableParams {
    TableParams {
        keyspace: t.keyspace.clone(),
        name: t.name.clone(),
        compaction: compaction(t),
        compression: t.options.compression.clone(),
        bloom_filter_fp_chance: t.options.bloom_filter_fp_chance,
        gc_grace_seconds: t.options.gc_grace_seconds,
        default_time_to_live: t.options.default_time_to_live,
        dropped_columns: t
            .dropped_columns
            .iter()
            .map(|(name, dropped)| (name.clone(), dropped.dropped_time_micros))
            .collect(),
    }
}

/// The table's `compaction` map. Storage purges tombstones from repaired data only unless
/// the map says otherwise; the system keyspaces' tables, which repair never sees, purge them
/// as Cassandra does.
fn compaction(t: &TableMetadata) -> std::collections::BTreeMap<String, String> {
    let mut options = t.options.compaction.clone();
    if schema::is_system_keyspace(&t.keyspace) {
        options
            .entry("only_purge_repaired_tombstones".to_string())
            .or_insert_with(|| "false".to_string());
    }
    options
}

/// Registers `tables` in storage.
pub(crate) fn register(
    storage: &Storage,
    tables: impl Iterator<Item = Arc<TableMetadata>>,
) -> CqlResult<()> {
    for t in tables {
        storage
            .create_table(TableId(t.id), table_params(&t))
            .map_err(storage_error)?;
    }
    Ok(())
}

/// Every table of `keyspaces`.
pub(crate) fn all_tables(
    keyspaces: &[Arc<KeyspaceMetadata>],
) -> impl Iterator<Item = Arc<TableMetadata>> + '_ {
    keyspaces.iter().flat_map(|k| k.tables.values().cloned())
}

/// The current time in seconds, as local deletions and TTLs count it.
pub(crate) fn now_seconds(micros: i64) -> i32 {
    (micros / 1_000_000) as i32
}
