//! [`StorageConfig`]: where and how a node stores data, with Cassandra's defaults.

use std::path::{Path, PathBuf};

use crate::commitlog::{CommitlogSync, DEFAULT_SEGMENT_SIZE};
use crate::engine::disk_space;
use crate::health::{CommitFailurePolicy, DiskFailurePolicy};

/// Upper bound of the default size of each memtable pool. Cassandra gives each pool a quarter
/// of the heap, and its default heap is a quarter of the machine's memory, so 1/16 of memory;
/// Helenus has no heap and caps the pools: a memtable's rows take about twice their charge in
/// resident memory once flushing and allocator churn are counted (a 30 s write at 64 threads:
/// peak RSS 259 / 347 / 539 MiB with 64 / 128 / 256 MiB pools, throughput unchanged), and the
/// bench's resident-memory target is a quarter of Cassandra's (about 650 MiB).
const MAX_DEFAULT_MEMTABLE_POOL: u64 = 128 * 1024 * 1024;
/// Upper bound of the default `commitlog_total_space` (Cassandra 5.0: 8192 MiB).
const MAX_DEFAULT_COMMITLOG_TOTAL_SPACE: u64 = 8 * 1024 * 1024 * 1024;
/// Default `compaction_throughput` (64 MiB/s).
const DEFAULT_COMPACTION_THROUGHPUT: u64 = 64 * 1024 * 1024;
/// Upper bound of the default `key_cache_size` (Cassandra: min(5% of the heap, 100 MiB)).
const MAX_DEFAULT_KEY_CACHE: u64 = 100 * 1024 * 1024;
/// Upper bound of the default `file_cache_size`.
const MAX_DEFAULT_FILE_CACHE: u64 = 96 * 1024 * 1024;

/// Where memtable bytes are counted (`memtable_allocation_type`). Helenus keeps every memtable
/// in ordinary memory; the type decides which pool a byte counts against. With the heap types
/// everything counts against the heap pool (`memtable_heap_space`); with the offheap types the
/// cell values (and collection cell paths) count against the offheap pool
/// (`memtable_offheap_space`) and the rest (structure, names, per-object overhead) against the
/// heap pool, as Cassandra moves cell buffers off the heap. Helenus has no separate native
/// object layout, so `offheap_objects` counts as `offheap_buffers` does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MemtableAllocation {
    /// `heap_buffers` and `unslabbed_heap_buffers` (`_logged`).
    #[default]
    Heap,
    /// `offheap_buffers` and `offheap_objects`.
    Offheap,
}

