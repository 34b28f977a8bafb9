//! Tests of whole-file loading.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::*;
use crate::spec::{DataRate, DataSize};
use crate::MemtableAllocationType;

fn load_text(text: &str) -> Result<Loaded, ConfigError> {
    load_str(text, Path::new("/srv/helenus"))
}

fn config(text: &str) -> Config {
    match load_text(text) {
        Ok(loaded) => loaded.config,
        Err(err) => panic!("refused: {err}\n{text}"),
    }
}

fn error(text: &str) -> String {
    match load_text(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(err) => err.to_string(),
    }
}

#[test]
fn empty_file_gives_defaults_under_base() {
    let loaded = load_text("# nothing set\n").unwrap();
    assert!(loaded.ignored.is_empty());
    let expected = Config {
        data_file_directories: vec![PathBuf::from("/srv/helenus/data/data")],
        commitlog_directory: PathBuf::from("/srv/helenus/data/commitlog"),
        saved_caches_directory: PathBuf::from("/srv/helenus/data/saved_caches"),
        hints_directory: PathBuf::from("/srv/helenus/data/hints"),
        metadata_directory: PathBuf::from("/srv/helenus/data/metadata"),
        ..Config::default()
    };
    assert_eq!(loaded.config, expected);
}

#[test]
fn null_values_mean_default() {
    let c = config("cluster_name:\nwrite_request_timeout: ~\nconcurrent_reads: null\n");
    assert_eq!(c.cluster_name, "Test Cluster");
    assert_eq!(c.write_request_timeout, Duration::from_millis(2000));
    assert_eq!(c.concurrent_reads, 32);
}

#[test]
fn value_syntaxes() {
    let c = config(
        "read_request_timeout: 10s\nwrite_request_timeout: 2500ms\nrange_request_timeout: 1m\n\
         truncate_request_timeout: 5h\nrequest_timeout: 1d\n\
         native_transport_max_frame_size: 32MiB\nbatch_size_warn_threshold: 8KiB\n\
         commitlog_total_space: 1GiB\ncompaction_throughput: 16MiB/s\n",
    );
    assert_eq!(c.read_request_timeout, Duration::from_secs(10));
    assert_eq!(c.write_request_timeout, Duration::from_millis(2500));
    assert_eq!(c.range_request_timeout, Duration::from_secs(60));
    assert_eq!(c.truncate_request_timeout, Duration::from_secs(5 * 3600));
    assert_eq!(c.request_timeout, Duration::from_secs(86_400));
    assert_eq!(c.native_transport_max_frame_size, DataSize::mebibytes(32));
    assert_eq!(c.batch_size_warn_threshold, DataSize::kibibytes(8));
    assert_eq!(c.commitlog_total_space, Some(DataSize::mebibytes(1024)));
    assert_eq!(c.compaction_throughput, DataRate::mebibytes_per_second(16));
}

#[test]
fn old_names_are_converted() {
    let c = config(
        "write_request_timeout_in_ms: 3000\ncommitlog_segment_size_in_mb: 64\n\
         compaction_throughput_mb_per_sec: 0\nnative_transport_max_frame_size_in_mb: 8\n\
         commitlog_sync_period_in_ms: 5000\nbatch_size_fail_threshold_in_kb: 100\n\
         memtable_heap_space_in_mb: 2048\nstream_throughput_outbound_megabits_per_sec: 8\n",
    );
    assert_eq!(
        c.stream_throughput_outbound,
        DataRate::bytes_per_second(1_000_000)
    );
    assert_eq!(
        c.entire_sstable_stream_throughput_outbound,
        DataRate::mebibytes_per_second(24)
    );
    assert_eq!(c.write_request_timeout, Duration::from_millis(3000));
    assert_eq!(c.commitlog_segment_size, DataSize::mebibytes(64));
    assert_eq!(c.compaction_throughput, DataRate::bytes_per_second(0));
    assert_eq!(c.native_transport_max_frame_size, DataSize::mebibytes(8));
    assert_eq!(c.commitlog_sync_period, Duration::from_millis(5000));
    assert_eq!(c.batch_size_fail_threshold, DataSize::kibibytes(100));
    assert_eq!(c.memtable_heap_space, Some(DataSize::mebibytes(2048)));
}

