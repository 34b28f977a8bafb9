//! [`StorageConfig`]: where and how a node stores data, with Cassandra's defaults.

use std::path::PathBuf;

use crate::commitlog::{CommitlogSync, DEFAULT_SEGMENT_SIZE};

/// Default memtable space across all tables (Cassandra: a quarter of the heap).
const DEFAULT_MEMTABLE_SPACE: u64 = 256 * 1024 * 1024;
/// Default `commitlog_total_space`.
const DEFAULT_COMMITLOG_TOTAL_SPACE: u64 = 8 * 1024 * 1024 * 1024;
/// Default `compaction_throughput` (64 MiB/s).
const DEFAULT_COMPACTION_THROUGHPUT: u64 = 64 * 1024 * 1024;
/// Upper bound of the default `key_cache_size` (Cassandra: min(5% of the heap, 100 MiB)).
const MAX_DEFAULT_KEY_CACHE: u64 = 100 * 1024 * 1024;

/// Where and how to store data.
#[derive(Clone, Debug)]
pub struct StorageConfig {
    /// Table directories live under the first one.
    pub data_dirs: Vec<PathBuf>,
    pub commitlog_dir: PathBuf,
    pub sync: CommitlogSync,
    /// `commitlog_segment_size` in bytes; a record may use at most half of it.
    pub segment_size: u64,
    /// On corruption, skip the rest of a commit-log segment and move a corrupt SSTable to its
    /// table's `quarantine/` directory instead of failing.
    pub ignore_corruption: bool,
    /// Memtable space of all tables (`memtable_heap_space`/`memtable_offheap_space`).
    pub memtable_space: u64,
    /// The largest memtable is flushed when all of them hold more than this fraction of
    /// `memtable_space` (`memtable_cleanup_threshold`).
    pub memtable_cleanup_threshold: f64,
    /// Flush the tables dirty in the oldest segment when the commit log exceeds this.
    pub commitlog_total_space: u64,
    /// Bytes per second over all compactions; 0 = unthrottled.
    pub compaction_throughput: u64,
    pub concurrent_compactors: usize,
    /// Bytes of Index entries the key cache may hold (`key_cache_size`); 0 disables it.
    pub key_cache_size: u64,
    /// Reads meeting more tombstones than this warn the client (`tombstone_warn_threshold`).
    pub tombstone_warn_threshold: u64,
    /// Reads meeting more tombstones than this fail (`tombstone_failure_threshold`).
    pub tombstone_failure_threshold: u64,
    /// Snapshot a table before DROP and TRUNCATE remove its data (`auto_snapshot`).
    pub auto_snapshot: bool,
}

impl StorageConfig {
    /// Defaults: periodic sync every 10 s, 32 MiB segments, fail on corruption, 256 MiB of
    /// memtables, 8 GiB of commit log, 64 MiB/s and two compactions at a time, a key cache of
    /// min(5% of memory, 100 MiB), Cassandra's tombstone thresholds, auto snapshots on.
    pub fn new(data_dir: impl Into<PathBuf>, commitlog_dir: impl Into<PathBuf>) -> Self {
        StorageConfig {
            data_dirs: vec![data_dir.into()],
            commitlog_dir: commitlog_dir.into(),
            sync: CommitlogSync::default(),
            segment_size: DEFAULT_SEGMENT_SIZE,
            ignore_corruption: false,
            memtable_space: DEFAULT_MEMTABLE_SPACE,
            memtable_cleanup_threshold: 0.5,
            commitlog_total_space: DEFAULT_COMMITLOG_TOTAL_SPACE,
            compaction_throughput: DEFAULT_COMPACTION_THROUGHPUT,
            concurrent_compactors: 2,
            key_cache_size: default_key_cache_size(),
            tombstone_warn_threshold: 1_000,
            tombstone_failure_threshold: 100_000,
            auto_snapshot: true,
        }
    }

    /// The first data directory (where table directories are created).
    pub fn data_dir(&self) -> PathBuf {
        self.data_dirs
            .first()
            .cloned()
            .unwrap_or_else(|| PathBuf::from("data"))
    }

    /// Memtable bytes above which the largest memtable is flushed.
    pub fn flush_threshold(&self) -> u64 {
        let fraction = self.memtable_cleanup_threshold.clamp(0.01, 1.0);
        (self.memtable_space as f64 * fraction) as u64
    }
}

/// min(5% of the machine's memory, 100 MiB); 100 MiB when the memory size is unknown.
fn default_key_cache_size() -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| mem_total_bytes(&info));
    total.map_or(MAX_DEFAULT_KEY_CACHE, |t| {
        (t / 20).min(MAX_DEFAULT_KEY_CACHE)
    })
}

/// `MemTotal` of `/proc/meminfo` in bytes.
fn mem_total_bytes(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_cache_defaults_to_a_twentieth_of_memory_up_to_100_mib() {
        assert_eq!(mem_total_bytes("MemTotal:  1024 kB\n"), Some(1 << 20));
        assert_eq!(mem_total_bytes("junk"), None);
        let size = default_key_cache_size();
        assert!(size > 0 && size <= MAX_DEFAULT_KEY_CACHE, "{size}");
    }
}
