//! Which cassandra.yaml keys Helenus uses, and how each one sets a [`Config`] field.
//! Keys not handled here are Cassandra settings Helenus ignores.

use std::time::Duration;

use crate::config::{CommitLogSync, Config, InternodeCompression, MemtableAllocationType, Seed};
use crate::error::ConfigError;
use crate::policies::{CommitFailurePolicy, DiskFailurePolicy};
use crate::refused;
use crate::snitch::Snitch;
use crate::spec::SizeUnit::{Bytes, Kibibytes, Mebibytes};
use crate::values::{resolve, Value};
use crate::yaml::Node;

/// Keys only Helenus knows (Cassandra would refuse them).
/// `metadata_directory` is the key of Cassandra's cluster metadata service (CEP-21), which
/// 5.0 does not have.
pub const HELENUS_KEYS: &[&str] = &[
    "admin_address",
    "admin_port",
    "admin_auth_token_file",
    "metadata_directory",
    "replace_address_first_boot",
    "ring_delay_ms",
    "consistent_rangemovement",
    "auto_repair",
];

/// Sets the field for `value.key`; `Ok(false)` when Helenus does not use that key.
pub fn apply(config: &mut Config, value: Value) -> Result<bool, ConfigError> {
    Ok(apply_node(config, value)?
        || apply_network(config, value)?
        || apply_native(config, value)?
        || apply_storage(config, value)?
        || apply_requests(config, value)?
        || config.guardrails.apply(value)?
        || apply_hints(config, value)?
        || refused::check(value)?)
}

fn apply_node(c: &mut Config, v: Value) -> Result<bool, ConfigError> {
    match v.key {
        "cluster_name" => c.cluster_name = v.string()?,
        "num_tokens" => c.num_tokens = v.integer()?,
        "initial_token" => c.initial_token = tokens(v)?,
        "endpoint_snitch" => c.endpoint_snitch = snitch(v)?,
        "seed_provider" => c.seeds = seeds(v)?,
        "auto_snapshot" => c.auto_snapshot = v.boolean()?,
        "auto_bootstrap" => c.auto_bootstrap = v.boolean()?,
        "replace_address_first_boot" => c.replace_address_first_boot = Some(v.address()?),
        "ring_delay_ms" => c.ring_delay = Duration::from_millis(v.integer()?),
        "consistent_rangemovement" => c.consistent_rangemovement = v.boolean()?,
        "allocate_tokens_for_local_replication_factor" => {
            c.allocate_tokens_for_local_replication_factor = Some(v.integer()?)
        }
        "phi_convict_threshold" => c.phi_convict_threshold = v.float()?,
        "internode_compression" => c.internode_compression = internode_compression(v)?,
        "auto_repair" => c.auto_repair.apply(v)?,
        "repair_session_space" => c.repair_session_space = Some(v.size(Mebibytes)?),
        _ => return Ok(false),
    }
    Ok(true)
}

fn apply_network(c: &mut Config, v: Value) -> Result<bool, ConfigError> {
    match v.key {
        "listen_address" => c.listen_address = v.address()?,
        "broadcast_address" => c.broadcast_address = Some(v.address()?),
        "rpc_address" => c.rpc_address = v.address()?,
        "broadcast_rpc_address" => c.broadcast_rpc_address = Some(v.address()?),
        "storage_port" => c.storage_port = v.integer()?,
        "native_transport_port" => c.native_transport_port = v.integer()?,
        "max_value_size" => c.max_value_size = v.size(Mebibytes)?,
        "admin_address" => c.admin_address = v.address()?,
        "admin_port" => c.admin_port = v.integer()?,
        "admin_auth_token_file" => c.admin_auth_token_file = Some(v.path()?),
        _ => return Ok(false),
    }
    Ok(true)
}