#[test]
fn old_and_new_name_together_is_an_error() {
    let err = error("write_request_timeout_in_ms: 3000\nwrite_request_timeout: 3s\n");
    assert!(
        err.contains("[write_request_timeout_in_ms -> write_request_timeout]"),
        "{err}"
    );
}

#[test]
fn invalid_values_name_key_and_value() {
    assert_eq!(
        error("native_transport_max_frame_size: 16MB\n"),
        "Invalid value '16MB' for native_transport_max_frame_size: \
         accepted units are MiB, GiB (case matters)"
    );
    assert_eq!(
        error("write_request_timeout: 2000\n"),
        "Invalid value '2000' for write_request_timeout: \
         accepted units are ms, s, m, h, d"
    );
    assert_eq!(
        error("concurrent_writes: many\n"),
        "Invalid value 'many' for concurrent_writes: expected a whole number"
    );
    assert_eq!(
        error("native_transport_port: 70000\n"),
        "Invalid value '70000' for native_transport_port: number out of range"
    );
    assert!(error("commitlog_sync: sometimes\n")
        .starts_with("Invalid value 'sometimes' for commitlog_sync"));
    assert!(error("memtable_heap_space_in_mb: 512KiB\n")
        .starts_with("Invalid value '512KiB' for memtable_heap_space_in_mb"));
    assert!(error("listen_address: not a host.invalid\n").contains("listen_address"));
    assert!(error("initial_token: abc\n").contains("initial_token"));
}

#[test]
fn unknown_keys_are_refused_like_cassandra() {
    assert_eq!(
        error("cluster_name: x\nfoo: 1\nbar_in_ms: 2\n"),
        "Invalid yaml. Please remove properties [foo, bar_in_ms] from your cassandra.yaml"
    );
}

#[test]
fn unused_cassandra_keys_are_listed_as_ignored() {
    let loaded = load_text(
        "cluster_name: x\ntrickle_fsync: false\nrow_cache_size: 0MiB\n\
         enable_user_defined_functions: false\nmax_hint_window:\nadmin_port: 7300\n",
    )
    .unwrap();
    assert_eq!(
        loaded.ignored,
        vec![
            "trickle_fsync",
            "row_cache_size",
            "enable_user_defined_functions"
        ]
    );
    assert_eq!(loaded.config.admin_port, 7300);
}

#[test]
fn partitioner_and_auth() {
    let c = "partitioner: org.apache.cassandra.dht.Murmur3Partitioner\n\
             authenticator:\n  class_name: org.apache.cassandra.auth.AllowAllAuthenticator\n\
             authorizer: AllowAllAuthorizer\n";
    assert!(load_text(c).unwrap().ignored.is_empty());
    let err = error("partitioner: org.apache.cassandra.dht.RandomPartitioner\n");
    assert!(err
        .starts_with("Invalid value 'org.apache.cassandra.dht.RandomPartitioner' for partitioner"));
    let err = error("authenticator: PasswordAuthenticator\n");
    assert!(
        err.contains("password authentication is not yet supported"),
        "{err}"
    );
    assert!(error("authorizer: CassandraAuthorizer\n").contains("authorizer"));
}

#[test]
fn commitlog_sync_modes() {
    let batch = config("commitlog_sync: batch\n");
    assert_eq!(batch.commitlog_sync, CommitLogSync::Batch);
    assert_eq!(batch.commitlog_sync_period, Duration::ZERO);
    let group = config("commitlog_sync: group\ncommitlog_sync_group_window: 15ms\n");
    assert_eq!(group.commitlog_sync_group_window, Duration::from_millis(15));
    let err = error("commitlog_sync: batch\ncommitlog_sync_period: 10000ms\n");
    assert!(err.contains("commitlog_sync_period"), "{err}");
    let old_window = config("commitlog_sync: group\ncommitlog_sync_group_window_in_ms: 2.5\n");
    assert_eq!(
        old_window.commitlog_sync_group_window,
        Duration::from_millis(3)
    );
}

