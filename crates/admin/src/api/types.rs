//! The JSON bodies of the admin API (`docs/admin-api.md`), shared with `helenus nodetool`.

use serde::{Deserialize, Serialize};

/// `GET /v1/node`: this node, as `nodetool info`, `status` and `ring` show it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeInfo {
    pub host_id: String,
    pub address: String,
    pub storage_port: u16,
    pub data_center: String,
    pub rack: String,
    /// `NORMAL`, `DRAINING` or `DRAINED`.
    pub mode: String,
    pub gossip_active: bool,
    pub native_transport_active: bool,
    /// Bytes on disk of every live SSTable.
    pub load_bytes: u64,
    pub uncompressed_load_bytes: u64,
    pub generation: u64,
    pub uptime_seconds: u64,
    /// Resident memory of the process and memory of the machine, in bytes.
    pub memory_used_bytes: u64,
    pub memory_total_bytes: u64,
    /// The node's tokens, ascending.
    pub tokens: Vec<String>,
    /// Effective ownership (0.0..=1.0) when every user keyspace replicates alike, else `null`
    /// and a note saying why.
    pub effective_ownership: Option<f64>,
    pub ownership_note: Option<String>,
    /// The key cache's figures.
    #[serde(default)]
    pub key_cache: CacheFigures,
    /// The chunk cache's figures, `null` when it is disabled.
    #[serde(default)]
    pub chunk_cache: Option<CacheFigures>,
}

/// `GET /v1/binary`, and the answer of `POST /v1/binary/enable` and `/disable`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct BinaryStatus {
    pub running: bool,
}

/// One cache's size and effectiveness since the node started.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct CacheFigures {
    pub entries: u64,
    pub size_bytes: u64,
    pub capacity_bytes: u64,
    pub hits: u64,
    pub misses: u64,
    /// Mean time to load a missed entry in microseconds (`null` when not measured or no miss).
    pub miss_latency_micros: Option<f64>,
}

impl CacheFigures {
    pub fn requests(&self) -> u64 {
        self.hits + self.misses
    }

    /// Hits per request (NaN before the first request).
    pub fn hit_rate(&self) -> f64 {
        match self.requests() {
            0 => f64::NAN,
            requests => self.hits as f64 / requests as f64,
        }
    }
}

/// `GET /v1/cluster`: `nodetool describecluster`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClusterInfo {
    pub name: String,
    pub snitch: String,
    pub partitioner: String,
    pub schema_version: String,
    pub address: String,
    pub storage_port: u16,
    pub data_center: String,
    pub release_version: String,
    pub keyspaces: Vec<KeyspaceReplication>,
}

/// A keyspace's replication, as `describecluster` lists it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KeyspaceReplication {
    pub name: String,
    /// Short class name, e.g. `SimpleStrategy`.
    pub class: String,
    /// Options other than `class`, sorted by name.
    pub options: Vec<(String, String)>,
}

/// `GET /v1/version`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Version {
    pub release_version: String,
}

/// Which tables a command applies to: every table, one keyspace's, or some of a keyspace.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TableSelection {
    #[serde(default)]
    pub keyspace: Option<String>,
    #[serde(default)]
    pub tables: Vec<String>,
}

/// `POST /v1/autocompaction`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AutocompactionRequest {
    #[serde(flatten)]
    pub selection: TableSelection,
    pub enabled: bool,
}

/// `POST /v1/garbagecollect`: `nodetool garbagecollect [-g ROW|CELL] [-j jobs]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GarbageCollectRequest {
    #[serde(flatten)]
    pub selection: TableSelection,
    /// `ROW` (the default) or `CELL`.
    #[serde(default)]
    pub granularity: Option<String>,
    /// SSTables collected at once (Cassandra's `-j`); Helenus rewrites one at a time.
    #[serde(default)]
    pub jobs: Option<u32>,
}

/// `POST /v1/scrub`: `nodetool scrub`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ScrubRequest {
    #[serde(flatten)]
    pub selection: TableSelection,
    /// Skip the `pre-scrub-<ms>` snapshot Cassandra takes first (`--no-snapshot`).
    #[serde(default)]
    pub no_snapshot: bool,
}

/// What `POST /v1/scrub` did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ScrubDone {
    /// The snapshot taken first, if any.
    pub snapshot: Option<String>,
    pub tables: Vec<TableScrubbed>,
}

