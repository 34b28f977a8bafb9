//! The configuration as `name -> value` text in Cassandra's syntax, for the
//! `system_views.settings` virtual table and the admin API.

use std::fmt::Display;
use std::path::Path;

use crate::config::{CommitLogSync, Config, MemtableAllocationType};
use crate::spec::{format_duration, DataSize};

/// One setting: its key and its value as Cassandra prints it (`None` when unset).
pub type Setting = (&'static str, Option<String>);

fn set(value: impl Display) -> Option<String> {
    Some(value.to_string())
}

fn opt<T: Display>(value: Option<T>) -> Option<String> {
    value.map(|v| v.to_string())
}

fn path(p: &Path) -> Option<String> {
    set(p.display())
}

impl Config {
    /// Every setting Helenus uses, with its current value.
    pub fn settings(&self) -> Vec<Setting> {
        let mut all = self.node_settings();
        all.extend(self.native_settings());
        all.extend(self.storage_settings());
        all.extend(self.request_settings());
        all.extend(self.guardrails.settings());
        all.extend(self.hints_settings());
        all.push(("repair_session_space", opt(self.repair_session_space)));
        all.extend(self.auto_repair.settings());
        all
    }

    fn node_settings(&self) -> Vec<Setting> {
        let tokens: Vec<String> = self.initial_token.iter().map(i64::to_string).collect();
        let seeds: Vec<String> = self
            .seed_addresses()
            .iter()
            .map(|s| s.to_string())
            .collect();
        vec![
            ("cluster_name", set(&self.cluster_name)),
            ("num_tokens", set(self.num_tokens)),
            ("auto_bootstrap", set(self.auto_bootstrap)),
            (
                "replace_address_first_boot",
                opt(self.replace_address_first_boot),
            ),
            ("ring_delay_ms", set(self.ring_delay.as_millis())),
            (
                "consistent_rangemovement",
                set(self.consistent_rangemovement),
            ),
            (
                "allocate_tokens_for_local_replication_factor",
                opt(self.allocate_tokens_for_local_replication_factor),
            ),
            ("phi_convict_threshold", set(self.phi_convict_threshold)),
            ("internode_compression", set(self.internode_compression)),
            (
                "initial_token",
                Some(tokens.join(",")).filter(|t| !t.is_empty()),
            ),
            ("listen_address", set(self.listen_address)),
            ("broadcast_address", opt(self.broadcast_address)),
            ("rpc_address", set(self.rpc_address)),
            ("broadcast_rpc_address", opt(self.broadcast_rpc_address)),
            ("storage_port", set(self.storage_port)),
            ("native_transport_port", set(self.native_transport_port)),
            (
                "native_transport_max_frame_size",
                set(self.native_transport_max_frame_size),
            ),
            (
                "native_transport_max_threads",
                set(self.native_transport_max_threads),
            ),
            ("max_value_size", set(self.max_value_size)),
            ("admin_address", set(self.admin_address)),
            ("admin_port", set(self.admin_port)),
            (
                "admin_auth_token_file",
                self.admin_auth_token_file.as_deref().and_then(path),
            ),
            ("endpoint_snitch", set(self.endpoint_snitch)),
            ("seed_provider.seeds", set(seeds.join(","))),
            (
                "partitioner",
                set("org.apache.cassandra.dht.Murmur3Partitioner"),
            ),
            ("authenticator", set("AllowAllAuthenticator")),
            ("authorizer", set("AllowAllAuthorizer")),
            ("role_manager", set("CassandraRoleManager")),
            ("auto_snapshot", set(self.auto_snapshot)),
            ("snapshot_before_compaction", set(false)),
        ]
    }

    fn native_settings(&self) -> Vec<Setting> {
        let (in_flight, per_ip) = self.request_data_in_flight();
        vec![
            (
                "native_transport_max_request_data_in_flight",
                set(DataSize::bytes(in_flight)),
            ),
            (
                "native_transport_max_request_data_in_flight_per_ip",
                set(DataSize::bytes(per_ip)),
            ),
            (
                "native_transport_throw_on_overload",
                set(self.native_transport_throw_on_overload),
            ),
            (
                "native_transport_rate_limiting_enabled",
                set(self.native_transport_rate_limiting_enabled),
            ),
            (
                "native_transport_max_requests_per_second",
                set(self.native_transport_max_requests_per_second),
            ),
            (
                "native_transport_idle_timeout",
                set(format_duration(self.native_transport_idle_timeout)),
            ),
            (
                "native_transport_max_concurrent_connections",
                set(self.native_transport_max_concurrent_connections),
            ),
            (
                "native_transport_max_concurrent_connections_per_ip",
                set(self.native_transport_max_concurrent_connections_per_ip),
            ),
        ]
    }

    fn storage_settings(&self) -> Vec<Setting> {
        let data: Vec<String> = self
            .data_file_directories
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        vec![
            (
                "data_file_directories",
                set(format!("[{}]", data.join(", "))),
            ),
            ("commitlog_directory", path(&self.commitlog_directory)),
            ("saved_caches_directory", path(&self.saved_caches_directory)),
            ("hints_directory", path(&self.hints_directory)),
            ("metadata_directory", path(&self.metadata_directory)),
            ("commitlog_sync", set(sync_name(self.commitlog_sync))),
            (
                "commitlog_sync_period",
                set(format_duration(self.commitlog_sync_period)),
            ),
            (
                "commitlog_sync_group_window",
                set(format_duration(self.commitlog_sync_group_window)),
            ),
            ("commitlog_segment_size", set(self.commitlog_segment_size)),
            ("commitlog_total_space", opt(self.commitlog_total_space)),
            ("max_mutation_size", opt(self.max_mutation_size)),
            ("concurrent_compactors", opt(self.concurrent_compactors)),
            ("compaction_throughput", set(self.compaction_throughput)),
            (
                "stream_throughput_outbound",
                set(self.stream_throughput_outbound),
            ),
            (
                "entire_sstable_stream_throughput_outbound",
                set(self.entire_sstable_stream_throughput_outbound),
            ),
            ("memtable_heap_space", opt(self.memtable_heap_space)),
            ("memtable_offheap_space", opt(self.memtable_offheap_space)),
            (
                "memtable_allocation_type",
                set(allocation_name(self.memtable_allocation_type)),
            ),
            ("memtable_flush_writers", opt(self.memtable_flush_writers)),
            (
                "memtable_cleanup_threshold",
                opt(self.memtable_cleanup_threshold),
            ),
            ("column_index_size", opt(self.column_index_size)),
            ("key_cache_size", opt(self.key_cache_size)),
            ("file_cache_enabled", set(self.file_cache_enabled)),
            ("file_cache_size", opt(self.file_cache_size)),
            ("disk_failure_policy", set(self.disk_failure_policy.name())),
            (
                "commit_failure_policy",
                set(self.commit_failure_policy.name()),
            ),
            (
                "prepared_statements_cache_size",
                opt(self.prepared_statements_cache_size),
            ),
        ]
    }

    fn request_settings(&self) -> Vec<Setting> {
        let duration = |d| set(format_duration(d));
        vec![
            ("concurrent_reads", set(self.concurrent_reads)),
            ("concurrent_writes", set(self.concurrent_writes)),
            (
                "concurrent_counter_writes",
                set(self.concurrent_counter_writes),
            ),
            ("request_timeout", duration(self.request_timeout)),
            ("read_request_timeout", duration(self.read_request_timeout)),
            (
                "range_request_timeout",
                duration(self.range_request_timeout),
            ),
            (
                "write_request_timeout",
                duration(self.write_request_timeout),
            ),
            (
                "counter_write_request_timeout",
                duration(self.counter_write_request_timeout),
            ),
            (
                "cas_contention_timeout",
                duration(self.cas_contention_timeout),
            ),
            (
                "paxos_purge_grace_period",
                duration(self.paxos_purge_grace_period),
            ),
            (
                "truncate_request_timeout",
                duration(self.truncate_request_timeout),
            ),
            (
                "slow_query_log_timeout",
                duration(self.slow_query_log_timeout),
            ),
            (
                "tombstone_warn_threshold",
                set(self.tombstone_warn_threshold),
            ),
            (
                "tombstone_failure_threshold",
                set(self.tombstone_failure_threshold),
            ),
            (
                "batch_size_warn_threshold",
                set(self.batch_size_warn_threshold),
            ),
            (
                "batch_size_fail_threshold",
                set(self.batch_size_fail_threshold),
            ),
            (
                "unlogged_batch_across_partitions_warn_threshold",
                set(self.unlogged_batch_across_partitions_warn_threshold),
            ),
        ]
    }

    fn hints_settings(&self) -> Vec<Setting> {
        let dcs = &self.hinted_handoff_disabled_datacenters;
        vec![
            ("hinted_handoff_enabled", set(self.hinted_handoff_enabled)),
            (
                "hinted_handoff_disabled_datacenters",
                set(format!("[{}]", dcs.join(", "))),
            ),
            (
                "max_hint_window",
                set(format_duration(self.max_hint_window)),
            ),
            (
                "hint_window_persistent_enabled",
                set(self.hint_window_persistent_enabled),
            ),
            (
                "max_hints_delivery_threads",
                set(self.max_hints_delivery_threads),
            ),
            ("hinted_handoff_throttle", set(self.hinted_handoff_throttle)),
            (
                "batchlog_replay_throttle",
                set(self.batchlog_replay_throttle),
            ),
            ("max_hints_file_size", set(self.max_hints_file_size)),
            ("max_hints_size_per_host", set(self.max_hints_size_per_host)),
            (
                "hints_flush_period",
                set(format_duration(self.hints_flush_period)),
            ),
            ("hints_compression", self.hints_compression.clone()),
        ]
    }
}

fn sync_name(sync: CommitLogSync) -> &'static str {
    match sync {
        CommitLogSync::Periodic => "periodic",
        CommitLogSync::Batch => "batch",
        CommitLogSync::Group => "group",
    }
}

