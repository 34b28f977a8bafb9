//! Compactions: what runs and is due (`compactionstats`), what ran (`compactionhistory`), and
//! the throughput and concurrency settings.

use mutation::TableId;
use storage::{CompactionProgress, CompactionRecord, TaskKind};

use super::tables::select;
use super::types::{
    ActiveCompaction, CompactionHistoryEntry, CompactionStats, CompactionThroughput,
    ConcurrentCompactors, PendingCompactions, TableSelection,
};
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

const MIB: u64 = 1024 * 1024;
const FIFTEEN_MINUTES_MS: i64 = 15 * 60 * 1000;

/// Compactions finished in the last `window_ms` milliseconds.
fn recent(node: &AdminNode, window_ms: i64) -> usize {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    node.storage
        .compaction_history()
        .iter()
        .filter(|r| now - r.finished_at_ms <= window_ms)
        .count()
}

pub fn stats(node: &AdminNode) -> ApiResult<CompactionStats> {
    let totals = node.storage.compaction_totals();
    let uptime = node.started.elapsed().as_secs_f64().max(1.0);
    Ok(CompactionStats {
        concurrent_compactors: node.storage.concurrent_compactors() as u64,
        pending: pending(node)?,
        completed: totals.completed,
        bytes_compacted: totals.bytes_compacted,
        mean_rate_per_second: totals.completed as f64 / uptime,
        fifteen_minute_rate_per_minute: recent(node, FIFTEEN_MINUTES_MS) as f64 / 15.0,
        throughput_bytes_per_second: node.storage.compaction_throughput(),
        active: node.storage.compactions().iter().map(active).collect(),
    })
}

/// Tables with background compactions due.
fn pending(node: &AdminNode) -> ApiResult<Vec<PendingCompactions>> {
    let tables = select(node, &TableSelection::default())?;
    Ok(tables
        .iter()
        .filter_map(|t| {
            let usage = node.storage.table_usage(TableId(t.id)).ok()?;
            (usage.pending_compactions > 0).then(|| PendingCompactions {
                keyspace: t.keyspace.clone(),
                table: t.name.clone(),
                tasks: usage.pending_compactions as u64,
            })
        })
        .collect())
}

/// Cassandra's `OperationType` name of a task.
fn kind_name(kind: TaskKind) -> &'static str {
    match kind {
        TaskKind::Normal | TaskKind::Uplevel => "Compaction",
        TaskKind::Tombstone => "Tombstone Compaction",
        TaskKind::Major => "Major Compaction",
        TaskKind::GarbageCollect => "Remove deleted data",
        TaskKind::Scrub => "Scrub",
        TaskKind::Verify => "Verify",
        TaskKind::Cleanup => "Cleanup",
        TaskKind::Anticompaction => "Anticompaction after repair",
    }
}

fn active(p: &CompactionProgress) -> ActiveCompaction {
    ActiveCompaction {
        id: p.id.to_string(),
        kind: kind_name(p.kind).to_string(),
        keyspace: p.keyspace.clone(),
        table: p.table.clone(),
        completed: p.bytes_done,
        total: p.bytes_total,
        unit: "bytes".to_string(),
    }
}

/// Finished compactions, newest first.
pub fn history(node: &AdminNode) -> Vec<CompactionHistoryEntry> {
    node.storage
        .compaction_history()
        .iter()
        .rev()
        .map(history_entry)
        .collect()
}

fn history_entry(r: &CompactionRecord) -> CompactionHistoryEntry {
    CompactionHistoryEntry {
        id: r.id.to_string(),
        keyspace: r.keyspace.clone(),
        table: r.table.clone(),
        compacted_at_ms: r.finished_at_ms,
        bytes_in: r.bytes_in,
        bytes_out: r.bytes_out,
        sstables_in: r.sstables_in as u64,
        sstables_out: r.sstables_out as u64,
        partitions_out: r.partitions_out,
        kind: kind_name(r.kind).to_string(),
    }
}

pub fn throughput(node: &AdminNode) -> CompactionThroughput {
    CompactionThroughput {
        mib_per_second: (node.storage.compaction_throughput() + MIB / 2) / MIB,
    }
}

pub fn set_throughput(
    node: &AdminNode,
    value: &CompactionThroughput,
) -> ApiResult<CompactionThroughput> {
    let bytes = value
        .mib_per_second
        .checked_mul(MIB)
        .ok_or_else(|| ApiError::bad_request("compaction throughput is too large"))?;
    node.storage.set_compaction_throughput(bytes);
    Ok(throughput(node))
}

pub fn compactors(node: &AdminNode) -> ConcurrentCompactors {
    ConcurrentCompactors {
        value: node.storage.concurrent_compactors() as u64,
    }
}

pub fn set_compactors(
    node: &AdminNode,
    value: &ConcurrentCompactors,
) -> ApiResult<ConcurrentCompactors> {
    if value.value == 0 {
        return Err(ApiError::bad_request(
            "Number of concurrent compactors should be greater than 0.",
        ));
    }
    let count = usize::try_from(value.value)
        .map_err(|_| ApiError::bad_request("too many concurrent compactors"))?;
    node.storage.set_concurrent_compactors(count);
    Ok(compactors(node))
}
