//! Storage for Helenus: memtables, SSTables, compaction, the per-table engine trait and the
//! commit log, tied together by [`Storage`]. The data model it stores, the vocabulary of reads,
//! and the answers a read gives and their reconciliation (`PartitionData`, `SourceRows`,
//! `ScanSource`, `mutation::reconcile`, `mutation::rounds`) come from the `mutation` crate;
//! storage produces those answers from its memtables and SSTables.
//!
//! What each part owns:
//! - `facade`: [`Storage`], the node's table registry — durable writes through the commit log
//!   into per-table engines, counter increments, reads, flushes, compactions, cleanup, scrub,
//!   snapshots, streams in and out, commit-log replay; background threads flush under memory or
//!   commit-log pressure and run compactions; [`Storage::shutdown`] drains everything.
//! - `health`: failure policies (`disk_failure_policy`, `commit_failure_policy`) and directory
//!   health.
//! - `commitlog`: preallocated, memory-mapped segments that the request's own thread copies its
//!   record into under one lock, with no system call under it (written pages are unmapped after
//!   it, and the next segment is created ahead by the sync thread so that a roll only swaps it
//!   in); a sync thread for periodic/batch/group fsyncs and for cutting retired segments to
//!   length; replay that reads a zero tail as a segment's end. Waits of a write over 5 ms (the
//!   log's lock, the memtable-switch barrier, memtable space) and slow rolls are logged at debug.
//! - Memtables: partitions in B-trees that each hold a slice of the token range behind a
//!   read-write lock, about 256 partitions a slice (sized from the previous memtable, at least
//!   16 slices), with a Bloom filter of their tokens that point reads check first
//!   (`partition_map`). A partition's rows are kept in the compact row encoding, copied into the
//!   memtable's arena (`arena`: bump allocation in regions of up to 1 MiB, a shard per thread —
//!   `stripes` — so writers on two cores share no lock, given up all at once with the memtable,
//!   full-size regions pooled; written here because rows are allocated from many threads and
//!   their regions recycled across memtables), in a sorted vector up to 16 rows, then a B-tree
//!   (`row_map`); reconciled on overwrite by decoding, merging and encoding again; copied by a
//!   flush with their column names numbered without decoding the row
//!   (`mutation::codec::put_numbered_row`). A partition's deletion, static row and range
//!   tombstones stay decoded (`mem_partition`).
//! - `engine`: the `TableEngine` trait, its LSM implementation and the in-memory one, and the
//!   conformance suite both pass; memtable pools with write back-pressure; several data
//!   directories (`placement`).
//! - `sstable`: format version 2 (`hb`) written, version 1 (`ha`) still read
//!   (docs/sstable-format.md); the node-wide key cache (a partition's location and its key,
//!   inline up to 22 bytes, in the map's slot) and chunk cache (decompressed Data chunks and
//!   verified Index blocks) over one sharded map evicting by CLOCK, whose entries weigh what they
//!   take in memory so `key_cache_size` and `file_cache_size` bound it; rows read from a cached
//!   chunk slice their values out of it rather than copying them.
//! - `compaction`: STCS, LCS, TWCS and UCS, their options, and the compaction executor.
//! - `stream`: the SSTables of token ranges going out and coming in (whole files hard-linked,
//!   straddling ones rewritten), for the `streaming` crate.

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
mod partition_map;
mod snapshot;
pub mod stream;
pub mod stripes;
mod token_filter;
mod waited;

// The read vocabulary, under the name storage's modules use for it.
pub(crate) use mutation::filter;

pub use commitlog::CommitlogSync;
pub use compaction::exec::{CompactionProgress, CompactionRecord, CompactionTotals};
pub use compaction::TaskKind;
pub use engine::FlushReport;
pub use engine::{disk_space, DiskSpace};
pub use engine::{LsmEngine, MemtableEngine, TableEngine};
pub use error::{Result, StorageError};
pub use facade::{
    default_commitlog_total_space, CleanupReport, CorruptSstable, MemtableAllocation,
    PendingReport, PoolUsage, RepairScope, ReplayStats, ScrubReport, SizeEstimates, SnapshotTable,
    Storage, StorageConfig, TableStats, TableUsage, TombstoneThresholds, VerifyOptions,
    VerifyReport,
};
pub use health::{CommitFailurePolicy, DiskFailurePolicy, FailureListener, NodeAction};
pub use metrics::{Percentiles, TableMetrics};
pub use params::{TableParams, TableSettings, DEFAULT_GC_GRACE_SECONDS};
pub use snapshot::SnapshotInfo;
pub use sstable::{
    CacheStats, ChunkCacheStats, KeyCacheStats, PartitionWatch, RepairMark, WatchThresholds,
    WrittenCollection, WrittenPartition,
};
