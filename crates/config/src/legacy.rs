//! Cassandra's pre-4.1 key names (`write_request_timeout_in_ms: 2000`, `commitlog_segment_size_in_mb`,
//! `compaction_throughput_mb_per_sec`, ...): each is renamed to its 5.0 key and its bare number
//! turned into 5.0 syntax, as Cassandra's `Converters` do. Setting an old and a new name of the
//! same parameter is an error, as in Cassandra.

use crate::error::ConfigError;
use crate::yaml::Node;

/// How an old key's value becomes a new key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Convert {
    /// Same value, new name only.
    Same,
    /// Whole milliseconds.
    Millis,
    /// Milliseconds as a float, rounded; `NaN` means 0.
    MillisFloat,
    /// Milliseconds, `-1` meaning unset.
    MillisOrUnset,
    Seconds,
    /// Seconds, negatives meaning 0.
    SecondsOrZero,
    /// Minutes, `-1` meaning unset.
    MinutesOrUnset,
    Bytes,
    /// Bytes, `-1` meaning unset.
    BytesOrUnset,
    Kibibytes,
    Mebibytes,
    /// Mebibytes, negatives meaning unset.
    MebibytesOrUnset,
    MebibytesPerSecond,
    /// Megabits per second, turned into bytes per second.
    MegabitsPerSecond,
    /// A count that included Cassandra's system keyspaces or tables, which the new key leaves out.
    WithoutSystem(i128),
}

/// One old key and the 5.0 key that replaced it.
struct Rename {
    old: &'static str,
    new: &'static str,
    convert: Convert,
}

impl Rename {
    const fn new(old: &'static str, new: &'static str, convert: Convert) -> Self {
        Rename { old, new, convert }
    }
}

/// Cassandra 5.0's local and replicated system keyspaces (system, system_schema, system_auth,
/// system_distributed, system_traces) and their tables, which the old count thresholds counted
/// (its `KEYSPACE_COUNT_THRESHOLD_TO_GUARDRAIL` and `TABLE_COUNT_THRESHOLD_TO_GUARDRAIL`).
const SYSTEM_KEYSPACES: i128 = 5;
const SYSTEM_TABLES: i128 = 48;