/// The scrub of one table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableScrubbed {
    /// `keyspace.table`.
    pub table: String,
    /// SSTables rewritten, and those skipped because a compaction held them.
    pub sstables: usize,
    pub skipped: usize,
    /// Partitions kept, and those dropped because they could not be read.
    pub partitions: u64,
    pub dropped_partitions: u64,
    /// Why partitions were dropped (the first problems, each naming its file and offset).
    pub problems: Vec<String>,
}

/// `POST /v1/cleanup`: `nodetool cleanup [-j jobs] [keyspace [tables]]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CleanupRequest {
    #[serde(flatten)]
    pub selection: TableSelection,
}

/// What `POST /v1/cleanup` did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CleanupDone {
    pub tables: Vec<TableCleaned>,
}

/// The cleanup of one table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableCleaned {
    /// `keyspace.table`.
    pub table: String,
    /// SSTables rewritten, and those skipped because a compaction held them.
    pub sstables: usize,
    pub skipped: usize,
    /// Partitions of the rewritten SSTables kept, and dropped as no longer owned.
    pub partitions_kept: u64,
    pub partitions_dropped: u64,
}

/// `POST /v1/decommission`: `nodetool decommission [--force]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DecommissionRequest {
    /// Leave even when a keyspace would keep fewer nodes than its replication factor.
    #[serde(default)]
    pub force: bool,
}

/// `POST /v1/removenode`: `nodetool removenode <host id> | status | force`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RemoveNodeRequest {
    /// A host id, or `status`, or `force`.
    pub host_id: String,
}

/// `nodetool removenode status`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RemovalStatus {
    /// `RemovalStatus: No removals in process.` or the removal under way.
    pub status: String,
}

/// `POST /v1/bootstrap/resume`: `nodetool bootstrap resume`; `resumed` is false when this
/// node has no failed bootstrap to resume (it is already bootstrapped).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BootstrapResumed {
    pub resumed: bool,
}

/// `GET /v1/operation_mode`: the node's mode in the ring.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OperationModeInfo {
    /// STARTING, JOINING, NORMAL, LEAVING or DECOMMISSIONED.
    pub mode: String,
}

/// `POST /v1/verify`: `nodetool verify`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifyRequest {
    #[serde(flatten)]
    pub selection: TableSelection,
    /// Also decode every partition (`--extended-verify`).
    #[serde(default)]
    pub extended: bool,
    /// Apply `disk_failure_policy` to a corrupt SSTable found (`--dfp`).
    #[serde(default)]
    pub disk_failure_policy: bool,
}

/// What `POST /v1/verify` found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VerifyDone {
    pub tables: Vec<TableVerified>,
}

/// The verify of one table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableVerified {
    /// `keyspace.table`.
    pub table: String,
    /// SSTables checked.
    pub sstables: usize,
    pub corrupt: Vec<CorruptFile>,
}

/// One corrupt SSTable: its Data file and the problems found.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CorruptFile {
    pub data_file: String,
    pub problems: Vec<String>,
}

/// The tables a command was applied to, as `keyspace.table`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TablesDone {
    pub tables: Vec<String>,
}

/// `GET /v1/tables`: statistics of every table (`nodetool tablestats`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableStats {
    pub keyspace: String,
    pub table: String,
    pub sstables: u64,
    pub sstables_per_level: Vec<u64>,
    pub max_sstable_bytes: u64,
    pub space_used_live: u64,
    pub space_used_total: u64,
    pub uncompressed_bytes: u64,
    pub partitions_estimate: u64,
    pub memtable_bytes: u64,
    pub memtable_switch_count: u64,
    pub pending_compactions: u64,
    pub local_read_count: u64,
    /// Mean latency in milliseconds; `null` before the first request.
    pub local_read_latency_ms: Option<f64>,
    pub local_read_total_micros: u64,
    pub local_range_read_count: u64,
    pub local_write_count: u64,
    pub local_write_latency_ms: Option<f64>,
    pub local_write_total_micros: u64,
    pub partition_bytes_min: u64,
    pub partition_bytes_max: u64,
    pub partition_bytes_mean: u64,
    /// Whether the table uses LeveledCompactionStrategy (nodetool then prints the levels).
    pub leveled: bool,
    pub sstable_bytes_per_level: Vec<u64>,
    pub bloom_filter_false_positives: u64,
    /// False positives over all positives of the live SSTables' filters (0 when none).
    pub bloom_filter_false_ratio: f64,
    pub bloom_filter_space_used: u64,
    /// Live rows and tombstones met per read since the table was opened: mean (`null`
    /// before the first read) and maximum.
    pub live_cells_per_slice_mean: Option<f64>,
    pub live_cells_per_slice_max: u64,
    pub tombstones_per_slice_mean: Option<f64>,
    pub tombstones_per_slice_max: u64,
    pub droppable_tombstone_ratio: f64,
    /// The share of the SSTables' uncompressed data repaired (100 when there is none), and the
    /// uncompressed bytes repaired, unrepaired and pending repair.
    #[serde(default)]
    pub percent_repaired: f64,
    #[serde(default)]
    pub bytes_repaired: u64,
    #[serde(default)]
    pub bytes_unrepaired: u64,
    #[serde(default)]
    pub bytes_pending_repair: u64,
    /// Reads failed by corrupt SSTable data since the table was opened (not printed by
    /// `tablestats`, whose layout is Cassandra's).
    #[serde(default)]
    pub corrupt_reads: u64,
}

