//! The virtual tables of Cassandra 5.0.4's `system_views` and `system_virtual_schema` that
//! Helenus serves, as data: name, comment and columns exactly as
//! `system_virtual_schema.tables` and `.columns` report them. They are never stored and never
//! appear in `system_schema`.
use super::defs::{Kind, TableDef};
use crate::column::ClusteringOrder::Asc;
use Kind::{C, P, R};

/// Columns shared by the six latency tables (`local_*_latency`, `coordinator_*_latency`).
const LATENCY: &[(&str, &str, Kind)] = &[
    ("keyspace_name", "text", P(0)),
    ("table_name", "text", P(1)),
    ("count", "bigint", R),
    ("max_ms", "double", R),
    ("p50th_ms", "double", R),
    ("p99th_ms", "double", R),
    ("per_second", "double", R),
];

/// Columns of the per-read histograms (`rows_per_read`, `tombstones_per_read`).
const PER_READ: &[(&str, &str, Kind)] = &[
    ("keyspace_name", "text", P(0)),
    ("table_name", "text", P(1)),
    ("count", "bigint", R),
    ("max", "double", R),
    ("p50th", "double", R),
    ("p99th", "double", R),
];

/// Columns of the per-table sizes (`disk_usage`, `max_partition_size`).
const MEBIBYTES: &[(&str, &str, Kind)] = &[
    ("keyspace_name", "text", P(0)),
    ("table_name", "text", P(1)),
    ("mebibytes", "bigint", R),
];

const fn def(
    name: &'static str,
    comment: &'static str,
    columns: &'static [(&'static str, &'static str, Kind)],
) -> TableDef {
    TableDef {
        name,
        comment,
        default_time_to_live: 0,
        compaction: None,
        columns,
    }
}

