//! Storage for Helenus: reconciliation, memtables, SSTables, compaction, the per-table engine
//! trait and the commit log, tied together by [`Storage`]. The data model it stores, and the
//! vocabulary of reads, come from the `mutation` crate.

pub mod commitlog;
pub mod compaction;
pub mod engine;
pub mod error;
pub mod health;
pub mod sstable;

mod arena;
mod backoff;
mod counter;
mod facade;
mod log_entry;
mod mem_partition;
mod memtable;
mod metrics;
mod params;
mod partition;
mod partition_map;
mod reconcile;
mod repair;
mod resolve;
mod row_map;
mod snapshot;
pub mod stream;
pub mod stripes;
#[cfg(test)]
mod testing;
mod token_filter;
mod waited;
pub mod wire;

// The read vocabulary, under the name storage's modules use for it.
pub(crate) use mutation::filter;

pub use commitlog::CommitlogSync;
pub use compaction::exec::{CompactionProgress, CompactionRecord, CompactionTotals};
pub use compaction::garbage::Granularity;
pub use compaction::TaskKind;
pub use engine::FlushReport;
pub use engine::{
    resolve_partition, LsmEngine, MemtableEngine, Round, Rounds, ScanRound, ScanSource, TableEngine,
};
pub use error::{Result, StorageError};
pub use facade::{
    default_commitlog_total_space, CleanupReport, CorruptSstable, MemtableAllocation, PoolUsage,
    ReplayStats, ScrubReport, SizeEstimates, SnapshotTable, Storage, StorageConfig, TableStats,
    TableUsage, TokenRange, TombstoneThresholds, VerifyOptions, VerifyReport,
};
pub use health::{CommitFailurePolicy, DiskFailurePolicy, FailureListener, NodeAction};
pub use metrics::{Percentiles, TableMetrics};
pub use params::{TableParams, TableSettings, DEFAULT_GC_GRACE_SECONDS};
pub use partition::{PartitionData, SourceRows};
pub use row_map::RowMap;
pub use snapshot::SnapshotInfo;
pub use sstable::{
    CacheStats, ChunkCacheStats, KeyCacheStats, PartitionWatch, WatchThresholds, WrittenCollection,
    WrittenPartition,
};