/// `GET /v1/compactions`: `nodetool compactionstats`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CompactionStats {
    pub concurrent_compactors: u64,
    pub pending: Vec<PendingCompactions>,
    pub completed: u64,
    pub bytes_compacted: u64,
    /// Compactions completed per second since the node started.
    pub mean_rate_per_second: f64,
    /// Compactions completed per minute over the last 15 minutes.
    pub fifteen_minute_rate_per_minute: f64,
    /// Bytes per second; 0 means unthrottled.
    pub throughput_bytes_per_second: u64,
    pub active: Vec<ActiveCompaction>,
}

/// Background compactions due on one table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PendingCompactions {
    pub keyspace: String,
    pub table: String,
    pub tasks: u64,
}

/// A running compaction.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ActiveCompaction {
    pub id: String,
    /// Cassandra's operation type: `Compaction`, `Tombstone Compaction`, `Major Compaction`.
    pub kind: String,
    pub keyspace: String,
    pub table: String,
    pub completed: u64,
    pub total: u64,
    pub unit: String,
}

/// `GET /v1/compactions/history`: one finished compaction, newest first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CompactionHistoryEntry {
    pub id: String,
    pub keyspace: String,
    pub table: String,
    /// Milliseconds since the epoch.
    pub compacted_at_ms: i64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub sstables_in: u64,
    pub sstables_out: u64,
    pub partitions_out: u64,
    pub kind: String,
}

/// `GET|PUT /v1/settings/compaction_throughput`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CompactionThroughput {
    /// MiB per second; 0 means unthrottled.
    pub mib_per_second: u64,
}

/// `GET|PUT /v1/settings/concurrent_compactors`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ConcurrentCompactors {
    pub value: u64,
}

/// `GET|PUT /v1/settings/timeouts/{kind}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Timeout {
    pub millis: u64,
}

/// `GET /v1/tpstats`: one pool of work.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PoolStats {
    pub name: String,
    pub active: u64,
    pub pending: u64,
    pub completed: u64,
    pub blocked: u64,
    pub all_time_blocked: u64,
}

/// `GET /v1/tpstats/dropped`: internode messages of one verb received and dropped unstarted
/// (they expired before their handler could run).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DroppedMessages {
    /// The verb's name, Cassandra's where it has one (`MUTATION_REQ`).
    pub message_type: String,
    pub dropped: u64,
    /// How long the messages of this verb that ran waited for their handler after arriving.
    #[serde(default)]
    pub queue_wait_micros: QueueWaitMicros,
}

/// Percentiles of a verb's queue waits in microseconds (upper bounds of Cassandra's histogram
/// buckets); all 0 before the first message.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct QueueWaitMicros {
    pub p50: u64,
    pub p95: u64,
    pub p99: u64,
    pub max: u64,
}

/// `GET /v1/gcstats`: Helenus has no garbage collector; every figure is zero.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GcStats {
    /// Milliseconds since the previous call (or since start).
    pub interval_ms: u64,
    pub max_gc_elapsed_ms: u64,
    pub total_gc_elapsed_ms: u64,
    pub stdev_gc_elapsed_ms: u64,
    pub gc_reclaimed_mb: u64,
    pub collections: u64,
    /// -1: not tracked.
    pub direct_memory_bytes: i64,
    pub note: String,
}

/// The body of every error response.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ErrorBody {
    pub error: String,
}

/// `POST /v1/snapshots`: snapshot the tables of `keyspaces` (all keyspaces when empty).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SnapshotRequest {
    pub tag: String,
    #[serde(default)]
    pub keyspaces: Vec<String>,
}