/// The tables of `system_views` Helenus fills.
pub(super) const SYSTEM_VIEWS: &[TableDef] = &[
    def(
        "caches",
        "system caches",
        &[
            ("name", "text", P(0)),
            ("capacity_bytes", "bigint", R),
            ("entry_count", "int", R),
            ("hit_count", "bigint", R),
            ("hit_ratio", "double", R),
            ("recent_hit_rate_per_second", "bigint", R),
            ("recent_request_rate_per_second", "bigint", R),
            ("request_count", "bigint", R),
            ("size_bytes", "bigint", R),
        ],
    ),
    def(
        "clients",
        "currently connected clients",
        &[
            ("address", "inet", P(0)),
            ("port", "int", C(0, Asc)),
            ("client_options", "frozen<map<text, text>>", R),
            ("connection_stage", "text", R),
            ("driver_name", "text", R),
            ("driver_version", "text", R),
            ("hostname", "text", R),
            ("keyspace_name", "text", R),
            ("protocol_version", "int", R),
            ("request_count", "bigint", R),
            ("ssl_cipher_suite", "text", R),
            ("ssl_enabled", "boolean", R),
            ("ssl_protocol", "text", R),
            ("username", "text", R),
        ],
    ),
    def("coordinator_read_latency", "", LATENCY),
    def("coordinator_scan_latency", "", LATENCY),
    def("coordinator_write_latency", "", LATENCY),
    def("disk_usage", "", MEBIBYTES),
    def("local_read_latency", "", LATENCY),
    def("local_scan_latency", "", LATENCY),
    def("local_write_latency", "", LATENCY),
    def("max_partition_size", "", MEBIBYTES),
    def(
        "repairs",
        "Repair summary",
        &[
            ("id", "timeuuid", P(0)),
            ("command_id", "int", R),
            ("completed", "boolean", R),
            ("duration_millis", "bigint", R),
            ("failure_cause", "text", R),
            ("keyspace_name", "text", R),
            ("last_updated_at", "timestamp", R),
            ("options_column_families", "frozen<set<text>>", R),
            ("options_data_centers", "frozen<set<text>>", R),
            ("options_force_repair", "boolean", R),
            ("options_hosts", "frozen<set<text>>", R),
            ("options_ignore_unreplicated_keyspaces", "boolean", R),
            ("options_incremental", "boolean", R),
            ("options_job_threads", "int", R),
            ("options_optimise_streams", "boolean", R),
            ("options_parallelism", "text", R),
            ("options_preview_kind", "text", R),
            ("options_primary_range", "boolean", R),
            ("options_pull_repair", "boolean", R),
            ("options_ranges", "frozen<set<text>>", R),
            ("options_subrange_repair", "boolean", R),
            ("options_trace", "boolean", R),
            ("participants", "frozen<list<text>>", R),
            ("ranges", "frozen<list<frozen<list<text>>>>", R),
            ("sessions", "frozen<set<timeuuid>>", R),
            ("state_failure_timestamp", "timestamp", R),
            ("state_init_timestamp", "timestamp", R),
            ("state_prepare_complete_timestamp", "timestamp", R),
            ("state_prepare_start_timestamp", "timestamp", R),
            ("state_repair_complete_timestamp", "timestamp", R),
            ("state_repair_start_timestamp", "timestamp", R),
            ("state_setup_timestamp", "timestamp", R),
            ("state_skipped_timestamp", "timestamp", R),
            ("state_start_timestamp", "timestamp", R),
            ("state_success_timestamp", "timestamp", R),
            ("status", "text", R),
            ("success_message", "text", R),
            ("table_names", "frozen<list<text>>", R),
            ("type", "text", R),
            ("unfiltered_ranges", "frozen<list<frozen<list<text>>>>", R),
        ],
    ),
    def("rows_per_read", "", PER_READ),
    def(
        "settings",
        "current settings",
        &[("name", "text", P(0)), ("value", "text", R)],
    ),
    def(
        "sstable_tasks",
        "current sstable tasks",
        &[
            ("keyspace_name", "text", P(0)),
            ("table_name", "text", C(0, Asc)),
            ("task_id", "timeuuid", C(1, Asc)),
            ("completion_ratio", "double", R),
            ("kind", "text", R),
            ("progress", "bigint", R),
            ("sstables", "int", R),
            ("target_directory", "text", R),
            ("total", "bigint", R),
            ("unit", "text", R),
        ],
    ),
    def(
        "streaming",
        "",
        &[
            ("id", "timeuuid", P(0)),
            ("bytes_received", "bigint", R),
            ("bytes_sent", "bigint", R),
            ("bytes_to_receive", "bigint", R),
            ("bytes_to_send", "bigint", R),
            ("duration_millis", "bigint", R),
            ("failure_cause", "text", R),
            ("files_received", "bigint", R),
            ("files_sent", "bigint", R),
            ("files_to_receive", "bigint", R),
            ("files_to_send", "bigint", R),
            ("follower", "boolean", R),
            ("last_updated_at", "timestamp", R),
            ("operation", "text", R),
            ("peers", "frozen<list<text>>", R),
            ("progress_percentage", "float", R),
            ("status", "text", R),
            ("status_failure_timestamp", "timestamp", R),
            ("status_init_timestamp", "timestamp", R),
            ("status_start_timestamp", "timestamp", R),
            ("status_success_timestamp", "timestamp", R),
            ("success_message", "text", R),
        ],
    ),
    def(
        "thread_pools",
        "",
        &[
            ("name", "text", P(0)),
            ("active_tasks", "int", R),
            ("active_tasks_limit", "int", R),
            ("blocked_tasks", "bigint", R),
            ("blocked_tasks_all_time", "bigint", R),
            ("completed_tasks", "bigint", R),
            ("pending_tasks", "int", R),
        ],
    ),
    def("tombstones_per_read", "", PER_READ),
];

/// The tables of `system_virtual_schema`.
pub(super) const SYSTEM_VIRTUAL_SCHEMA: &[TableDef] = &[
    def(
        "columns",
        "virtual column definitions",
        &[
            ("keyspace_name", "text", P(0)),
            ("table_name", "text", C(0, Asc)),
            ("column_name", "text", C(1, Asc)),
            ("clustering_order", "text", R),
            ("column_name_bytes", "blob", R),
            ("kind", "text", R),
            ("position", "int", R),
            ("type", "text", R),
        ],
    ),
    def(
        "keyspaces",
        "virtual keyspace definitions",
        &[("keyspace_name", "text", P(0))],
    ),
    def(
        "tables",
        "virtual table definitions",
        &[
            ("keyspace_name", "text", P(0)),
            ("table_name", "text", C(0, Asc)),
            ("comment", "text", R),
        ],
    ),
];
