//! Commands on tables — `flush`, `compact`, `enable/disableautocompaction` — and their
//! statistics (`GET /v1/tables`, `nodetool tablestats`).

use std::sync::Arc;

use mutation::shadow::Granularity;
use mutation::TableId;
use schema::TableMetadata;
use storage::sstable::FilterStats;
use storage::{Percentiles, TableMetrics, TableUsage};

use super::types::{GarbageCollectRequest, TableSelection, TableStats, TablesDone};
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

/// Keyspaces with no storage behind them.
const VIRTUAL_KEYSPACES: [&str; 2] = ["system_views", "system_virtual_schema"];

/// The tables `selection` names, in keyspace and table order; unknown names are errors
/// worded as nodetool's.
pub fn select(node: &AdminNode, selection: &TableSelection) -> ApiResult<Vec<Arc<TableMetadata>>> {
    let schema = node.processor.schema().schema.clone();
    let Some(keyspace) = &selection.keyspace else {
        if !selection.tables.is_empty() {
            return Err(ApiError::bad_request("tables given without a keyspace"));
        }
        return Ok(schema
            .keyspaces()
            .iter()
            .filter(|(name, _)| !VIRTUAL_KEYSPACES.contains(&name.as_str()))
            .flat_map(|(_, ks)| ks.tables.values().cloned())
            .collect());
    };
    let ks = schema
        .keyspace(keyspace)
        .ok_or_else(|| ApiError::not_found(format!("Keyspace [{keyspace}] does not exist.")))?;
    if selection.tables.is_empty() {
        return Ok(ks.tables.values().cloned().collect());
    }
    selection
        .tables
        .iter()
        .map(|name| {
            ks.table(name).cloned().ok_or_else(|| {
                ApiError::not_found(format!("Unknown table/cf pair ({keyspace}.{name})"))
            })
        })
        .collect()
}

fn id(table: &TableMetadata) -> TableId {
    TableId(table.id)
}

fn names(tables: &[Arc<TableMetadata>]) -> TablesDone {
    TablesDone {
        tables: tables
            .iter()
            .map(|t| format!("{}.{}", t.keyspace, t.name))
            .collect(),
    }
}

/// `POST /v1/flush`: writes the selected tables' memtables to SSTables.
pub async fn flush(node: &AdminNode, selection: &TableSelection) -> ApiResult<TablesDone> {
    let tables = select(node, selection)?;
    let storage = node.storage.clone();
    let ids: Vec<TableId> = tables.iter().map(|t| id(t)).collect();
    blocking(move || ids.into_iter().try_for_each(|t| storage.flush(t).map(drop))).await?;
    Ok(names(&tables))
}

/// `POST /v1/compact`: a major compaction of each selected table.
pub async fn compact(node: &AdminNode, selection: &TableSelection) -> ApiResult<TablesDone> {
    let tables = select(node, selection)?;
    let storage = node.storage.clone();
    let ids: Vec<TableId> = tables.iter().map(|t| id(t)).collect();
    blocking(move || {
        ids.into_iter()
            .try_for_each(|t| storage.compact(t).map(drop))
    })
    .await?;
    Ok(names(&tables))
}

/// `POST /v1/garbagecollect`: rewrites each SSTable of the selected tables alone without the
/// data the tables' other SSTables and memtables shadow, at `ROW` or `CELL` granularity.
pub async fn garbage_collect(
    node: &AdminNode,
    request: &GarbageCollectRequest,
) -> ApiResult<TablesDone> {
    let name = request.granularity.as_deref().unwrap_or("ROW");
    let granularity = Granularity::from_name(name).ok_or_else(|| {
        ApiError::bad_request(format!("granularity must be ROW or CELL, not {name}"))
    })?;
    let tables = select(node, &request.selection)?;
    let storage = node.storage.clone();
    let ids: Vec<TableId> = tables.iter().map(|t| id(t)).collect();
    blocking(move || {
        ids.into_iter()
            .try_for_each(|t| storage.garbage_collect(t, granularity).map(drop))
    })
    .await?;
    Ok(names(&tables))
}

