//! Figures of a table and of the node for operators (`nodetool tablestats`, `compactionstats`,
//! `info` and the Prometheus metrics): sizes on disk and in memory, flushes, pending and
//! completed compactions, commit-log size.

use super::{now_seconds, Storage};
use crate::compaction::exec::CompactionTotals;
use crate::engine::TableEngine;
use crate::error::Result;
use crate::sstable::{EstimatedHistogram, FilterStats, Sstable};
use mutation::TableId;

/// One table's data, as `nodetool tablestats` reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableUsage {
    pub sstables: usize,
    /// Bytes on disk of the live SSTables.
    pub disk_bytes: u64,
    /// Uncompressed size of the live SSTables' data.
    pub uncompressed_bytes: u64,
    /// Uncompressed size of the data repaired, unrepaired and in an incremental repair not
    /// yet ended (Cassandra's BytesRepaired, BytesUnrepaired, BytesPendingRepair).
    pub repaired_bytes: u64,
    pub unrepaired_bytes: u64,
    pub pending_repair_bytes: u64,
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
    /// Bytes on disk per LCS level (index = level).
    pub level_bytes: Vec<u64>,
    /// Uncompressed partition sizes of every live SSTable, merged.
    pub partition_sizes: EstimatedHistogram,
    /// Cells per partition of every live SSTable, merged.
    pub cell_counts: EstimatedHistogram,
    /// The live SSTables' Bloom filters: positives since they were opened, bytes.
    pub filter: FilterStats,
    /// Tombstones and expired cells purgeable now (past `gc_grace_seconds`) over all cells
    /// and deletions (Cassandra's droppable tombstone ratio).
    pub droppable_tombstone_ratio: f64,
}

impl TableUsage {
    /// Cassandra's PercentRepaired: the share of the SSTables' uncompressed data repaired, 100
    /// when there is none.
    pub fn percent_repaired(&self) -> f64 {
        let total = self.repaired_bytes + self.unrepaired_bytes + self.pending_repair_bytes;
        if total == 0 {
            return 100.0;
        }
        self.repaired_bytes as f64 * 100.0 / total as f64
    }

    /// Adds one live SSTable's sizes, partitions, filter figures and level.
    fn add_sstable(&mut self, sstable: &Sstable) {
        let (stats, size) = (sstable.stats(), sstable.size_on_disk());
        self.disk_bytes += size;
        self.max_sstable_bytes = self.max_sstable_bytes.max(size);
        self.uncompressed_bytes += stats.uncompressed_size;
        let repair = sstable.repair();
        let bytes = if repair.pending_repair.is_some() {
            &mut self.pending_repair_bytes
        } else if repair.is_repaired() {
            &mut self.repaired_bytes
        } else {
            &mut self.unrepaired_bytes
        };
        *bytes += stats.uncompressed_size;
        self.partitions += stats.partitions;
        self.partition_sizes.merge(&stats.partition_sizes);
        self.cell_counts.merge(&stats.cell_counts);
        let filter = sstable.filter_stats();
        self.filter.true_positives += filter.true_positives;
        self.filter.false_positives += filter.false_positives;
        self.filter.size_bytes += filter.size_bytes;
        let level = sstable.level() as usize;
        if self.levels.len() <= level {
            self.levels.resize(level + 1, 0);
            self.level_bytes.resize(level + 1, 0);
        }
        self.levels[level] += 1;
        self.level_bytes[level] += size;
    }
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
        let gc_before = engine.settings().gc_before(now_seconds());
        let (mut droppable, mut cells) = (0, 0);
        for live in &view.sstables {
            let stats = live.sstable.stats();
            droppable += stats.droppable_tombstones(gc_before);
            cells += stats.cells
                + stats.row_tombstones
                + stats.range_tombstones
                + stats.partition_tombstones;
            usage.add_sstable(&live.sstable);
        }
        if usage.partition_sizes.count() > 0 {
            usage.partition_bytes_min = usage.partition_sizes.percentile(0.0);
            usage.partition_bytes_max = usage.partition_sizes.max();
        }
        usage.droppable_tombstone_ratio = droppable as f64 / cells.max(1) as f64;
        Ok(usage)
    }

    /// Partitions of a table, estimated as Cassandra's estimatedKeys: those of its SSTables (a
    /// partition in several counts once per SSTable) and of its memtables.
    pub fn estimated_partitions(&self, table: TableId) -> Result<u64> {
        let view = self.core.engine(table)?.view();
        let memtables = std::iter::once(&view.active).chain(&view.flushing);
        let in_memory: usize = memtables.map(|m| m.memtable().partition_count()).sum();
        let on_disk: u64 = view
            .sstables
            .iter()
            .map(|l| l.sstable.stats().partitions)
            .sum();
        Ok(on_disk + in_memory as u64)
    }

    /// The keyspace and name of a table, for operators' messages.
    pub fn table_name(&self, table: TableId) -> Result<(String, String)> {
        let settings = self.core.engine(table)?.settings();
        Ok((settings.keyspace.clone(), settings.name.clone()))
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