/// `POST /v1/snapshots/clear`: removes snapshot `tag` (every snapshot when `null`) of the
/// tables of `keyspaces` (all keyspaces when empty).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ClearSnapshotRequest {
    #[serde(default)]
    pub tag: Option<String>,
    #[serde(default)]
    pub keyspaces: Vec<String>,
}

/// How many table snapshots `POST /v1/snapshots/clear` removed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SnapshotsCleared {
    pub cleared: u64,
}

/// `GET /v1/snapshots`: one snapshot of one table (`nodetool listsnapshots`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SnapshotEntry {
    pub tag: String,
    pub keyspace: String,
    pub table: String,
    /// Bytes only the snapshot holds (what clearing it frees).
    pub true_size: u64,
    pub size_on_disk: u64,
    /// ISO-8601 instant from the snapshot's manifest, when it has one.
    pub created_at: Option<String>,
    pub expires_at: Option<String>,
}

/// Percentiles of one histogram as `nodetool tablehistograms` prints them.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HistogramPercentiles {
    pub p50: f64,
    pub p75: f64,
    pub p95: f64,
    pub p98: f64,
    pub p99: f64,
    pub min: f64,
    pub max: f64,
}

/// One logger's level (`ROOT` is the default level).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LogLevel {
    pub logger: String,
    /// Logback's name: `ALL`, `TRACE`, `DEBUG`, `INFO`, `WARN`, `ERROR` or `OFF`.
    pub level: String,
}

/// `GET|PUT /v1/logging`: the levels in force, `ROOT` first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LogLevelsBody {
    pub levels: Vec<LogLevel>,
}

/// `PUT /v1/logging`: `nodetool setlogginglevel [logger [level]]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LogLevelRequest {
    #[serde(default)]
    pub logger: Option<String>,
    #[serde(default)]
    pub level: Option<String>,
}

/// `GET /v1/proxyhistograms`: `nodetool proxyhistograms`, client-request latencies.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ProxyHistograms {
    pub read_latency_micros: HistogramPercentiles,
    pub write_latency_micros: HistogramPercentiles,
    pub range_latency_micros: HistogramPercentiles,
    pub cas_read_latency_micros: HistogramPercentiles,
    pub cas_write_latency_micros: HistogramPercentiles,
    pub view_write_latency_micros: HistogramPercentiles,
}

/// `GET /v1/tables/{keyspace}/{table}/histograms`: `nodetool tablehistograms`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableHistograms {
    pub keyspace: String,
    pub table: String,
    /// Live SSTables of the table.
    pub sstables: u64,
    pub read_latency_micros: HistogramPercentiles,
    pub write_latency_micros: HistogramPercentiles,
    pub sstables_per_read: HistogramPercentiles,
    /// `null`: not tracked (nodetool prints `NaN`).
    pub partition_size_bytes: Option<HistogramPercentiles>,
    pub cell_count: Option<HistogramPercentiles>,
}

/// `GET /v1/ring` and `/v1/ring/<keyspace>`: every node that owns tokens, as this node sees it
/// (`nodetool status`, `ring`, `describecluster`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RingInfo {
    pub nodes: Vec<RingNode>,
    /// Whether `owns` is effective ownership (under a keyspace's replication) or primary.
    pub effective: bool,
    /// Why ownership is primary only, as Cassandra's note says it.
    pub ownership_note: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RingNode {
    pub address: String,
    pub storage_port: u16,
    pub host_id: String,
    pub data_center: String,
    pub rack: String,
    pub up: bool,
    /// Normal, Leaving, Joining or Moving.
    pub state: String,
    /// Bytes of live data on disk, when known (gossiped every minute by the others).
    pub load_bytes: Option<u64>,
    pub tokens: Vec<String>,
    pub owns: f64,
    /// The schema version the node last gossiped (this node's own for itself).
    pub schema_version: Option<String>,
    pub release_version: Option<String>,
}

/// `GET /v1/cms`: this node's view of the cluster metadata group (`nodetool cms`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CmsInfo {
    pub host_id: String,
    /// Leader, Follower, Candidate, Learner or Shutdown.
    pub role: String,
    pub leader: Option<String>,
    pub term: u64,
    pub epoch: u64,
    /// Voters and learners by internode address.
    pub voters: Vec<String>,
    pub learners: Vec<String>,
    pub last_log_index: Option<u64>,
    pub applied_index: Option<u64>,
    pub snapshot_index: Option<u64>,
}