/// Every rename Cassandra 5.0 still honours (its `@Replaces` annotations), sorted by old name.
#[rustfmt::skip]
const RENAMES: &[Rename] = &[
    Rename::new(
        "batch_size_fail_threshold_in_kb",
        "batch_size_fail_threshold",
        Convert::Kibibytes,
    ),
    Rename::new(
        "batch_size_warn_threshold_in_kb",
        "batch_size_warn_threshold",
        Convert::Kibibytes,
    ),
    Rename::new(
        "batchlog_replay_throttle_in_kb",
        "batchlog_replay_throttle",
        Convert::Kibibytes,
    ),
    Rename::new(
        "cache_load_timeout_seconds",
        "cache_load_timeout",
        Convert::SecondsOrZero,
    ),
    Rename::new(
        "cas_contention_timeout_in_ms",
        "cas_contention_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "cdc_free_space_check_interval_ms",
        "cdc_free_space_check_interval",
        Convert::Millis,
    ),
    Rename::new(
        "cdc_total_space_in_mb",
        "cdc_total_space",
        Convert::Mebibytes,
    ),
    Rename::new(
        "column_index_cache_size_in_kb",
        "column_index_cache_size",
        Convert::Kibibytes,
    ),
    Rename::new(
        "column_index_size_in_kb",
        "column_index_size",
        Convert::Kibibytes,
    ),
    Rename::new(
        "commitlog_segment_size_in_mb",
        "commitlog_segment_size",
        Convert::Mebibytes,
    ),
    Rename::new(
        "commitlog_sync_group_window_in_ms",
        "commitlog_sync_group_window",
        Convert::MillisFloat,
    ),
    Rename::new(
        "commitlog_sync_period_in_ms",
        "commitlog_sync_period",
        Convert::Millis,
    ),
    Rename::new(
        "commitlog_total_space_in_mb",
        "commitlog_total_space",
        Convert::Mebibytes,
    ),
    Rename::new(
        "compaction_large_partition_warning_threshold",
        "partition_size_warn_threshold",
        Convert::Same,
    ),
    Rename::new(
        "compaction_large_partition_warning_threshold_mb",
        "partition_size_warn_threshold",
        Convert::Mebibytes,
    ),
    Rename::new(
        "compaction_throughput_mb_per_sec",
        "compaction_throughput",
        Convert::MebibytesPerSecond,
    ),
    Rename::new(
        "compaction_tombstone_warning_threshold",
        "partition_tombstones_warn_threshold",
        Convert::Same,
    ),
    Rename::new(
        "counter_cache_size_in_mb",
        "counter_cache_size",
        Convert::Mebibytes,
    ),
    Rename::new(
        "counter_write_request_timeout_in_ms",
        "counter_write_request_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "credentials_update_interval_in_ms",
        "credentials_update_interval",
        Convert::MillisOrUnset,
    ),
    Rename::new(
        "credentials_validity_in_ms",
        "credentials_validity",
        Convert::Millis,
    ),
    Rename::new("cross_node_timeout", "internode_timeout", Convert::Same),
    Rename::new(
        "dynamic_snitch_reset_interval_in_ms",
        "dynamic_snitch_reset_interval",
        Convert::Millis,
    ),
    Rename::new(
        "dynamic_snitch_update_interval_in_ms",
        "dynamic_snitch_update_interval",
        Convert::Millis,
    ),
    Rename::new(
        "enable_drop_compact_storage",
        "drop_compact_storage_enabled",
        Convert::Same,
    ),
    Rename::new(
        "enable_materialized_views",
        "materialized_views_enabled",
        Convert::Same,
    ),
    Rename::new("enable_sasi_indexes", "sasi_indexes_enabled", Convert::Same),
    Rename::new(
        "enable_scripted_user_defined_functions",
        "scripted_user_defined_functions_enabled",
        Convert::Same,
    ),
    Rename::new(
        "enable_transient_replication",
        "transient_replication_enabled",
        Convert::Same,
    ),
    Rename::new(
        "enable_user_defined_functions",
        "user_defined_functions_enabled",
        Convert::Same,
    ),
    Rename::new(
        "enable_user_defined_functions_threads",
        "user_defined_functions_threads_enabled",
        Convert::Same,
    ),
    Rename::new(
        "file_cache_size_in_mb",
        "file_cache_size",
        Convert::Mebibytes,
    ),
    Rename::new(
        "gc_log_threshold_in_ms",
        "gc_log_threshold",
        Convert::Millis,
    ),
    Rename::new(
        "gc_warn_threshold_in_ms",
        "gc_warn_threshold",
        Convert::Millis,
    ),
    Rename::new(
        "hinted_handoff_throttle_in_kb",
        "hinted_handoff_throttle",
        Convert::Kibibytes,
    ),
    Rename::new(
        "hints_flush_period_in_ms",
        "hints_flush_period",
        Convert::Millis,
    ),
    Rename::new(
        "index_summary_capacity_in_mb",
        "index_summary_capacity",
        Convert::Mebibytes,
    ),
    Rename::new(
        "index_summary_resize_interval_in_minutes",
        "index_summary_resize_interval",
        Convert::MinutesOrUnset,
    ),
    Rename::new(
        "inter_dc_stream_throughput_outbound_megabits_per_sec",
        "inter_dc_stream_throughput_outbound",
        Convert::MegabitsPerSecond,
    ),
    Rename::new(
        "internode_application_receive_queue_capacity_in_bytes",
        "internode_application_receive_queue_capacity",
        Convert::Bytes,
    ),
    Rename::new(
        "internode_application_receive_queue_reserve_endpoint_capacity_in_bytes",
        "internode_application_receive_queue_reserve_endpoint_capacity",
        Convert::Bytes,
    ),
    Rename::new(
        "internode_application_receive_queue_reserve_global_capacity_in_bytes",
        "internode_application_receive_queue_reserve_global_capacity",
        Convert::Bytes,
    ),
    Rename::new(
        "internode_application_send_queue_capacity_in_bytes",
        "internode_application_send_queue_capacity",
        Convert::Bytes,
    ),
    Rename::new(
        "internode_application_send_queue_reserve_endpoint_capacity_in_bytes",
        "internode_application_send_queue_reserve_endpoint_capacity",
        Convert::Bytes,
    ),
    Rename::new(
        "internode_application_send_queue_reserve_global_capacity_in_bytes",
        "internode_application_send_queue_reserve_global_capacity",
        Convert::Bytes,
    ),
    Rename::new(
        "internode_max_message_size_in_bytes",
        "internode_max_message_size",
        Convert::Bytes,
    ),
    Rename::new(
        "internode_recv_buff_size_in_bytes",
        "internode_socket_receive_buffer_size",
        Convert::Bytes,
    ),
    Rename::new(
        "internode_send_buff_size_in_bytes",
        "internode_socket_send_buffer_size",
        Convert::Bytes,
    ),
    Rename::new(
        "internode_socket_receive_buffer_size_in_bytes",
        "internode_socket_receive_buffer_size",
        Convert::Bytes,
    ),
    Rename::new(
        "internode_socket_send_buffer_size_in_bytes",
        "internode_socket_send_buffer_size",
        Convert::Bytes,
    ),
    Rename::new(
        "internode_streaming_tcp_user_timeout_in_ms",
        "internode_streaming_tcp_user_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "internode_tcp_connect_timeout_in_ms",
        "internode_tcp_connect_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "internode_tcp_user_timeout_in_ms",
        "internode_tcp_user_timeout",
        Convert::Millis,
    ),
    Rename::new("key_cache_size_in_mb", "key_cache_size", Convert::Mebibytes),
    Rename::new(
        "keyspace_count_warn_threshold",
        "keyspaces_warn_threshold",
        Convert::WithoutSystem(SYSTEM_KEYSPACES),
    ),
    Rename::new("max_hint_window_in_ms", "max_hint_window", Convert::Millis),
    Rename::new(
        "max_hints_file_size_in_mb",
        "max_hints_file_size",
        Convert::Mebibytes,
    ),
    Rename::new(
        "max_mutation_size_in_kb",
        "max_mutation_size",
        Convert::Kibibytes,
    ),
    Rename::new("max_value_size_in_mb", "max_value_size", Convert::Mebibytes),
    Rename::new(
        "memtable_heap_space_in_mb",
        "memtable_heap_space",
        Convert::Mebibytes,
    ),
    Rename::new(
        "memtable_offheap_space_in_mb",
        "memtable_offheap_space",
        Convert::Mebibytes,
    ),
    Rename::new(
        "min_free_space_per_drive_in_mb",
        "min_free_space_per_drive",
        Convert::Mebibytes,
    ),
    Rename::new(
        "native_transport_idle_timeout_in_ms",
        "native_transport_idle_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "native_transport_max_concurrent_requests_in_bytes",
        "native_transport_max_request_data_in_flight",
        Convert::BytesOrUnset,
    ),
    Rename::new(
        "native_transport_max_concurrent_requests_in_bytes_per_ip",
        "native_transport_max_request_data_in_flight_per_ip",
        Convert::BytesOrUnset,
    ),
    Rename::new(
        "native_transport_max_frame_size_in_mb",
        "native_transport_max_frame_size",
        Convert::Mebibytes,
    ),
    Rename::new(
        "native_transport_receive_queue_capacity_in_bytes",
        "native_transport_receive_queue_capacity",
        Convert::Bytes,
    ),
    Rename::new(
        "networking_cache_size_in_mb",
        "networking_cache_size",
        Convert::Mebibytes,
    ),
    Rename::new(
        "periodic_commitlog_sync_lag_block_in_ms",
        "periodic_commitlog_sync_lag_block",
        Convert::Millis,
    ),
    Rename::new(
        "permissions_update_interval_in_ms",
        "permissions_update_interval",
        Convert::MillisOrUnset,
    ),
    Rename::new(
        "permissions_validity_in_ms",
        "permissions_validity",
        Convert::Millis,
    ),
    Rename::new(
        "prepared_statements_cache_size_mb",
        "prepared_statements_cache_size",
        Convert::Mebibytes,
    ),
    Rename::new(
        "range_request_timeout_in_ms",
        "range_request_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "read_request_timeout_in_ms",
        "read_request_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "repair_request_timeout_in_ms",
        "repair_request_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "repair_session_space_in_mb",
        "repair_session_space",
        Convert::Mebibytes,
    ),
    Rename::new("request_timeout_in_ms", "request_timeout", Convert::Millis),
    Rename::new(
        "roles_update_interval_in_ms",
        "roles_update_interval",
        Convert::MillisOrUnset,
    ),
    Rename::new("roles_validity_in_ms", "roles_validity", Convert::Millis),
    Rename::new("row_cache_size_in_mb", "row_cache_size", Convert::Mebibytes),
    Rename::new(
        "slow_query_log_timeout_in_ms",
        "slow_query_log_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "sstable_preemptive_open_interval_in_mb",
        "sstable_preemptive_open_interval",
        Convert::MebibytesOrUnset,
    ),
    Rename::new(
        "stream_throughput_outbound_megabits_per_sec",
        "stream_throughput_outbound",
        Convert::MegabitsPerSecond,
    ),
    Rename::new(
        "streaming_keep_alive_period_in_secs",
        "streaming_keep_alive_period",
        Convert::Seconds,
    ),
    Rename::new(
        "table_count_warn_threshold",
        "tables_warn_threshold",
        Convert::WithoutSystem(SYSTEM_TABLES),
    ),
    Rename::new(
        "tracetype_query_ttl",
        "trace_type_query_ttl",
        Convert::Seconds,
    ),
    Rename::new(
        "tracetype_repair_ttl",
        "trace_type_repair_ttl",
        Convert::Seconds,
    ),
    Rename::new(
        "trickle_fsync_interval_in_kb",
        "trickle_fsync_interval",
        Convert::Kibibytes,
    ),
    Rename::new(
        "truncate_request_timeout_in_ms",
        "truncate_request_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "user_defined_function_fail_timeout",
        "user_defined_functions_fail_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "user_defined_function_warn_timeout",
        "user_defined_functions_warn_timeout",
        Convert::Millis,
    ),
    Rename::new(
        "validation_preview_purge_head_start_in_sec",
        "validation_preview_purge_head_start",
        Convert::SecondsOrZero,
    ),
    Rename::new(
        "write_request_timeout_in_ms",
        "write_request_timeout",
        Convert::Millis,
    ),
];

