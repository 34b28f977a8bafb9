//! Reads with what they did ([`ReadStats`]), the per-table read/write metrics, the key and
//! chunk caches' figures and the tombstone thresholds the query layer applies to reads.

use super::Storage;
use crate::error::Result;
use crate::filter::{KeyRange, ReadFilter};
use crate::metrics::{ReadStats, TableMetrics};
use crate::sstable::{ChunkCacheStats, KeyCacheStats};
use mutation::partition::SourceRows;
use mutation::scan::ScanSource;
use mutation::{Partition, PartitionKey, TableId};

/// `tombstone_warn_threshold` and `tombstone_failure_threshold`: a read meeting more tombstones
/// than `warn` warns the client, one meeting more than `failure` fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TombstoneThresholds {
    pub warn: u64,
    pub failure: u64,
}

impl Storage {
    /// The live content of one partition at `now` (seconds), with what the read did.
    pub fn read_with_stats(
        &self,
        table: TableId,
        key: &PartitionKey,
        filter: &ReadFilter,
        now: i32,
    ) -> Result<(Option<Partition>, ReadStats)> {
        let engine = self.engine(table)?;
        self.checked_read(&engine, engine.read_counted(key, filter, now))
    }

    /// Up to `limit` live partitions of `range` in token order, with what the scan did.
    pub fn scan_with_stats(
        &self,
        table: TableId,
        range: &KeyRange,
        filter: &ReadFilter,
        now: i32,
        limit: usize,
    ) -> Result<(Vec<Partition>, ReadStats)> {
        let engine = self.engine(table)?;
        self.checked_read(&engine, engine.scan_counted(range, filter, now, limit))
    }

    /// This node's answer, as one replica, to a round of a read of `key`: unresolved data
    /// (tombstones kept) of every local source read up to `cap` rows, restricted to what is
    /// complete, and where it stopped (see [`LsmEngine::read_source`](crate::LsmEngine)).
    /// With `cap = usize::MAX`, the partition's whole unresolved data for `filter`.
    pub fn read_source(
        &self,
        table: TableId,
        key: &PartitionKey,
        filter: &ReadFilter,
        cap: usize,
    ) -> Result<Option<SourceRows>> {
        let engine = self.engine(table)?;
        self.checked_read(&engine, engine.read_source(key, filter, cap))
    }

    /// This node's answer, as one replica, to a range scan: at most `partition_limit`
    /// unresolved partitions of `range` (see [`ScanSource`]).
    pub fn scan_source(
        &self,
        table: TableId,
        range: &KeyRange,
        filter: &ReadFilter,
        partition_limit: usize,
    ) -> Result<ScanSource> {
        let engine = self.engine(table)?;
        self.checked_read(&engine, engine.scan_source(range, filter, partition_limit))
    }

    /// A table's read and write counts and its SSTables-, tombstones- and live-rows-per-read
    /// histograms since it was registered (every read through [`Storage`] is recorded).
    pub fn table_metrics(&self, table: TableId) -> Result<TableMetrics> {
        Ok(self.engine(table)?.metrics().snapshot())
    }

    /// Size, capacity, hits and misses of the node's key cache.
    pub fn key_cache_stats(&self) -> KeyCacheStats {
        self.core.key_cache.stats()
    }

    /// Size, capacity, hits and misses of the node's chunk cache.
    pub fn chunk_cache_stats(&self) -> ChunkCacheStats {
        self.core.chunk_cache.stats()
    }

    pub fn tombstone_thresholds(&self) -> TombstoneThresholds {
        TombstoneThresholds {
            warn: self.core.config.tombstone_warn_threshold,
            failure: self.core.config.tombstone_failure_threshold,
        }
    }
}