#[test]
fn seeds_addresses_and_directories() {
    let c = config(
        "listen_address: 10.0.0.5\nrpc_address: 0.0.0.0\nbroadcast_rpc_address: 10.0.0.5\n\
         storage_port: 7010\n\
         seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    \
         parameters:\n      - seeds: \"10.0.0.1:7000, 10.0.0.2,[::1]:7001\"\n\
         data_file_directories:\n  - /disk1/data\n  - ./disk2\ncommitlog_directory: log\n",
    );
    assert_eq!(c.listen_address, "10.0.0.5".parse::<IpAddr>().unwrap());
    let seeds: Vec<String> = c.seed_addresses().iter().map(|a| a.to_string()).collect();
    assert_eq!(seeds, vec!["10.0.0.1:7000", "10.0.0.2:7010", "[::1]:7001"]);
    assert_eq!(
        c.data_file_directories,
        vec![
            PathBuf::from("/disk1/data"),
            PathBuf::from("/srv/helenus/disk2")
        ]
    );
    assert_eq!(c.commitlog_directory, PathBuf::from("/srv/helenus/log"));
}

/// Settings operators change in the tuning guides, written as an operator would.
const OPERATOR_YAML: &str = r#"
cluster_name: 'Production Cluster'
num_tokens: 8
allocate_tokens_for_local_replication_factor: 5
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: GossipingPropertyFileSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1:7000"
listen_address: localhost
rpc_address: 127.0.0.1
data_file_directories:
  - /mnt/nvme0/cass_db/data
  - /mnt/nvme2/cass_db/data
commitlog_directory: /mnt/nvme1/cass_db/commitlog
commitlog_sync: periodic
commitlog_sync_period: 10000ms
commitlog_segment_size: 32MiB
commitlog_total_space: 8192MiB
concurrent_reads: 144
concurrent_writes: 48
concurrent_counter_writes: 48
concurrent_compactors: 8
compaction_throughput: 0MiB/s
memtable_allocation_type: offheap_objects
memtable_heap_space: 4096MiB
memtable_offheap_space: 4096MiB
memtable_flush_writers: 4
file_cache_size: 2048MiB
trickle_fsync: true
disk_optimization_strategy: ssd
key_cache_size: 100MiB
read_request_timeout: 5000ms
write_request_timeout: 2000ms
tombstone_warn_threshold: 1000
tombstone_failure_threshold: 100000
"#;

#[test]
fn typical_operator_file() {
    let loaded = load_text(OPERATOR_YAML).unwrap();
    let c = &loaded.config;
    assert_eq!(c.cluster_name, "Production Cluster");
    assert!(c.listen_address.is_loopback());
    assert_eq!(c.endpoint_snitch, crate::Snitch::GossipingPropertyFile);
    assert_eq!((c.concurrent_reads, c.concurrent_writes), (144, 48));
    assert_eq!(c.concurrent_compactors, Some(8));
    assert_eq!(c.compaction_throughput.as_bytes_per_second(), 0);
    assert_eq!(
        c.memtable_allocation_type,
        MemtableAllocationType::OffheapObjects
    );
    assert_eq!(c.memtable_offheap_space, Some(DataSize::mebibytes(4096)));
    assert_eq!(c.file_cache_size, Some(DataSize::mebibytes(2048)));
    assert!(c.file_cache_enabled, "on unless disabled");
    assert_eq!(c.data_file_directories.len(), 2);
    assert_eq!(c.allocate_tokens_for_local_replication_factor, Some(5));
    assert_eq!(
        loaded.ignored,
        vec!["trickle_fsync", "disk_optimization_strategy"]
    );
}

#[test]
fn load_reads_files_and_reports_missing_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cassandra.yaml");
    std::fs::write(&path, "cluster_name: from file\n").unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.config.cluster_name, "from file");
    assert!(loaded.config.commitlog_directory.is_absolute());
    let err = load(&dir.path().join("missing.yaml")).unwrap_err();
    assert!(err.to_string().starts_with("cannot read "), "{err}");
}

