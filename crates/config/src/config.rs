//! The `Config` struct: every setting Helenus uses, under Cassandra's key names, with
//! Cassandra 5.0's cassandra.yaml defaults (Helenus-specific ones noted), and its checks.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use crate::auto_repair::AutoRepair;
use crate::error::ConfigError;
use crate::guardrails::Guardrails;
use crate::policies::{CommitFailurePolicy, DiskFailurePolicy};
use crate::snitch::{Location, Snitch};
use crate::spec::{format_duration, DataRate, DataSize};

/// When the commit log is synced to disk (`commitlog_sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitLogSync {
    /// Acknowledge at once, fsync every `commitlog_sync_period`.
    Periodic,
    /// Acknowledge only after an fsync.
    Batch,
    /// Acknowledge after the fsync of a group gathered for `commitlog_sync_group_window`.
    Group,
}

/// Where memtables keep their data (`memtable_allocation_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemtableAllocationType {
    UnslabbedHeapBuffers,
    UnslabbedHeapBuffersLogged,
    HeapBuffers,
    OffheapBuffers,
    OffheapObjects,
}

/// Which internode messages are compressed (`internode_compression`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InternodeCompression {
    All,
    /// Only between data centers (Cassandra's default).
    Dc,
    None,
}

impl std::fmt::Display for InternodeCompression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            InternodeCompression::All => "all",
            InternodeCompression::Dc => "dc",
            InternodeCompression::None => "none",
        })
    }
}

/// One seed node from `seed_provider`; a missing port means `storage_port`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seed {
    pub address: IpAddr,
    pub port: Option<u16>,
}