/// Whether `key` is an old name Cassandra 5.0 still accepts.
pub fn is_old_name(key: &str) -> bool {
    find(key).is_some()
}

fn find(key: &str) -> Option<&'static Rename> {
    RENAMES.iter().find(|r| r.old == key)
}

/// `old -> new` for every parameter set under two of its names; an error if there is any.
pub fn check_conflicts<'a>(keys: impl Iterator<Item = &'a str> + Clone) -> Result<(), ConfigError> {
    let conflicts: Vec<String> = keys
        .clone()
        .filter_map(find)
        .filter(|rename| {
            keys.clone()
                .any(|other| other != rename.old && new_name(other) == rename.new)
        })
        .map(|rename| format!("{} -> {}", rename.old, rename.new))
        .collect();
    if conflicts.is_empty() {
        Ok(())
    } else {
        Err(ConfigError::Conflicting(conflicts))
    }
}

/// The 5.0 name of `key` (itself when it is not an old name).
pub fn new_name(key: &str) -> &str {
    find(key).map_or(key, |rename| rename.new)
}

/// The 5.0 name and value for `key: value` (unchanged when `key` is not an old name).
pub fn modernize(key: &str, value: Node) -> Result<(&str, Node), ConfigError> {
    match find(key) {
        None => Ok((key, value)),
        Some(rename) => convert(rename.convert, &value)
            .map(|node| (rename.new, node))
            .map_err(|reason| ConfigError::invalid(key, &value, reason)),
    }
}