/// Where and how to store data.
#[derive(Clone, Debug)]
pub struct StorageConfig {
    /// `data_file_directories`: every table has a directory under each; see
    /// [`LsmEngine`](crate::engine::LsmEngine) for how new SSTables are placed.
    pub data_dirs: Vec<PathBuf>,
    pub commitlog_dir: PathBuf,
    pub sync: CommitlogSync,
    /// `commitlog_segment_size` in bytes; a record may use at most half of it.
    pub segment_size: u64,
    /// On corruption, skip the rest of a commit-log segment and move a corrupt SSTable to its
    /// table's `quarantine/` directory instead of failing.
    pub ignore_corruption: bool,
    /// The heap pool of all tables' memtables (`memtable_heap_space`): writers wait while the
    /// live and flushing memtables hold more.
    pub memtable_space: u64,
    /// The offheap pool (`memtable_offheap_space`), used with [`MemtableAllocation::Offheap`].
    pub memtable_offheap_space: u64,
    pub memtable_allocation: MemtableAllocation,
    /// The largest memtable is flushed when either pool holds more than this fraction of its
    /// size (`memtable_cleanup_threshold`).
    pub memtable_cleanup_threshold: f64,
    /// Flush the tables dirty in the oldest segment when the commit log exceeds this.
    pub commitlog_total_space: u64,
    /// Bytes per second over all compactions; 0 = unthrottled.
    pub compaction_throughput: u64,
    pub concurrent_compactors: usize,
    /// Bytes of Index entries the key cache may hold (`key_cache_size`); 0 disables it.
    pub key_cache_size: u64,
    /// Bytes of decompressed Data chunks the chunk cache may hold (`file_cache_size`); 0
    /// disables it, as does `file_cache_enabled: false`. Cassandra 5.0 leaves the chunk cache
    /// off by default (`file_cache_enabled: false`) and sizes it min(512 MiB, 1/4 of the heap)
    /// when on; Helenus, which has no JVM heap whose buffers would hold hot chunks, keeps it on
    /// by default at min(1/32 of memory, 96 MiB), so that a node stays within its
    /// resident-memory target.
    pub file_cache_size: u64,
    /// Reads meeting more tombstones than this warn the client (`tombstone_warn_threshold`).
    pub tombstone_warn_threshold: u64,
    /// Reads meeting more tombstones than this fail (`tombstone_failure_threshold`).
    pub tombstone_failure_threshold: u64,
    /// Snapshot a table before DROP and TRUNCATE remove its data (`auto_snapshot`).
    pub auto_snapshot: bool,
    /// What failed data directories and corrupt SSTables do (`disk_failure_policy`).
    pub disk_failure_policy: DiskFailurePolicy,
    /// What commit-log failures do (`commit_failure_policy`).
    pub commit_failure_policy: CommitFailurePolicy,
    /// Tables keep their data in memtables: no flush or compaction thread starts, writers
    /// never wait for memtable space, and a memtable is flushed only when asked (`nodetool
    /// flush`, a drain, streaming). Not a cassandra.yaml setting: the whole-cluster simulation
    /// sets it so that no storage thread runs outside simulated time.
    pub in_memory: bool,
}

impl StorageConfig {
    /// Defaults: periodic sync every 10 s, 32 MiB segments, fail on corruption, memtable pools
    /// of 1/16 of memory up to 128 MiB each counted as heap buffers, a commit log of
    /// min(8 GiB, a quarter of its volume), 64 MiB/s and two compactions at a time, a key cache of
    /// min(5% of memory, 100 MiB), a chunk cache of min(1/32 of memory, 96 MiB), Cassandra's
    /// tombstone thresholds, auto snapshots on, Cassandra's failure policies (`stop`).
    pub fn new(data_dir: impl Into<PathBuf>, commitlog_dir: impl Into<PathBuf>) -> Self {
        let commitlog_dir = commitlog_dir.into();
        StorageConfig {
            data_dirs: vec![data_dir.into()],
            commitlog_total_space: default_commitlog_total_space(&commitlog_dir),
            commitlog_dir,
            sync: CommitlogSync::default(),
            segment_size: DEFAULT_SEGMENT_SIZE,
            ignore_corruption: false,
            memtable_space: default_memtable_pool(),
            memtable_offheap_space: default_memtable_pool(),
            memtable_allocation: MemtableAllocation::Heap,
            memtable_cleanup_threshold: 0.5,
            compaction_throughput: DEFAULT_COMPACTION_THROUGHPUT,
            concurrent_compactors: 2,
            key_cache_size: default_key_cache_size(),
            file_cache_size: default_file_cache_size(),
            tombstone_warn_threshold: 1_000,
            tombstone_failure_threshold: 100_000,
            auto_snapshot: true,
            disk_failure_policy: DiskFailurePolicy::default(),
            commit_failure_policy: CommitFailurePolicy::default(),
            in_memory: false,
        }
    }

    /// Heap-pool bytes above which the largest memtable is flushed.
    pub fn flush_threshold(&self) -> u64 {
        self.cleanup_share(self.memtable_space)
    }

    /// Offheap-pool bytes above which the largest memtable is flushed.
    pub fn offheap_flush_threshold(&self) -> u64 {
        self.cleanup_share(self.memtable_offheap_space)
    }