/// A node's configuration. `Config::default()` is the node started with no file.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub cluster_name: String,
    pub num_tokens: u32,
    /// Tokens from `initial_token` (comma separated); empty when not set.
    pub initial_token: Vec<i64>,
    /// Helenus default 127.0.0.1 (Cassandra's is `localhost`).
    pub listen_address: IpAddr,
    pub broadcast_address: Option<IpAddr>,
    pub rpc_address: IpAddr,
    pub broadcast_rpc_address: Option<IpAddr>,
    pub storage_port: u16,
    pub native_transport_port: u16,
    pub native_transport_max_frame_size: DataSize,
    pub native_transport_max_threads: u32,
    /// Request bytes all clients may have in flight; `None`: a tenth of [`heap_equivalent`].
    pub native_transport_max_request_data_in_flight: Option<DataSize>,
    /// Request bytes one client address may have in flight; `None`: a fortieth of
    /// [`heap_equivalent`].
    pub native_transport_max_request_data_in_flight_per_ip: Option<DataSize>,
    /// Over a limit: `false` stops reading from the client, `true` answers Overloaded.
    pub native_transport_throw_on_overload: bool,
    pub native_transport_rate_limiting_enabled: bool,
    pub native_transport_max_requests_per_second: u32,
    /// Zero: idle connections are never closed.
    pub native_transport_idle_timeout: Duration,
    /// Negative: no limit.
    pub native_transport_max_concurrent_connections: i64,
    /// Zero or negative: no limit.
    pub native_transport_max_concurrent_connections_per_ip: i64,
    pub max_value_size: DataSize,
    /// Helenus only: address of the HTTP admin API (loopback by default).
    pub admin_address: IpAddr,
    /// Helenus only: port of the HTTP admin API; 7199, the port `nodetool` uses by default.
    pub admin_port: u16,
    /// Helenus only: a file holding the bearer token the admin API requires; `None`: no token.
    pub admin_auth_token_file: Option<PathBuf>,
    pub data_file_directories: Vec<PathBuf>,
    pub commitlog_directory: PathBuf,
    pub saved_caches_directory: PathBuf,
    pub hints_directory: PathBuf,
    /// The cluster metadata group's Raft log, vote and snapshots (the key of Cassandra's
    /// cluster metadata service, CEP-21; crate `metadata`). Unset: `metadata` beside the
    /// first data directory.
    pub metadata_directory: PathBuf,
    pub hinted_handoff_enabled: bool,
    /// Data centers whose nodes get no hints.
    pub hinted_handoff_disabled_datacenters: Vec<String>,
    /// No hints for a node down longer than this.
    pub max_hint_window: Duration,
    /// Also no hints for a node whose oldest pending hint is older than `max_hint_window`.
    pub hint_window_persistent_enabled: bool,
    pub max_hints_delivery_threads: u32,
    /// Hint delivery rate per second, divided among the other nodes; zero means unthrottled.
    pub hinted_handoff_throttle: DataSize,
    /// Batchlog replay rate per second, divided among the nodes; zero means unthrottled.
    pub batchlog_replay_throttle: DataSize,
    pub max_hints_file_size: DataSize,
    /// Zero means unlimited.
    pub max_hints_size_per_host: DataSize,
    pub hints_flush_period: Duration,
    /// Short class name of the hint files' compressor (only `LZ4Compressor`); `None`: none.
    pub hints_compression: Option<String>,
    pub commitlog_sync: CommitLogSync,
    /// Zero when not set (only periodic sync uses it).
    pub commitlog_sync_period: Duration,
    /// Zero when not set (only group sync uses it).
    pub commitlog_sync_group_window: Duration,
    pub commitlog_segment_size: DataSize,
    /// `None`: the smaller of 8GiB and a quarter of the commit log volume.
    pub commitlog_total_space: Option<DataSize>,
    /// `None`: half of `commitlog_segment_size`.
    pub max_mutation_size: Option<DataSize>,
    pub concurrent_reads: u32,
    pub concurrent_writes: u32,
    pub concurrent_counter_writes: u32,
    /// `None`: chosen from disks and cores, as Cassandra does.
    pub concurrent_compactors: Option<u32>,
    /// Zero means unthrottled.
    pub compaction_throughput: DataRate,
    /// Streams' sending rate for SSTables rewritten for a stream and for whole ones (zero:
    /// unthrottled); `nodetool setstreamthroughput [-e]` changes them at run time.
    pub stream_throughput_outbound: DataRate,
    pub entire_sstable_stream_throughput_outbound: DataRate,
    /// `None`: a quarter of the memory available to the node.
    pub memtable_heap_space: Option<DataSize>,
    pub memtable_offheap_space: Option<DataSize>,
    pub memtable_allocation_type: MemtableAllocationType,
    pub memtable_flush_writers: Option<u32>,
    pub memtable_cleanup_threshold: Option<f64>,
    pub request_timeout: Duration,
    pub read_request_timeout: Duration,
    pub range_request_timeout: Duration,
    pub write_request_timeout: Duration,
    pub counter_write_request_timeout: Duration,
    pub cas_contention_timeout: Duration,
    /// Paxos state of rounds this recent at a repair's start is kept by the purge after it.
    pub paxos_purge_grace_period: Duration,
    pub truncate_request_timeout: Duration,
    pub slow_query_log_timeout: Duration,
    pub tombstone_warn_threshold: u32,
    pub tombstone_failure_threshold: u32,
    pub batch_size_warn_threshold: DataSize,
    pub batch_size_fail_threshold: DataSize,
    pub unlogged_batch_across_partitions_warn_threshold: u32,
    /// The guardrails section (`keyspaces_warn_threshold`, `allow_filtering_enabled`, ...).
    pub guardrails: Guardrails,
    pub column_index_size: Option<DataSize>,
    /// `None`: the smaller of 5% of memory and 100MiB.
    pub key_cache_size: Option<DataSize>,
    /// The chunk cache's size; `None`: the smaller of 1/32 of memory and 128MiB.
    pub file_cache_size: Option<DataSize>,
    /// `false` disables the chunk cache (Helenus enables it by default, Cassandra does not).
    pub file_cache_enabled: bool,
    pub prepared_statements_cache_size: Option<DataSize>,
    pub auto_snapshot: bool,
    pub endpoint_snitch: Snitch,
    /// Data center and rack: SimpleSnitch's, or from `cassandra-rackdc.properties` beside the
    /// configuration file for GossipingPropertyFileSnitch.
    pub location: Location,
    /// `seed_provider`'s seeds. Empty when the file has no `seed_provider`: the node runs alone
    /// and opens no internode port (a one-member cluster).
    pub seeds: Vec<Seed>,
    /// A new node that is not a seed joins as a pending owner and becomes Normal once its
    /// ranges are fetched (no data moves yet: see docs/differences.md); `false` joins at once.
    pub auto_bootstrap: bool,
    /// `replace_address_first_boot` (also `-Dcassandra.replace_address_first_boot=` in
    /// `JVM_OPTS`): a new node takes the tokens of the dead node at this address.
    pub replace_address_first_boot: Option<IpAddr>,
    /// How long a topology change waits after a step so that every coordinator applies it
    /// (Cassandra's `ring_delay_ms`, 30 s there; here the metadata log delivers each step).
    pub ring_delay: Duration,
    /// Cassandra's `-Dcassandra.consistent.rangemovement` (also `consistent_rangemovement` in
    /// cassandra.yaml here): a joining node streams each range from the node giving it up and
    /// refuses to join while that node is down; `false` lets it stream from another live
    /// replica instead.
    pub consistent_rangemovement: bool,
    /// Balanced token allocation for this many replicas in the node's data center; `None`:
    /// random tokens.
    pub allocate_tokens_for_local_replication_factor: Option<u32>,
    /// The failure detector's conviction threshold (Cassandra's phi, 5 to 16).
    pub phi_convict_threshold: f64,
    pub internode_compression: InternodeCompression,
    pub disk_failure_policy: DiskFailurePolicy,
    pub commit_failure_policy: CommitFailurePolicy,
    /// The memory the Merkle trees of a repair session may take at once; `None`: 256 MiB
    /// (Cassandra's default for a 4 GiB heap, a sixteenth of it).
    pub repair_session_space: Option<DataSize>,
    /// The built-in repair scheduler (`auto_repair`).
    pub auto_repair: AutoRepair,
}

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

