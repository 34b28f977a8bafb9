//! The storage and streaming settings a node takes from cassandra.yaml.
use config::{CommitLogSync, Config, MemtableAllocationType};
use storage::{CommitlogSync, MemtableAllocation, StorageConfig};

/// Storage's settings: directories, commit log, memtables, caches, compaction, failure policies.
pub fn storage_config(config: &Config) -> StorageConfig {
    let data_dir = config
        .data_file_directories
        .first()
        .cloned()
        .unwrap_or_else(|| "data/data".into());
    let mut sc = StorageConfig::new(data_dir, config.commitlog_directory.clone());
    sc.data_dirs = config.data_file_directories.clone();
    sc.segment_size = config.commitlog_segment_size.as_bytes();
    sc.sync = match config.commitlog_sync {
        CommitLogSync::Periodic => CommitlogSync::Periodic {
            period: config.commitlog_sync_period,
        },
        CommitLogSync::Batch => CommitlogSync::Batch,
        CommitLogSync::Group => CommitlogSync::Group {
            window: config.commitlog_sync_group_window,
        },
    };
    if let Some(space) = config.memtable_heap_space {
        sc.memtable_space = space.as_bytes();
    }
    if let Some(space) = config.memtable_offheap_space {
        sc.memtable_offheap_space = space.as_bytes();
    }
    sc.memtable_allocation = match config.memtable_allocation_type {
        MemtableAllocationType::OffheapBuffers | MemtableAllocationType::OffheapObjects => {
            MemtableAllocation::Offheap
        }
        MemtableAllocationType::HeapBuffers
        | MemtableAllocationType::UnslabbedHeapBuffers
        | MemtableAllocationType::UnslabbedHeapBuffersLogged => MemtableAllocation::Heap,
    };
    if let Some(threshold) = config.memtable_cleanup_threshold {
        sc.memtable_cleanup_threshold = threshold;
    }
    if let Some(space) = config.commitlog_total_space {
        sc.commitlog_total_space = space.as_bytes();
    }
    sc.compaction_throughput = config.compaction_throughput.as_bytes_per_second();
    if let Some(compactors) = config.concurrent_compactors {
        sc.concurrent_compactors = compactors as usize;
    }
    if let Some(size) = config.key_cache_size {
        sc.key_cache_size = size.as_bytes();
    }
    if let Some(size) = config.file_cache_size {
        sc.file_cache_size = size.as_bytes();
    }
    if !config.file_cache_enabled {
        sc.file_cache_size = 0;
    }
    sc.tombstone_warn_threshold = u64::from(config.tombstone_warn_threshold);
    sc.tombstone_failure_threshold = u64::from(config.tombstone_failure_threshold);
    sc.auto_snapshot = config.auto_snapshot;
    sc.disk_failure_policy = config.disk_failure_policy;
    sc.commit_failure_policy = config.commit_failure_policy;
    sc
}

/// Lifecycle operations' settings from cassandra.yaml (ring delay, consistent range movement,
/// where the disk check looks and where a join records the ranges it received).
pub fn nodeops_settings(config: &Config) -> nodeops::Settings {
    nodeops::Settings {
        consistent_rangemovement: config.consistent_rangemovement,
        data_dirs: config.data_file_directories.clone(),
        received_file: Some(config.metadata_directory.join("bootstrap_received_ranges")),
        ..nodeops::Settings::new(config.ring_delay)
    }
}

/// The stream throttles from cassandra.yaml, the rest as the crate's defaults.
pub fn stream_config(config: &Config) -> streaming::StreamConfig {
    streaming::StreamConfig {
        throughput: config.stream_throughput_outbound.as_bytes_per_second(),
        entire_sstable_throughput: config
            .entire_sstable_stream_throughput_outbound
            .as_bytes_per_second(),
        ..streaming::StreamConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use storage::{CommitFailurePolicy, DiskFailurePolicy};

    use super::*;

    fn mapped(yaml: &str) -> StorageConfig {
        let loaded = config::load_str(yaml, Path::new("/")).expect("valid configuration");
        storage_config(&loaded.config)
    }

    #[test]
    fn storage_config_maps_pools_directories_and_commitlog_space() {
        let sc = mapped(
            "data_file_directories: [/d1, /d2]\ncommitlog_directory: /cl\n\
             memtable_heap_space: 10MiB\nmemtable_offheap_space: 20MiB\n\
             memtable_allocation_type: offheap_objects\n",
        );
        assert_eq!(sc.data_dirs, vec![Path::new("/d1"), Path::new("/d2")]);
        assert_eq!(
            (sc.memtable_space, sc.memtable_offheap_space),
            (10 << 20, 20 << 20)
        );
        assert_eq!(sc.memtable_allocation, MemtableAllocation::Offheap);
        assert_eq!(
            sc.commitlog_total_space,
            storage::default_commitlog_total_space(Path::new("/cl"))
        );

        let sc = mapped(
            "memtable_allocation_type: unslabbed_heap_buffers\ncommitlog_total_space: 1GiB\n",
        );
        assert_eq!(sc.memtable_allocation, MemtableAllocation::Heap);
        assert_eq!(sc.commitlog_total_space, 1 << 30);
    }

    #[test]
    fn failure_policies_reach_storage() {
        let defaults = mapped("");
        assert_eq!(defaults.disk_failure_policy, DiskFailurePolicy::Stop);
        assert_eq!(defaults.commit_failure_policy, CommitFailurePolicy::Stop);
        let set = mapped("disk_failure_policy: best_effort\ncommit_failure_policy: ignore\n");
        assert_eq!(set.disk_failure_policy, DiskFailurePolicy::BestEffort);
        assert_eq!(set.commit_failure_policy, CommitFailurePolicy::Ignore);
    }

    #[test]
    fn the_chunk_cache_is_on_unless_disabled_or_sized_zero() {
        assert!(mapped("").file_cache_size > 0, "on by default");
        assert_eq!(mapped("file_cache_size: 64MiB\n").file_cache_size, 64 << 20);
        assert_eq!(mapped("file_cache_size: 0MiB\n").file_cache_size, 0);
        let off = "file_cache_enabled: false\nfile_cache_size: 64MiB\n";
        assert_eq!(mapped(off).file_cache_size, 0);
    }
}