/// `GET /v1/gossip`: each endpoint's gossip state (`nodetool gossipinfo`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GossipEndpoint {
    pub address: String,
    pub alive: bool,
    pub generation: u64,
    pub heartbeat: u64,
    pub state: Vec<(String, String)>,
}

/// `GET /v1/gossip/status`, `POST /v1/gossip/enable` and `/disable` (`nodetool statusgossip`,
/// `enablegossip`, `disablegossip`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GossipStatus {
    pub running: bool,
}

/// `POST /v1/endpoints`: which nodes hold a partition key (`nodetool getendpoints`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EndpointsRequest {
    pub keyspace: String,
    pub table: String,
    /// The key as text; the components of a composite key separated by `:`.
    pub key: String,
}

/// `GET /v1/describering/<keyspace>`: every token range and its replicas.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RingRanges {
    pub schema_version: String,
    pub ranges: Vec<RangeInfo>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RangeInfo {
    pub start_token: String,
    pub end_token: String,
    /// Replicas, primary first: address, data center, rack.
    pub endpoints: Vec<(String, String, String)>,
}

/// `GET /v1/hints` and the answer of the `/v1/hints/...` switches (`nodetool statushandoff`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct HintsStatus {
    /// New hints are stored (`enablehandoff` / `disablehandoff`).
    pub enabled: bool,
    /// Delivery is paused (`pausehandoff` / `resumehandoff`).
    pub paused: bool,
    /// Data centers whose nodes get no hints (`disablehintsfordc`).
    pub disabled_datacenters: Vec<String>,
}

/// `POST /v1/hints/datacenters/enable` and `/disable`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DatacenterRequest {
    pub datacenter: String,
}

/// `POST /v1/hints/truncate`: the hints of the node at `endpoint` (its address), or all.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct TruncateHintsRequest {
    #[serde(default)]
    pub endpoint: Option<String>,
}

/// One host with hints waiting on this node (`GET /v1/hints/pending`, `nodetool
/// listpendinghints`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct PendingHintsRow {
    pub host_id: String,
    /// Its internode address (`127.0.0.2:7000`); `null` when the cluster no longer knows it.
    pub address: Option<String>,
    pub rack: Option<String>,
    pub datacenter: Option<String>,
    /// `UP`, `DOWN`, or `Unknown`.
    pub status: String,
    pub files: usize,
    /// Milliseconds since the epoch: the newest and oldest file's (or buffered hint's) time.
    pub newest_ms: i64,
    pub oldest_ms: i64,
    pub total_bytes: u64,
}

/// `GET|PUT /v1/settings/stream_throughput`: the outbound stream throttles in bytes per
/// second (0: unthrottled); a PUT sets the ones it names.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct StreamThroughput {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bytes_per_second: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub entire_sstable_bytes_per_second: Option<u64>,
}

/// One stream session (`GET /v1/streams`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StreamSession {
    pub id: String,
    /// What it is for: "Rebuild", ...
    pub description: String,
    /// The peer's internode address.
    pub peer: String,
    /// "Receiving" or "Sending".
    pub direction: String,
    /// "preparing", "streaming", "complete" or "failed".
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub failure: Option<String>,
    pub files_total: u64,
    pub files_done: u64,
    pub bytes_total: u64,
    pub bytes_done: u64,
    /// Milliseconds since the epoch.
    pub started_ms: u64,
    pub elapsed_ms: u64,
}

/// `GET /v1/streams`: the node's mode and its stream sessions, running and recently ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Streams {
    pub mode: String,
    pub sessions: Vec<StreamSession>,
    /// Reads whose replicas disagreed, each repaired before it was answered.
    pub read_repairs: u64,
    /// Internode messages per connection class: Large, Small, Gossip (urgent).
    pub messages: Vec<MessagePool>,
}

/// One connection class's messages, summed over the peers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MessagePool {
    pub name: String,
    pub pending: u64,
    pub completed: u64,
    pub dropped: u64,
}

/// `POST /v1/rebuild`: stream every range this node replicates (of `keyspace`, or of every
/// user keyspace) from live replicas (in `source_dc` when given).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct RebuildRequest {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub source_dc: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub keyspace: Option<String>,
}

/// What a rebuild streamed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RebuildReport {
    pub plan_id: String,
    /// One per source node.
    pub sessions: usize,
    pub ranges: usize,
    pub files: u64,
    pub bytes: u64,
}