impl Default for Config {
    fn default() -> Self {
        Config {
            cluster_name: "Test Cluster".to_string(),
            num_tokens: 16,
            initial_token: Vec::new(),
            listen_address: LOOPBACK,
            broadcast_address: None,
            rpc_address: LOOPBACK,
            broadcast_rpc_address: None,
            storage_port: 7000,
            native_transport_port: 9042,
            native_transport_max_frame_size: DataSize::mebibytes(16),
            native_transport_max_threads: 128,
            native_transport_max_request_data_in_flight: None,
            native_transport_max_request_data_in_flight_per_ip: None,
            native_transport_throw_on_overload: false,
            native_transport_rate_limiting_enabled: false,
            native_transport_max_requests_per_second: 1_000_000,
            native_transport_idle_timeout: Duration::ZERO,
            native_transport_max_concurrent_connections: -1,
            native_transport_max_concurrent_connections_per_ip: -1,
            max_value_size: DataSize::mebibytes(256),
            admin_address: LOOPBACK,
            admin_port: 7199,
            admin_auth_token_file: None,
            data_file_directories: vec![PathBuf::from("./data/data")],
            commitlog_directory: PathBuf::from("./data/commitlog"),
            saved_caches_directory: PathBuf::from("./data/saved_caches"),
            hints_directory: PathBuf::from("./data/hints"),
            metadata_directory: PathBuf::from("./data/metadata"),
            hinted_handoff_enabled: true,
            hinted_handoff_disabled_datacenters: Vec::new(),
            max_hint_window: Duration::from_secs(3 * 3600),
            hint_window_persistent_enabled: true,
            max_hints_delivery_threads: 2,
            hinted_handoff_throttle: DataSize::kibibytes(1024),
            batchlog_replay_throttle: DataSize::kibibytes(1024),
            max_hints_file_size: DataSize::mebibytes(128),
            max_hints_size_per_host: DataSize::bytes(0),
            hints_flush_period: Duration::from_millis(10_000),
            hints_compression: None,
            commitlog_sync: CommitLogSync::Periodic,
            commitlog_sync_period: Duration::from_millis(10_000),
            commitlog_sync_group_window: Duration::ZERO,
            commitlog_segment_size: DataSize::mebibytes(32),
            commitlog_total_space: None,
            max_mutation_size: None,
            concurrent_reads: 32,
            concurrent_writes: 32,
            concurrent_counter_writes: 32,
            concurrent_compactors: None,
            compaction_throughput: DataRate::mebibytes_per_second(64),
            stream_throughput_outbound: DataRate::mebibytes_per_second(24),
            entire_sstable_stream_throughput_outbound: DataRate::mebibytes_per_second(24),
            memtable_heap_space: None,
            memtable_offheap_space: None,
            memtable_allocation_type: MemtableAllocationType::HeapBuffers,
            memtable_flush_writers: None,
            memtable_cleanup_threshold: None,
            request_timeout: Duration::from_millis(10_000),
            read_request_timeout: Duration::from_millis(5_000),
            range_request_timeout: Duration::from_millis(10_000),
            write_request_timeout: Duration::from_millis(2_000),
            counter_write_request_timeout: Duration::from_millis(5_000),
            cas_contention_timeout: Duration::from_millis(1_000),
            paxos_purge_grace_period: Duration::from_secs(60),
            truncate_request_timeout: Duration::from_millis(60_000),
            slow_query_log_timeout: Duration::from_millis(500),
            tombstone_warn_threshold: 1_000,
            tombstone_failure_threshold: 100_000,
            batch_size_warn_threshold: DataSize::kibibytes(5),
            batch_size_fail_threshold: DataSize::kibibytes(50),
            unlogged_batch_across_partitions_warn_threshold: 10,
            guardrails: Guardrails::default(),
            column_index_size: None,
            key_cache_size: None,
            file_cache_size: None,
            file_cache_enabled: true,
            prepared_statements_cache_size: None,
            auto_snapshot: true,
            endpoint_snitch: Snitch::Simple,
            location: Location::simple(),
            seeds: Vec::new(),
            auto_bootstrap: true,
            replace_address_first_boot: None,
            ring_delay: Duration::from_secs(2),
            consistent_rangemovement: true,
            allocate_tokens_for_local_replication_factor: Some(3),
            phi_convict_threshold: 8.0,
            internode_compression: InternodeCompression::Dc,
            disk_failure_policy: DiskFailurePolicy::Stop,
            commit_failure_policy: CommitFailurePolicy::Stop,
            repair_session_space: None,
            auto_repair: AutoRepair::default(),
        }
    }
}