/// `POST /v1/autocompaction`: starts or stops background compactions of the tables.
pub fn autocompaction(
    node: &AdminNode,
    selection: &TableSelection,
    enabled: bool,
) -> ApiResult<TablesDone> {
    let tables = select(node, selection)?;
    for table in &tables {
        if enabled {
            node.storage.enable_autocompaction(id(table))?;
        } else {
            node.storage.disable_autocompaction(id(table))?;
        }
    }
    Ok(names(&tables))
}

/// `GET /v1/tables`: statistics of every table with storage.
pub fn stats(node: &AdminNode) -> ApiResult<Vec<TableStats>> {
    let tables = select(node, &TableSelection::default())?;
    Ok(tables
        .iter()
        .filter_map(|t| {
            let usage = node.storage.table_usage(id(t)).ok()?;
            let reads = node.storage.table_metrics(id(t)).ok()?;
            Some(table_stats(node, t, &usage, &reads))
        })
        .collect())
}

fn table_stats(
    node: &AdminNode,
    table: &TableMetadata,
    usage: &TableUsage,
    per_read: &TableMetrics,
) -> TableStats {
    let metrics = node.coordinator.metrics().table_if_used(id(table));
    let (reads, ranges, writes) = metrics
        .map(|m| {
            (
                m.reads.snapshot(),
                m.range_reads.snapshot(),
                m.writes.snapshot(),
            )
        })
        .unwrap_or_default();
    TableStats {
        keyspace: table.keyspace.clone(),
        table: table.name.clone(),
        sstables: usage.sstables as u64,
        sstables_per_level: usage.levels.iter().map(|&n| n as u64).collect(),
        max_sstable_bytes: usage.max_sstable_bytes,
        space_used_live: usage.disk_bytes,
        space_used_total: usage.disk_bytes,
        uncompressed_bytes: usage.uncompressed_bytes,
        partitions_estimate: usage.partitions,
        memtable_bytes: usage.memtable_bytes as u64,
        memtable_switch_count: usage.flushes,
        pending_compactions: usage.pending_compactions as u64,
        local_read_count: reads.count,
        local_read_latency_ms: reads.mean_millis(),
        local_read_total_micros: reads.sum_micros,
        local_range_read_count: ranges.count,
        local_write_count: writes.count,
        local_write_latency_ms: writes.mean_millis(),
        local_write_total_micros: writes.sum_micros,
        partition_bytes_min: usage.partition_bytes_min,
        partition_bytes_max: usage.partition_bytes_max,
        partition_bytes_mean: usage
            .uncompressed_bytes
            .checked_div(usage.partitions)
            .unwrap_or(0),
        leveled: is_leveled(table),
        sstable_bytes_per_level: usage.level_bytes.clone(),
        bloom_filter_false_positives: usage.filter.false_positives,
        bloom_filter_false_ratio: false_ratio(usage.filter),
        bloom_filter_space_used: usage.filter.size_bytes,
        live_cells_per_slice_mean: mean(&per_read.live_rows_per_read),
        live_cells_per_slice_max: per_read.live_rows_per_read.max,
        tombstones_per_slice_mean: mean(&per_read.tombstones_per_read),
        tombstones_per_slice_max: per_read.tombstones_per_read.max,
        droppable_tombstone_ratio: usage.droppable_tombstone_ratio,
        percent_repaired: usage.percent_repaired(),
        bytes_repaired: usage.repaired_bytes,
        bytes_unrepaired: usage.unrepaired_bytes,
        bytes_pending_repair: usage.pending_repair_bytes,
        corrupt_reads: per_read.corrupt_reads,
    }
}

fn is_leveled(table: &TableMetadata) -> bool {
    table
        .options
        .compaction
        .get("class")
        .is_some_and(|c| c.ends_with("LeveledCompactionStrategy"))
}

/// Cassandra's `BloomFilterFalseRatio`: false positives over all positives, 0 when none.
fn false_ratio(filter: FilterStats) -> f64 {
    let positives = filter.false_positives + filter.true_positives;
    if positives == 0 {
        0.0
    } else {
        filter.false_positives as f64 / positives as f64
    }
}

fn mean(p: &Percentiles) -> Option<f64> {
    (p.count > 0).then_some(p.mean)
}

/// Runs blocking storage work off the runtime's worker threads.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> storage::Result<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(format!("task failed: {e}")))?
        .map_err(ApiError::from)
}