/// The native transport's sizes and limits.
fn apply_native(c: &mut Config, v: Value) -> Result<bool, ConfigError> {
    match v.key {
        "native_transport_max_threads" => c.native_transport_max_threads = v.integer()?,
        "native_transport_max_frame_size" => {
            c.native_transport_max_frame_size = v.size(Mebibytes)?
        }
        "native_transport_max_request_data_in_flight" => {
            c.native_transport_max_request_data_in_flight = Some(v.size(Bytes)?)
        }
        "native_transport_max_request_data_in_flight_per_ip" => {
            c.native_transport_max_request_data_in_flight_per_ip = Some(v.size(Bytes)?)
        }
        "native_transport_throw_on_overload" => {
            c.native_transport_throw_on_overload = v.boolean()?
        }
        "native_transport_rate_limiting_enabled" => {
            c.native_transport_rate_limiting_enabled = v.boolean()?
        }
        "native_transport_max_requests_per_second" => {
            c.native_transport_max_requests_per_second = v.integer()?
        }
        "native_transport_idle_timeout" => c.native_transport_idle_timeout = v.millis()?,
        "native_transport_max_concurrent_connections" => {
            c.native_transport_max_concurrent_connections = v.integer()?
        }
        "native_transport_max_concurrent_connections_per_ip" => {
            c.native_transport_max_concurrent_connections_per_ip = v.integer()?
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn apply_storage(c: &mut Config, v: Value) -> Result<bool, ConfigError> {
    match v.key {
        "data_file_directories" => c.data_file_directories = v.paths()?,
        "commitlog_directory" => c.commitlog_directory = v.path()?,
        "saved_caches_directory" => c.saved_caches_directory = v.path()?,
        "hints_directory" => c.hints_directory = v.path()?,
        "metadata_directory" => c.metadata_directory = v.path()?,
        "commitlog_sync" => c.commitlog_sync = commitlog_sync(v)?,
        "commitlog_sync_period" => c.commitlog_sync_period = v.millis()?,
        "commitlog_sync_group_window" => c.commitlog_sync_group_window = v.millis()?,
        "commitlog_segment_size" => c.commitlog_segment_size = v.size(Mebibytes)?,
        "commitlog_total_space" => c.commitlog_total_space = Some(v.size(Mebibytes)?),
        "max_mutation_size" => c.max_mutation_size = Some(v.size(Kibibytes)?),
        "concurrent_compactors" => c.concurrent_compactors = Some(v.integer()?),
        "compaction_throughput" => c.compaction_throughput = v.rate()?,
        "stream_throughput_outbound" => c.stream_throughput_outbound = v.rate()?,
        "entire_sstable_stream_throughput_outbound" => {
            c.entire_sstable_stream_throughput_outbound = v.rate()?
        }
        "memtable_heap_space" => c.memtable_heap_space = Some(v.size(Mebibytes)?),
        "memtable_offheap_space" => c.memtable_offheap_space = Some(v.size(Mebibytes)?),
        "memtable_allocation_type" => c.memtable_allocation_type = allocation_type(v)?,
        "memtable_flush_writers" => c.memtable_flush_writers = Some(v.integer()?),
        "memtable_cleanup_threshold" => c.memtable_cleanup_threshold = Some(v.float()?),
        "column_index_size" => c.column_index_size = Some(v.size(Kibibytes)?),
        "key_cache_size" => c.key_cache_size = Some(v.size(Mebibytes)?),
        "file_cache_size" => c.file_cache_size = Some(v.size(Mebibytes)?),
        "file_cache_enabled" => c.file_cache_enabled = v.boolean()?,
        "disk_failure_policy" => c.disk_failure_policy = DiskFailurePolicy::parse(v)?,
        "commit_failure_policy" => c.commit_failure_policy = CommitFailurePolicy::parse(v)?,
        "prepared_statements_cache_size" => {
            c.prepared_statements_cache_size = Some(v.size(Mebibytes)?)
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn apply_requests(c: &mut Config, v: Value) -> Result<bool, ConfigError> {
    match v.key {
        "concurrent_reads" => c.concurrent_reads = v.integer()?,
        "concurrent_writes" => c.concurrent_writes = v.integer()?,
        "concurrent_counter_writes" => c.concurrent_counter_writes = v.integer()?,
        "request_timeout" => c.request_timeout = v.millis()?,
        "read_request_timeout" => c.read_request_timeout = v.millis()?,
        "range_request_timeout" => c.range_request_timeout = v.millis()?,
        "write_request_timeout" => c.write_request_timeout = v.millis()?,
        "counter_write_request_timeout" => c.counter_write_request_timeout = v.millis()?,
        "cas_contention_timeout" => c.cas_contention_timeout = v.millis()?,
        "paxos_purge_grace_period" => c.paxos_purge_grace_period = v.millis()?,
        "truncate_request_timeout" => c.truncate_request_timeout = v.millis()?,
        "slow_query_log_timeout" => c.slow_query_log_timeout = v.millis()?,
        "tombstone_warn_threshold" => c.tombstone_warn_threshold = v.integer()?,
        "tombstone_failure_threshold" => c.tombstone_failure_threshold = v.integer()?,
        "batch_size_warn_threshold" => c.batch_size_warn_threshold = v.size(Kibibytes)?,
        "batch_size_fail_threshold" => c.batch_size_fail_threshold = v.size(Kibibytes)?,
        "unlogged_batch_across_partitions_warn_threshold" => {
            c.unlogged_batch_across_partitions_warn_threshold = v.integer()?
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn apply_hints(c: &mut Config, v: Value) -> Result<bool, ConfigError> {
    match v.key {
        "hinted_handoff_enabled" => c.hinted_handoff_enabled = v.boolean()?,
        "hinted_handoff_disabled_datacenters" => c.hinted_handoff_disabled_datacenters = names(v)?,
        "max_hint_window" => c.max_hint_window = v.millis()?,
        "hint_window_persistent_enabled" => c.hint_window_persistent_enabled = v.boolean()?,
        "max_hints_delivery_threads" => c.max_hints_delivery_threads = v.integer()?,
        "hinted_handoff_throttle" => c.hinted_handoff_throttle = v.size(Kibibytes)?,
        "batchlog_replay_throttle" => c.batchlog_replay_throttle = v.size(Kibibytes)?,
        "max_hints_file_size" => c.max_hints_file_size = v.size(Mebibytes)?,
        "max_hints_size_per_host" => c.max_hints_size_per_host = v.size(Bytes)?,
        "hints_flush_period" => c.hints_flush_period = v.millis()?,
        "hints_compression" => c.hints_compression = hints_compression(v)?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// A list of names (YAML sequence, or one name).
fn names(v: Value) -> Result<Vec<String>, ConfigError> {
    match v.node {
        Node::Seq(items) => items
            .iter()
            .map(|node| Value { key: v.key, node }.text())
            .collect(),
        _ => Ok(vec![v.text()?]),
    }
}

/// `hints_compression: [{class_name: LZ4Compressor, parameters: ...}]`; only LZ4 is supported.
fn hints_compression(v: Value) -> Result<Option<String>, ConfigError> {
    let name = v.class_name()?;
    if name == "LZ4Compressor" {
        Ok(Some(name))
    } else {
        Err(v.invalid("Helenus compresses hints only with LZ4Compressor"))
    }
}

fn snitch(v: Value) -> Result<Snitch, ConfigError> {
    let name = v.text()?;
    Snitch::parse(&name).ok_or_else(|| {
        v.invalid("Helenus supports only SimpleSnitch and GossipingPropertyFileSnitch")
    })
}

fn internode_compression(v: Value) -> Result<InternodeCompression, ConfigError> {
    match v.text()?.as_str() {
        "all" => Ok(InternodeCompression::All),
        "dc" => Ok(InternodeCompression::Dc),
        "none" => Ok(InternodeCompression::None),
        _ => Err(v.invalid("expected all, dc or none")),
    }
}

fn commitlog_sync(v: Value) -> Result<CommitLogSync, ConfigError> {
    match v.text()?.as_str() {
        "periodic" => Ok(CommitLogSync::Periodic),
        "batch" => Ok(CommitLogSync::Batch),
        "group" => Ok(CommitLogSync::Group),
        _ => Err(v.invalid("expected periodic, batch or group")),
    }
}

fn allocation_type(v: Value) -> Result<MemtableAllocationType, ConfigError> {
    use MemtableAllocationType::*;
    match v.text()?.as_str() {
        "unslabbed_heap_buffers" => Ok(UnslabbedHeapBuffers),
        "unslabbed_heap_buffers_logged" => Ok(UnslabbedHeapBuffersLogged),
        "heap_buffers" => Ok(HeapBuffers),
        "offheap_buffers" => Ok(OffheapBuffers),
        "offheap_objects" => Ok(OffheapObjects),
        _ => Err(v.invalid(
            "expected unslabbed_heap_buffers, unslabbed_heap_buffers_logged, heap_buffers, offheap_buffers or offheap_objects",
        )),
    }
}

/// `initial_token: -9223372036854775808,0` (Murmur3 tokens).
fn tokens(v: Value) -> Result<Vec<i64>, ConfigError> {
    v.text()?
        .split(',')
        .map(|t| t.trim().parse::<i64>())
        .collect::<Result<_, _>>()
        .map_err(|_| v.invalid("expected comma-separated Murmur3 tokens (64-bit integers)"))
}

/// The `seeds` parameter of a seed provider: `"host[:port], ..."`.
fn seeds(v: Value) -> Result<Vec<Seed>, ConfigError> {
    let provider = match v.node {
        Node::Seq(items) if items.len() == 1 => &items[0],
        node => node,
    };
    let parameters = match provider.get("parameters") {
        Some(Node::Seq(items)) if items.len() == 1 => &items[0],
        Some(node) => node,
        None => return Err(v.invalid("expected parameters with seeds")),
    };
    let list = parameters
        .get("seeds")
        .and_then(Node::scalar_text)
        .ok_or_else(|| v.invalid("expected a seeds parameter"))?;
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| seed(s).ok_or_else(|| v.invalid(format!("cannot understand seed '{s}'"))))
        .collect()
}

fn seed(text: &str) -> Option<Seed> {
    if let Ok(socket) = text.parse::<std::net::SocketAddr>() {
        return Some(Seed {
            address: socket.ip(),
            port: Some(socket.port()),
        });
    }
    if let Some(address) = resolve(text) {
        return Some(Seed {
            address,
            port: None,
        });
    }
    let (host, port) = text.rsplit_once(':')?;
    Some(Seed {
        address: resolve(host)?,
        port: Some(port.parse().ok()?),
    })
}