impl Config {
    /// The seeds as socket addresses, `storage_port` filling in missing ports.
    pub fn seed_addresses(&self) -> Vec<SocketAddr> {
        let port = |seed: &Seed| seed.port.unwrap_or(self.storage_port);
        self.seeds
            .iter()
            .map(|seed| SocketAddr::new(seed.address, port(seed)))
            .collect()
    }

    /// The largest mutation accepted: `max_mutation_size`, else half a commit log segment.
    pub fn effective_max_mutation_size(&self) -> DataSize {
        self.max_mutation_size
            .unwrap_or(DataSize::bytes(self.commitlog_segment_size.as_bytes() / 2))
    }

    /// Checks the settings together, as Cassandra does at startup.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_tokens()?;
        self.validate_addresses()?;
        self.validate_ports()?;
        self.validate_commitlog()?;
        self.validate_concurrency()?;
        self.validate_native_limits()?;
        self.guardrails.validate()?;
        self.validate_hints()?;
        self.validate_directories()
    }

    /// The request bytes in flight allowed for all clients and for one client address:
    /// the settings, else a tenth and a fortieth of [`heap_equivalent`] as in Cassandra.
    pub fn request_data_in_flight(&self) -> (u64, u64) {
        let heap = heap_equivalent(physical_memory());
        let global = self.native_transport_max_request_data_in_flight;
        let per_ip = self.native_transport_max_request_data_in_flight_per_ip;
        (
            global.map_or(heap / 10, DataSize::as_bytes),
            per_ip.map_or(heap / 40, DataSize::as_bytes),
        )
    }

    fn validate_native_limits(&self) -> Result<(), ConfigError> {
        let sizes = [
            (
                "native_transport_max_request_data_in_flight",
                self.native_transport_max_request_data_in_flight,
            ),
            (
                "native_transport_max_request_data_in_flight_per_ip",
                self.native_transport_max_request_data_in_flight_per_ip,
            ),
        ];
        if let Some((key, Some(size))) = sizes
            .iter()
            .find(|(_, s)| s.is_some_and(|s| s.as_bytes() == 0))
        {
            return Err(ConfigError::invalid(key, size, "must be greater than 0"));
        }
        if self.native_transport_max_requests_per_second == 0 {
            return Err(ConfigError::invalid(
                "native_transport_max_requests_per_second",
                0,
                "must be greater than 0",
            ));
        }
        Ok(())
    }

    fn validate_tokens(&self) -> Result<(), ConfigError> {
        if self.num_tokens == 0 {
            return Err(ConfigError::invalid("num_tokens", 0, "must be at least 1"));
        }
        let count = self.initial_token.len();
        if count != 0 && count != self.num_tokens as usize {
            return Err(ConfigError::invalid(
                "initial_token",
                join(&self.initial_token),
                format!("{count} tokens given but num_tokens is {}", self.num_tokens),
            ));
        }
        Ok(())
    }

    fn validate_addresses(&self) -> Result<(), ConfigError> {
        if self.listen_address.is_unspecified() {
            return Err(ConfigError::invalid(
                "listen_address",
                self.listen_address,
                "cannot be a wildcard address",
            ));
        }
        if self.rpc_address.is_unspecified()
            && self
                .broadcast_rpc_address
                .is_none_or(|a| a.is_unspecified())
        {
            return Err(ConfigError::invalid(
                "rpc_address",
                self.rpc_address,
                "a wildcard rpc_address needs broadcast_rpc_address set to a real address",
            ));
        }
        Ok(())
    }

    /// Ports 0 mean "any free port"; nonzero ports on the same address must differ.
    fn validate_ports(&self) -> Result<(), ConfigError> {
        let ports = [
            ("storage_port", self.listen_address, self.storage_port),
            (
                "native_transport_port",
                self.rpc_address,
                self.native_transport_port,
            ),
            ("admin_port", self.admin_address, self.admin_port),
        ];
        for (i, (key, address, port)) in ports.iter().enumerate() {
            let clash = ports[..i].iter().find(|(_, other_address, other_port)| {
                *port != 0 && port == other_port && overlap(*address, *other_address)
            });
            if let Some((other, _, _)) = clash {
                return Err(ConfigError::invalid(
                    key,
                    port,
                    format!("already used by {other}"),
                ));
            }
        }
        Ok(())
    }

    fn validate_commitlog(&self) -> Result<(), ConfigError> {
        let period = self.commitlog_sync_period;
        let window = self.commitlog_sync_group_window;
        let period_error = |reason: &str| {
            Err(ConfigError::invalid(
                "commitlog_sync_period",
                format_duration(period),
                reason,
            ))
        };
        match self.commitlog_sync {
            CommitLogSync::Periodic if period.is_zero() => {
                period_error("missing value for periodic sync")
            }
            CommitLogSync::Batch if !period.is_zero() => {
                period_error("batch sync specified: do not set commitlog_sync_period")
            }
            CommitLogSync::Group if window.is_zero() => Err(ConfigError::invalid(
                "commitlog_sync_group_window",
                format_duration(window),
                "missing value for group sync",
            )),
            CommitLogSync::Group if !period.is_zero() => {
                period_error("group sync specified: set only commitlog_sync_group_window")
            }
            _ => self.validate_segment(),
        }
    }

    fn validate_segment(&self) -> Result<(), ConfigError> {
        let segment = self.commitlog_segment_size;
        if segment.as_bytes() == 0 || segment >= DataSize::mebibytes(2048) {
            return Err(ConfigError::invalid(
                "commitlog_segment_size",
                segment,
                "must be more than 0 and less than 2048MiB",
            ));
        }
        if let Some(max) = self.max_mutation_size {
            if max.as_bytes().saturating_mul(2) > segment.as_bytes() {
                return Err(ConfigError::invalid(
                    "max_mutation_size",
                    max,
                    "commitlog_segment_size must be at least twice max_mutation_size",
                ));
            }
        }
        Ok(())
    }

    fn validate_concurrency(&self) -> Result<(), ConfigError> {
        let at_least_two = [
            ("concurrent_reads", self.concurrent_reads),
            ("concurrent_writes", self.concurrent_writes),
            ("concurrent_counter_writes", self.concurrent_counter_writes),
        ];
        if let Some((key, value)) = at_least_two.iter().find(|(_, v)| *v < 2) {
            return Err(ConfigError::invalid(key, value, "must be at least 2"));
        }
        let positive = [
            ("concurrent_compactors", self.concurrent_compactors),
            ("memtable_flush_writers", self.memtable_flush_writers),
        ];
        if let Some((key, _)) = positive.iter().find(|(_, v)| *v == Some(0)) {
            return Err(ConfigError::invalid(key, 0, "must be greater than 0"));
        }
        match self.memtable_cleanup_threshold {
            Some(t) if !(0.01..=0.99).contains(&t) => Err(ConfigError::invalid(
                "memtable_cleanup_threshold",
                t,
                "must be between 0.01 and 0.99",
            )),
            _ => Ok(()),
        }
    }

    fn validate_hints(&self) -> Result<(), ConfigError> {
        if self.max_hints_delivery_threads == 0 {
            return Err(ConfigError::invalid(
                "max_hints_delivery_threads",
                0,
                "must be at least 1",
            ));
        }
        if self.hints_flush_period.is_zero() {
            return Err(ConfigError::invalid(
                "hints_flush_period",
                format_duration(self.hints_flush_period),
                "must be greater than 0",
            ));
        }
        Ok(())
    }

    fn validate_directories(&self) -> Result<(), ConfigError> {
        if self.data_file_directories.is_empty() {
            return Err(ConfigError::invalid(
                "data_file_directories",
                "[]",
                "at least one directory is needed",
            ));
        }
        let others = [
            ("commitlog_directory", &self.commitlog_directory),
            ("saved_caches_directory", &self.saved_caches_directory),
            ("hints_directory", &self.hints_directory),
            ("metadata_directory", &self.metadata_directory),
        ];
        for (key, dir) in others {
            if self.data_file_directories.contains(dir) {
                return Err(ConfigError::invalid(
                    key,
                    dir.display(),
                    "must not be one of data_file_directories",
                ));
            }
        }
        Ok(())
    }
}