/// `POST /v1/repair`: a full repair of `keyspace` (every user keyspace when none) with
/// Cassandra's `nodetool repair` options.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct RepairRequest {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub keyspace: Option<String>,
    /// Tables of the keyspace (all when empty).
    #[serde(default)]
    pub tables: Vec<String>,
    /// `-full`: every replica's data compared, no repair state changed (incremental otherwise).
    #[serde(default)]
    pub full: bool,
    /// `-pr`: only the ranges this node is the primary replica of.
    #[serde(default)]
    pub primary_range: bool,
    /// `-st` and `-et`: only the part of this node's ranges in (start, end].
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub start_token: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub end_token: Option<i64>,
    /// `-dc`: replicas of these data centers only; `-local`: of this node's.
    #[serde(default)]
    pub data_centers: Vec<String>,
    #[serde(default)]
    pub local_dc: bool,
    /// `-hosts`: these replicas only (addresses; this node must be among them).
    #[serde(default)]
    pub hosts: Vec<String>,
    /// `-seq`: replicas build their trees one after the other.
    #[serde(default)]
    pub sequential: bool,
    /// `-j`: tables repaired at once (1 to 4).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub job_threads: Option<usize>,
    /// `--preview`: what a repair would stream (of the unrepaired data, or of everything with
    /// `-full`), nothing streamed.
    #[serde(default)]
    pub preview: bool,
    /// `--validate`: whether the repaired data agrees, nothing streamed.
    #[serde(default)]
    pub validate: bool,
}

/// What `nodetool repair` prints: each notice with its time, and whether every command
/// succeeded (the last error when not).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepairReport {
    pub notices: Vec<RepairNotice>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// The commands run, one per keyspace.
    pub repairs: Vec<RepairStatus>,
}

/// One notice: Cassandra's progress event type in lower case (start, progress, error,
/// success, complete, notification) and its message.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepairNotice {
    pub time_ms: u64,
    pub kind: String,
    pub message: String,
}

/// An incremental repair session this node takes part in (`GET /v1/repair_sessions`,
/// `nodetool repair_admin list`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepairSessionInfo {
    pub id: String,
    /// Cassandra's state names: PREPARED, REPAIRING, FINALIZED, FAILED.
    pub state: String,
    /// Milliseconds since the epoch.
    pub last_update_ms: u64,
    /// Internode addresses (`ip:port`).
    pub coordinator: String,
    pub participants: Vec<String>,
}

/// `POST /v1/repair_sessions/cancel`: `nodetool repair_admin cancel --session <id>`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RepairCancelRequest {
    pub session: String,
}

/// A repair command this node coordinates, running or finished (`GET /v1/repairs`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RepairStatus {
    pub command: u32,
    pub id: String,
    pub keyspace: String,
    pub tables: Vec<String>,
    /// running, success or failed.
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub failure: Option<String>,
    pub sessions_total: usize,
    pub sessions_done: usize,
    pub ranges: usize,
    pub ranges_out_of_sync: u64,
    pub bytes_streamed: u64,
    pub files_streamed: u64,
    pub partitions_validated: u64,
    pub started_ms: u64,
    pub elapsed_ms: u64,
}

/// `GET /v1/autorepair` (`nodetool autorepairstatus`): the repair scheduler on this node.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AutoRepairStatus {
    /// `auto_repair.enabled` in cassandra.yaml.
    pub enabled: bool,
    pub repair_check_interval_ms: u64,
    pub min_repair_interval_ms: u64,
    /// The range being repaired: `ks.table (left,right]`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub running: Option<String>,
    /// Why the scheduler held off at its last check.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub held_off: Option<String>,
    /// The last repair it ran that failed, with why.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub last_failure: Option<String>,
    pub tables: Vec<AutoRepairTable>,
}

/// One table the scheduler repairs on this node.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AutoRepairTable {
    pub keyspace: String,
    pub table: String,
    /// This node's primary ranges of the table, and how many of them were repaired.
    pub ranges: usize,
    pub repaired_ranges: usize,
    /// When every range had been repaired (the oldest of their repairs), ms since the epoch.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub last_full_repair_ms: Option<u64>,
    /// When its next range is due.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub next_due_ms: Option<u64>,
}

/// `POST /v1/autorepair/config` (`nodetool setautorepairconfig enabled true|false ks [tables]`):
/// turns the scheduler on or off for tables of a keyspace (all its tables when none named).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AutoRepairConfigRequest {
    pub enabled: bool,
    pub keyspace: String,
    #[serde(default)]
    pub tables: Vec<String>,
}