fn convert(how: Convert, value: &Node) -> Result<Node, String> {
    if how == Convert::Same || *value == Node::Null {
        return Ok(value.clone());
    }
    if how == Convert::MillisFloat {
        return millis_from_float(value);
    }
    let n = integer(value)?;
    if let Convert::WithoutSystem(system) = how {
        return Ok(Node::Int(n - system));
    }
    let unset = match how {
        Convert::MillisOrUnset | Convert::MinutesOrUnset | Convert::BytesOrUnset => n == -1,
        Convert::MebibytesOrUnset => n < 0,
        _ => false,
    };
    if unset {
        return Ok(Node::Null);
    }
    let n = if how == Convert::SecondsOrZero {
        n.max(0)
    } else {
        n
    };
    if n < 0 {
        return Err("must be non-negative".to_string());
    }
    Ok(Node::Str(with_unit(how, n)))
}

fn with_unit(how: Convert, n: i128) -> String {
    match how {
        Convert::Millis | Convert::MillisOrUnset | Convert::MillisFloat => format!("{n}ms"),
        Convert::Seconds | Convert::SecondsOrZero => format!("{n}s"),
        Convert::MinutesOrUnset => format!("{n}m"),
        Convert::Bytes | Convert::BytesOrUnset => format!("{n}B"),
        Convert::Kibibytes => format!("{n}KiB"),
        Convert::Mebibytes | Convert::MebibytesOrUnset => format!("{n}MiB"),
        Convert::MebibytesPerSecond => format!("{n}MiB/s"),
        Convert::MegabitsPerSecond => format!("{}B/s", n * 125_000),
        Convert::Same | Convert::WithoutSystem(_) => n.to_string(),
    }
}

fn integer(value: &Node) -> Result<i128, String> {
    match value {
        Node::Int(n) => Ok(*n),
        Node::Str(s) => s
            .trim()
            .parse()
            .map_err(|_| "expected a whole number".to_string()),
        _ => Err("expected a whole number".to_string()),
    }
}