fn allocation_name(kind: MemtableAllocationType) -> &'static str {
    match kind {
        MemtableAllocationType::UnslabbedHeapBuffers => "unslabbed_heap_buffers",
        MemtableAllocationType::UnslabbedHeapBuffersLogged => "unslabbed_heap_buffers_logged",
        MemtableAllocationType::HeapBuffers => "heap_buffers",
        MemtableAllocationType::OffheapBuffers => "offheap_buffers",
        MemtableAllocationType::OffheapObjects => "offheap_objects",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(config: &Config, key: &str) -> Option<String> {
        let found = config.settings().into_iter().find(|(k, _)| *k == key);
        found.and_then(|(_, v)| v)
    }

    #[test]
    fn values_print_in_cassandra_syntax() {
        let config = Config::default();
        assert_eq!(
            value(&config, "write_request_timeout").as_deref(),
            Some("2s")
        );
        assert_eq!(
            value(&config, "compaction_throughput").as_deref(),
            Some("64MiB/s")
        );
        assert_eq!(
            value(&config, "native_transport_max_frame_size").as_deref(),
            Some("16MiB")
        );
        assert_eq!(
            value(&config, "commitlog_sync").as_deref(),
            Some("periodic")
        );
        assert_eq!(
            value(&config, "memtable_allocation_type").as_deref(),
            Some("heap_buffers")
        );
        assert_eq!(value(&config, "seed_provider.seeds").as_deref(), Some(""));
        assert_eq!(
            value(&config, "data_file_directories").as_deref(),
            Some("[./data/data]")
        );
        assert_eq!(value(&config, "memtable_heap_space"), None);
        assert_eq!(value(&config, "initial_token"), None);
    }

    #[test]
    fn every_name_appears_once() {
        let settings = Config::default().settings();
        let mut names: Vec<&str> = settings.iter().map(|(k, _)| *k).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), settings.len());
    }
}