/// The memory Cassandra would give its heap on this machine (`cassandra-env.sh`): the larger
/// of half the memory up to 1 GiB and a quarter of it up to 8 GiB. Helenus has no heap; its
/// budgets that Cassandra sizes from the heap are sized from this. 1 GiB when the memory size
/// is unknown.
pub fn heap_equivalent(memory: Option<u64>) -> u64 {
    const GIB: u64 = 1 << 30;
    memory.map_or(GIB, |m| (m / 2).min(GIB).max((m / 4).min(8 * GIB)))
}

/// The machine's memory (`MemTotal` of `/proc/meminfo`), if known.
pub fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_total(&info)
}

fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

fn overlap(a: IpAddr, b: IpAddr) -> bool {
    a == b || a.is_unspecified() || b.is_unspecified()
}

fn join(tokens: &[i64]) -> String {
    let texts: Vec<String> = tokens.iter().map(i64::to_string).collect();
    texts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_match_cassandra() {
        let config = Config::default();
        assert_eq!(config.validate().map_err(|e| e.to_string()), Ok(()));
        assert_eq!(config.cluster_name, "Test Cluster");
        assert_eq!(config.native_transport_port, 9042);
        assert_eq!(config.write_request_timeout, Duration::from_secs(2));
        assert_eq!(config.compaction_throughput.to_string(), "64MiB/s");
        // Cassandra's stock yaml names 127.0.0.1:7000; with no seed_provider at all Helenus runs
        // a one-member cluster with no internode port.
        assert!(config.seed_addresses().is_empty());
        assert_eq!(
            config.effective_max_mutation_size(),
            DataSize::mebibytes(16)
        );
    }

    fn reason(config: &Config) -> String {
        config
            .validate()
            .map_or_else(|e| e.to_string(), |()| "valid".to_string())
    }

    #[test]
    fn batch_sync_with_period_is_refused() {
        let mut config = Config {
            commitlog_sync: CommitLogSync::Batch,
            ..Config::default()
        };
        assert_eq!(
            reason(&config),
            "Invalid value '10s' for commitlog_sync_period: batch sync specified: do not set commitlog_sync_period"
        );
        config.commitlog_sync_period = Duration::ZERO;
        assert_eq!(reason(&config), "valid");
    }

    #[test]
    fn group_sync_needs_a_window() {
        let mut config = Config {
            commitlog_sync: CommitLogSync::Group,
            commitlog_sync_period: Duration::ZERO,
            ..Config::default()
        };
        assert!(reason(&config).contains("commitlog_sync_group_window"));
        config.commitlog_sync_group_window = Duration::from_millis(15);
        assert_eq!(reason(&config), "valid");
    }

    #[test]
    fn clashing_ports_are_refused() {
        let config = Config {
            admin_port: 9042,
            ..Config::default()
        };
        assert_eq!(
            reason(&config),
            "Invalid value '9042' for admin_port: already used by native_transport_port"
        );
        let config = Config {
            admin_port: 0,
            native_transport_port: 0,
            ..Config::default()
        };
        assert_eq!(reason(&config), "valid");
    }

    #[test]
    fn other_checks() {
        let wildcard = Config {
            rpc_address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            ..Config::default()
        };
        assert!(reason(&wildcard).starts_with("Invalid value '0.0.0.0' for rpc_address"));
        let tokens = Config {
            initial_token: vec![0],
            ..Config::default()
        };
        assert!(reason(&tokens).contains("1 tokens given but num_tokens is 16"));
        let reads = Config {
            concurrent_reads: 1,
            ..Config::default()
        };
        assert!(reason(&reads).contains("concurrent_reads"));
        let same_dir = Config {
            commitlog_directory: PathBuf::from("./data/data"),
            ..Config::default()
        };
        assert!(reason(&same_dir).contains("commitlog_directory"));
        let mutation = Config {
            max_mutation_size: Some(DataSize::mebibytes(17)),
            ..Config::default()
        };
        assert!(reason(&mutation).contains("max_mutation_size"));
        let no_budget = Config {
            native_transport_max_request_data_in_flight_per_ip: Some(DataSize::bytes(0)),
            ..Config::default()
        };
        assert_eq!(
            reason(&no_budget),
            "Invalid value '0B' for native_transport_max_request_data_in_flight_per_ip: must be greater than 0"
        );
    }

    #[test]
    fn the_heap_equivalent_follows_cassandra_env() {
        const GIB: u64 = 1 << 30;
        assert_eq!(heap_equivalent(Some(24 * GIB)), 6 * GIB);
        assert_eq!(heap_equivalent(Some(64 * GIB)), 8 * GIB);
        assert_eq!(heap_equivalent(Some(2 * GIB)), GIB);
        assert_eq!(heap_equivalent(Some(GIB)), GIB / 2);
        assert_eq!(heap_equivalent(None), GIB);
        assert_eq!(mem_total("MemTotal:  1024 kB\n"), Some(1 << 20));
        assert_eq!(mem_total("junk"), None);
    }

    #[test]
    fn request_data_in_flight_is_a_tenth_and_a_fortieth_of_the_heap_equivalent() {
        let heap = heap_equivalent(physical_memory());
        assert_eq!(
            Config::default().request_data_in_flight(),
            (heap / 10, heap / 40)
        );
        let set = Config {
            native_transport_max_request_data_in_flight: Some(DataSize::mebibytes(64)),
            ..Config::default()
        };
        assert_eq!(set.request_data_in_flight(), (64 << 20, heap / 40));
    }
}