fn millis_from_float(value: &Node) -> Result<Node, String> {
    let millis = match value {
        Node::Int(n) => *n as f64,
        Node::Float(f) => *f,
        Node::Str(s) => s
            .trim()
            .parse()
            .map_err(|_| "expected a number".to_string())?,
        _ => return Err("expected a number".to_string()),
    };
    if millis.is_nan() {
        return Ok(Node::Str("0ms".to_string()));
    }
    if !(0.0..=f64::from(i32::MAX)).contains(&millis) {
        return Err("must be between 0 and 2147483647".to_string());
    }
    Ok(Node::Str(format!("{}ms", millis.round() as i64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modern(key: &str, value: Node) -> (String, Node) {
        let (name, node) = modernize(key, value).unwrap();
        (name.to_string(), node)
    }

    fn text(s: &str) -> Node {
        Node::Str(s.to_string())
    }

    #[test]
    fn old_names_get_units() {
        assert_eq!(
            modern("write_request_timeout_in_ms", Node::Int(2000)),
            ("write_request_timeout".into(), text("2000ms"))
        );
        assert_eq!(
            modern("commitlog_segment_size_in_mb", Node::Int(32)),
            ("commitlog_segment_size".into(), text("32MiB"))
        );
        assert_eq!(
            modern("compaction_throughput_mb_per_sec", Node::Int(64)),
            ("compaction_throughput".into(), text("64MiB/s"))
        );
        assert_eq!(
            modern("batch_size_warn_threshold_in_kb", Node::Int(5)),
            ("batch_size_warn_threshold".into(), text("5KiB"))
        );
        assert_eq!(
            modern("stream_throughput_outbound_megabits_per_sec", Node::Int(8)),
            ("stream_throughput_outbound".into(), text("1000000B/s"))
        );
        assert_eq!(
            modern("enable_materialized_views", Node::Bool(true)),
            ("materialized_views_enabled".into(), Node::Bool(true))
        );
    }

    /// Cassandra 5.0.4 lists `keyspace_count_warn_threshold: 8` beside
    /// `keyspaces_warn_threshold: 3`, and `table_count_warn_threshold: 50` beside
    /// `tables_warn_threshold: 2` (refcass, `system_views.settings`).
    #[test]
    fn old_count_thresholds_leave_system_objects_out() {
        assert_eq!(
            modern("keyspace_count_warn_threshold", Node::Int(8)),
            ("keyspaces_warn_threshold".into(), Node::Int(3))
        );
        assert_eq!(
            modern("table_count_warn_threshold", Node::Int(50)),
            ("tables_warn_threshold".into(), Node::Int(2))
        );
        assert_eq!(
            modern(
                "compaction_large_partition_warning_threshold_mb",
                Node::Int(100)
            ),
            ("partition_size_warn_threshold".into(), text("100MiB"))
        );
        assert_eq!(
            modern("compaction_tombstone_warning_threshold", Node::Int(100000)),
            (
                "partition_tombstones_warn_threshold".into(),
                Node::Int(100000)
            )
        );
    }

    #[test]
    fn special_values() {
        assert_eq!(
            modern("commitlog_sync_group_window_in_ms", Node::Float(f64::NAN)).1,
            text("0ms")
        );
        assert_eq!(
            modern("commitlog_sync_group_window_in_ms", Node::Float(2.6)).1,
            text("3ms")
        );
        assert_eq!(
            modern("permissions_update_interval_in_ms", Node::Int(-1)).1,
            Node::Null
        );
        assert_eq!(
            modern("sstable_preemptive_open_interval_in_mb", Node::Int(-5)).1,
            Node::Null
        );
        assert_eq!(
            modern("cache_load_timeout_seconds", Node::Int(-3)).1,
            text("0s")
        );
        assert_eq!(
            modern("cluster_name", text("x")),
            ("cluster_name".into(), text("x"))
        );
    }

    #[test]
    fn bad_old_values_name_the_old_key() {
        let err = modernize("read_request_timeout_in_ms", text("5s")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid value '5s' for read_request_timeout_in_ms: expected a whole number"
        );
        assert!(modernize("read_request_timeout_in_ms", Node::Int(-1)).is_err());
    }

    #[test]
    fn both_names_conflict() {
        let keys = [
            "write_request_timeout_in_ms",
            "cluster_name",
            "write_request_timeout",
        ];
        let err = check_conflicts(keys.iter().copied()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Config contains both old and new keys for the same configuration parameters, \
             migrate old -> new: [write_request_timeout_in_ms -> write_request_timeout]"
        );
        let two_old = [
            "internode_send_buff_size_in_bytes",
            "internode_socket_send_buffer_size_in_bytes",
        ];
        assert!(check_conflicts(two_old.iter().copied()).is_err());
        assert!(check_conflicts(["write_request_timeout_in_ms"].iter().copied()).is_ok());
    }
}