    fn cleanup_share(&self, pool: u64) -> u64 {
        let fraction = self.memtable_cleanup_threshold.clamp(0.01, 1.0);
        (pool as f64 * fraction) as u64
    }
}

/// Cassandra 5.0's default `commitlog_total_space`: the smaller of 8192 MiB and a quarter of
/// the total size of the commit log's volume (8192 MiB when that size is unknown).
pub fn default_commitlog_total_space(commitlog_dir: &Path) -> u64 {
    commitlog_space_rule(volume_bytes(commitlog_dir))
}

fn commitlog_space_rule(volume: Option<u64>) -> u64 {
    volume.map_or(MAX_DEFAULT_COMMITLOG_TOTAL_SPACE, |v| {
        (v / 4).min(MAX_DEFAULT_COMMITLOG_TOTAL_SPACE)
    })
}

/// Total size of the file system holding `path`, or of its nearest existing ancestor (the
/// commit-log directory is created later).
fn volume_bytes(path: &Path) -> Option<u64> {
    let existing = path.ancestors().find(|p| p.exists())?;
    disk_space(existing).map(|space| space.total)
}

/// Each memtable pool's default: 1/16 of memory, at most [`MAX_DEFAULT_MEMTABLE_POOL`].
fn default_memtable_pool() -> u64 {
    memory_share(16, MAX_DEFAULT_MEMTABLE_POOL)
}

/// min(5% of the machine's memory, 100 MiB); 100 MiB when the memory size is unknown.
fn default_key_cache_size() -> u64 {
    memory_share(20, MAX_DEFAULT_KEY_CACHE)
}

/// min(1/32 of the machine's memory, 96 MiB); 96 MiB when the memory size is unknown.
fn default_file_cache_size() -> u64 {
    memory_share(32, MAX_DEFAULT_FILE_CACHE)
}

/// min(1/`divisor` of the machine's memory, `max`); `max` when the memory size is unknown.
fn memory_share(divisor: u64, max: u64) -> u64 {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| mem_total_bytes(&info));
    total.map_or(max, |t| (t / divisor).min(max))
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

    #[test]
    fn file_cache_defaults_to_a_thirty_second_of_memory_up_to_96_mib() {
        let size = default_file_cache_size();
        assert!(size > 0 && size <= MAX_DEFAULT_FILE_CACHE, "{size}");
        let config = StorageConfig::new("/d", "/c");
        assert_eq!(config.file_cache_size, size);
    }

    #[test]
    fn commitlog_space_is_a_quarter_of_the_volume_up_to_8_gib() {
        const GIB: u64 = 1 << 30;
        assert_eq!(commitlog_space_rule(Some(16 * GIB)), 4 * GIB);
        assert_eq!(commitlog_space_rule(Some(32 * GIB)), 8 * GIB);
        assert_eq!(commitlog_space_rule(Some(1024 * GIB)), 8 * GIB);
        assert_eq!(commitlog_space_rule(None), 8 * GIB);
        let dir = tempfile::tempdir().expect("tempdir");
        let volume = volume_bytes(&dir.path().join("not/yet/created")).expect("statvfs");
        assert!(volume > 0);
        assert_eq!(
            default_commitlog_total_space(dir.path()),
            (volume / 4).min(8 * GIB)
        );
    }

    #[test]
    fn memtable_pools_default_to_a_sixteenth_of_memory_up_to_256_mib() {
        let config = StorageConfig::new("/d", "/c");
        assert!(config.memtable_space > 0 && config.memtable_space <= MAX_DEFAULT_MEMTABLE_POOL);
        assert_eq!(config.memtable_offheap_space, config.memtable_space);
        assert_eq!(config.memtable_allocation, MemtableAllocation::Heap);
        assert_eq!(config.flush_threshold(), config.memtable_space / 2);
    }
}
