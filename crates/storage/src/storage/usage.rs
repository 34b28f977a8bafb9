//! Figures of a table and of the node for operators (`nodetool tablestats`, `compactionstats`,
//! `info` and the Prometheus metrics): sizes on disk and in memory, flushes, pending and
//! completed compactions, commit-log size.

use super::{now_seconds, Storage};
use crate::compaction::exec::CompactionTotals;
use crate::engine::TableEngine;
use crate::error::Result;
use crate::model::TableId;

/// One table's data, as `nodetool tablestats` reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableUsage {
    pub sstables: usize,
    /// Bytes on disk of the live SSTables.
    pub disk_bytes: u64,
    /// Uncompressed size of the live SSTables' data.
    pub uncompressed_bytes: u64,
    /// Size on disk of the largest SSTable.
    pub max_sstable_bytes: u64,
    /// Partitions in the SSTables (a partition in several SSTables counts once per SSTable).
    pub partitions: u64,
    /// Uncompressed partition sizes: smallest and largest bucket bounds over the SSTables.
    pub partition_bytes_min: u64,
    pub partition_bytes_max: u64,
    /// Memory of the memtables (active and being flushed).
    pub memtable_bytes: usize,
    /// Memtables flushed since the node started (Cassandra's memtable switch count).
    pub flushes: u64,
    /// Background compactions the strategy has due.
    pub pending_compactions: usize,
    /// SSTables per LCS level (index = level).
    pub levels: Vec<usize>,
}

impl Storage {
    /// Sizes, flushes and pending compactions of a table.
    pub fn table_usage(&self, table: TableId) -> Result<TableUsage> {
        let engine = self.core.engine(table)?;
        let view = engine.view();
        let mut usage = TableUsage {
            sstables: view.sstables.len(),
            memtable_bytes: engine.memory_bytes(),
            flushes: engine.flush_count(),
            pending_compactions: engine.pending_tasks(now_seconds()),
            ..TableUsage::default()
        };
        for live in &view.sstables {
            let (sstable, stats) = (&live.sstable, live.sstable.stats());
            usage.disk_bytes += sstable.size_on_disk();
            usage.max_sstable_bytes = usage.max_sstable_bytes.max(sstable.size_on_disk());
            usage.uncompressed_bytes += stats.uncompressed_size;
            usage.partitions += stats.partitions;
            if stats.partition_sizes.count() > 0 {
                let min = stats.partition_sizes.percentile(0.0);
                usage.partition_bytes_min = match usage.partition_bytes_min {
                    0 => min,
                    known => known.min(min),
                };
                usage.partition_bytes_max =
                    usage.partition_bytes_max.max(stats.partition_sizes.max());
            }
            let level = sstable.level() as usize;
            if usage.levels.len() <= level {
                usage.levels.resize(level + 1, 0);
            }
            usage.levels[level] += 1;
        }
        Ok(usage)
    }

    /// Compactions completed since the node started.
    pub fn compaction_totals(&self) -> CompactionTotals {
        self.core.registry.totals()
    }

    /// Bytes of commit-log segments on disk.
    pub fn commitlog_bytes(&self) -> u64 {
        self.core.log.disk_bytes()
    }

    /// Concurrent compactions allowed (`concurrent_compactors`).
    pub fn concurrent_compactors(&self) -> usize {
        self.core
            .concurrent_compactors
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}