/// The cassandra.yaml the local reference Cassandra 5.0 (`refcass`) runs with.
#[test]
fn reference_cassandra_file_is_accepted() {
    let Some(home) = std::env::var_os("HOME") else {
        eprintln!("skipped: HOME is not set");
        return;
    };
    let path = Path::new(&home).join(".cache/refcass/run/127.0.0.2/conf/cassandra.yaml");
    if !path.exists() {
        eprintln!(
            "skipped: {} not found (run refcass start once)",
            path.display()
        );
        return;
    }
    let loaded = load(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    assert_eq!(
        loaded.config.listen_address,
        "127.0.0.2".parse::<IpAddr>().unwrap()
    );
    assert!(!loaded
        .ignored
        .contains(&"start_native_transport".to_string()));
}

/// Shapes found in Cassandra 5.0's stock cassandra.yaml (written here by hand).
#[test]
fn stock_file_shapes() {
    let text = "authenticator:\n  class_name: AllowAllAuthenticator\n\
                role_manager:\n  class_name: CassandraRoleManager\n  parameters:\n\
                listen_address: localhost\nrpc_address: localhost\n\
                memtable:\n  configurations:\n    skiplist:\n      class_name: SkipListMemtable\n\
                startup_checks:\nsstable:\n  selected_format: big\n\
                storage_compatibility_mode: CASSANDRA_4\ntransfer_hints_on_decommission: true\n";
    let loaded = load_text(text).unwrap();
    assert_eq!(
        loaded.ignored,
        vec![
            "memtable",
            "sstable",
            "storage_compatibility_mode",
            "transfer_hints_on_decommission"
        ]
    );
    assert!(loaded.config.rpc_address.is_loopback());
}

#[test]
fn file_cache_settings_and_their_legacy_name() {
    let c = load_text("file_cache_enabled: false\nfile_cache_size_in_mb: 64\n")
        .unwrap()
        .config;
    assert!(!c.file_cache_enabled);
    assert_eq!(c.file_cache_size, Some(DataSize::mebibytes(64)));
    let c = load_text("file_cache_size: 0MiB\n").unwrap().config;
    assert_eq!(c.file_cache_size, Some(DataSize::mebibytes(0)));
}

#[test]
fn native_transport_limits_and_their_legacy_names() {
    let c = config(
        "native_transport_max_request_data_in_flight: 64MiB\n\
         native_transport_max_request_data_in_flight_per_ip: 100000B\n\
         native_transport_throw_on_overload: true\n\
         native_transport_rate_limiting_enabled: true\n\
         native_transport_max_requests_per_second: 5000\n\
         native_transport_idle_timeout: 60s\n\
         native_transport_max_concurrent_connections: 100\n\
         native_transport_max_concurrent_connections_per_ip: 10\n\
         admin_auth_token_file: secrets/admin.token\n",
    );
    assert_eq!(c.request_data_in_flight(), (64 << 20, 100_000));
    assert!(c.native_transport_throw_on_overload && c.native_transport_rate_limiting_enabled);
    assert_eq!(c.native_transport_max_requests_per_second, 5000);
    assert_eq!(c.native_transport_idle_timeout, Duration::from_secs(60));
    assert_eq!(
        (
            c.native_transport_max_concurrent_connections,
            c.native_transport_max_concurrent_connections_per_ip
        ),
        (100, 10)
    );
    assert_eq!(
        c.admin_auth_token_file,
        Some(PathBuf::from("/srv/helenus/secrets/admin.token"))
    );
    let legacy = config(
        "native_transport_max_concurrent_requests_in_bytes: -1\n\
         native_transport_max_concurrent_requests_in_bytes_per_ip: 1048576\n\
         native_transport_idle_timeout_in_ms: 5000\n",
    );
    assert_eq!(legacy.native_transport_max_request_data_in_flight, None);
    assert_eq!(
        legacy.native_transport_max_request_data_in_flight_per_ip,
        Some(DataSize::mebibytes(1))
    );
    assert_eq!(legacy.native_transport_idle_timeout, Duration::from_secs(5));
    assert!(error("native_transport_max_requests_per_second: 0\n").contains("greater than 0"));
}

#[test]
fn metadata_directory_resolves_against_the_base_and_differs_from_data_directories() {
    let c = config("metadata_directory: ./cluster/metadata\n");
    assert_eq!(
        c.metadata_directory,
        PathBuf::from("/srv/helenus/cluster/metadata")
    );
    let reason = error("data_file_directories:\n  - /d\nmetadata_directory: /d\n");
    assert!(reason.contains("metadata_directory"), "{reason}");
    // Unset: beside the first data directory, as a node's other directories usually are.
    let c = config("data_file_directories:\n  - /disk1/node1/data\n  - /disk2/data\n");
    assert_eq!(c.metadata_directory, PathBuf::from("/disk1/node1/metadata"));
    let c = config("data_file_directories:\n  - data\n");
    assert_eq!(c.metadata_directory, PathBuf::from("/srv/helenus/metadata"));
}

#[test]
fn failure_policies_default_to_stop_and_take_cassandras_values() {
    use crate::{CommitFailurePolicy, DiskFailurePolicy};
    let defaults = config("");
    assert_eq!(defaults.disk_failure_policy, DiskFailurePolicy::Stop);
    assert_eq!(defaults.commit_failure_policy, CommitFailurePolicy::Stop);
    let set = config("disk_failure_policy: best_effort\ncommit_failure_policy: stop_commit\n");
    assert_eq!(set.disk_failure_policy, DiskFailurePolicy::BestEffort);
    assert_eq!(set.commit_failure_policy, CommitFailurePolicy::StopCommit);
    assert_eq!(
        config("disk_failure_policy: stop_paranoid\n").disk_failure_policy,
        DiskFailurePolicy::StopParanoid
    );
    assert!(error("disk_failure_policy: stop_commit\n")
        .starts_with("Invalid value 'stop_commit' for disk_failure_policy"));
    assert!(error("commit_failure_policy: best_effort\n")
        .contains("expected die, stop, stop_commit or ignore"));
    let listed = set.settings();
    assert!(listed.contains(&("disk_failure_policy", Some("best_effort".into()))));
    assert!(listed.contains(&("commit_failure_policy", Some("stop_commit".into()))));
}

#[test]
fn hints_settings_in_new_and_old_syntax() {
    let c = config(
        "hinted_handoff_enabled: false\nhinted_handoff_disabled_datacenters:\n  - DC1\n  - DC2\n\
         max_hint_window: 1h\nhint_window_persistent_enabled: false\n\
         max_hints_delivery_threads: 4\nhinted_handoff_throttle: 2048KiB\n\
         max_hints_file_size: 64MiB\nmax_hints_size_per_host: 1GiB\nhints_flush_period: 5s\n\
         hints_compression:\n  - class_name: LZ4Compressor\n    parameters:\n      -\n",
    );
    assert!(!c.hinted_handoff_enabled);
    assert_eq!(c.hinted_handoff_disabled_datacenters, vec!["DC1", "DC2"]);
    assert_eq!(c.max_hint_window, Duration::from_secs(3600));
    assert!(!c.hint_window_persistent_enabled);
    assert_eq!(c.max_hints_delivery_threads, 4);
    assert_eq!(c.hinted_handoff_throttle, DataSize::kibibytes(2048));
    assert_eq!(c.max_hints_file_size, DataSize::mebibytes(64));
    assert_eq!(c.max_hints_size_per_host, DataSize::mebibytes(1024));
    assert_eq!(c.hints_flush_period, Duration::from_secs(5));
    assert_eq!(c.hints_compression.as_deref(), Some("LZ4Compressor"));
    let old = config(
        "max_hint_window_in_ms: 10800000\nhinted_handoff_throttle_in_kb: 512\n\
         max_hints_file_size_in_mb: 32\nhints_flush_period_in_ms: 2000\n",
    );
    assert_eq!(old.max_hint_window, Duration::from_secs(3 * 3600));
    assert_eq!(old.hinted_handoff_throttle, DataSize::kibibytes(512));
    assert_eq!(old.max_hints_file_size, DataSize::mebibytes(32));
    assert_eq!(old.hints_flush_period, Duration::from_secs(2));
    let err = error("hints_compression:\n  - class_name: SnappyCompressor\n");
    assert!(err.contains("only with LZ4Compressor"), "{err}");
    let err = error("max_hints_delivery_threads: 0\n");
    assert!(err.contains("max_hints_delivery_threads"), "{err}");
}

#[test]
fn batchlog_replay_throttle_in_new_and_old_syntax() {
    assert_eq!(
        config("").batchlog_replay_throttle,
        DataSize::kibibytes(1024)
    );
    let c = config("batchlog_replay_throttle: 2MiB\n");
    assert_eq!(c.batchlog_replay_throttle, DataSize::mebibytes(2));
    let old = config("batchlog_replay_throttle_in_kb: 0\n");
    assert_eq!(old.batchlog_replay_throttle, DataSize::kibibytes(0));
}
