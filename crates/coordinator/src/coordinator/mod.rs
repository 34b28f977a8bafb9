//! The coordinator side: the paths a coordinator runs for its clients, one module each
//! (`write`, `read`, `range` with `gather` and `speculation`, `counters`, `batchlog`), on
//! the [`Coordinator`] this module holds, with each keyspace's replication strategy
//! (`strategies`).
pub(crate) mod batchlog;
pub(crate) mod cas;
pub(crate) mod counters;
mod gather;
mod range;
pub(crate) mod read;
pub(crate) mod speculation;
pub(crate) mod strategies;
mod write;

use std::net::IpAddr;
use std::sync::Arc;
use tokio::time::Instant;

use mutation::{PartitionKey, TableId};
use ring::{Endpoint, ReplicationStrategy, Token};
use schema::Schema;
use storage::Storage;
use types::{Consistency, CqlResult};

use crate::failures::Replica;
use crate::metrics::Metrics;
use crate::proxy_metrics::RequestKind;
use crate::remote::Attachments;
use crate::slow::SlowQueries;
use crate::timeouts::{LiveTimeouts, Timeouts};
use crate::topology::Topology;
use crate::trace::TraceSink;

/// The storage port failure messages name until told otherwise (Cassandra's default).
const DEFAULT_STORAGE_PORT: u16 = 7000;

/// Routes reads and writes to replicas and enforces consistency levels.
pub struct Coordinator {
    pub(crate) storage: Arc<Storage>,
    topology: Arc<Topology>,
    local: Endpoint,
    /// This node as failure messages name it.
    replica: Replica,
    timeouts: Arc<LiveTimeouts>,
    metrics: Metrics,
    slow: Arc<SlowQueries>,
    pub(crate) attached: Arc<Attachments>,
    strategies: Arc<strategies::Strategies>,
    batchlog: batchlog::state::Batchlog,
    /// Lightweight transactions: this node's Paxos, made at first use.
    pub(crate) paxos: Arc<crate::paxos::remote::PaxosCell>,
}

impl Coordinator {
    /// A coordinator for a ring that so far holds only this node.
    pub fn new(storage: Arc<Storage>, local: Endpoint, timeouts: Timeouts) -> Coordinator {
        let topology = Arc::new(Topology::new(local.clone()));
        let timeouts = Arc::new(LiveTimeouts::new(timeouts));
        let strategies = Arc::new(strategies::Strategies::default());
        let attached = Arc::new(Attachments::default());
        let paxos = Arc::new(crate::paxos::remote::PaxosCell {
            storage: storage.clone(),
            local_endpoint: local.clone(),
            topology: topology.clone(),
            strategies: strategies.clone(),
            attached: attached.clone(),
            timeouts: timeouts.clone(),
            service: Default::default(),
        });
        Coordinator {
            storage,
            topology,
            replica: Replica {
                address: local.addr,
                storage_port: DEFAULT_STORAGE_PORT,
            },
            local,
            timeouts,
            metrics: Metrics::default(),
            slow: Arc::new(SlowQueries::default()),
            attached,
            strategies,
            batchlog: batchlog::state::Batchlog::default(),
            paxos,
        }
    }

    /// The coordinator naming this node `/address:storage_port` in failure messages.
    pub fn with_storage_port(mut self, storage_port: u16) -> Coordinator {
        self.replica.storage_port = storage_port;
        self
    }

    /// Stores hints for replicas a write misses; attached once, when the hints service runs.
    pub fn attach_hints(&self, hints: Arc<hints::HintsService>) {
        if self.attached.hints.set(hints).is_err() {
            tracing::warn!("the hints service was attached to the coordinator twice");
        }
    }

    /// Writes the events this node traces as a replica of another node's tracing session;
    /// attached once, by the query layer (which owns `system_traces`).
    pub fn attach_trace_sink(&self, sink: Arc<dyn TraceSink>) {
        if self.attached.traces.set(sink).is_err() {
            tracing::warn!("a trace sink was attached to the coordinator twice");
        }
    }

    /// Replicates each keyspace as `schema` says from now on: the query layer installs each
    /// schema it takes, before serving requests with it. Until the first, every keyspace
    /// replicates as LocalStrategy and the batchlog is not replayed.
    pub fn install_schema(&self, schema: Arc<Schema>) {
        self.strategies.install(schema);
    }

    /// How `keyspace` replicates under the current schema.
    pub fn strategy(&self, keyspace: &str) -> Arc<ReplicationStrategy> {
        self.strategies.of_keyspace(keyspace)
    }

    /// The hints service, once attached.
    pub fn hints(&self) -> Option<&Arc<hints::HintsService>> {
        self.attached.hints.get()
    }

    /// The slow query log of local reads.
    pub fn slow_queries(&self) -> &Arc<SlowQueries> {
        &self.slow
    }

    /// `SELECT * FROM ks.table …` naming a slow read in the slow query log: the partition key
    /// as a blob for a single-partition read, the row limit for a range read.
    fn describe_read(&self, table: TableId, key: Option<&PartitionKey>, limit: usize) -> String {
        let name = self
            .storage
            .table_name(table)
            .map_or_else(|_| format!("{table:?}"), |(ks, t)| format!("{ks}.{t}"));
        let mut text = format!("SELECT * FROM {name}");
        if let Some(key) = key {
            let hex: String = key.key.iter().map(|b| format!("{b:02x}")).collect();
            text.push_str(&format!(" WHERE key = 0x{hex}"));
        }
        if limit < usize::MAX {
            text.push_str(&format!(" LIMIT {limit}"));
        }
        text
    }

    /// The request timeouts, changeable at run time.
    pub fn timeouts(&self) -> &LiveTimeouts {
        &self.timeouts
    }

    /// Request counters and latencies.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Records a finished client request and its local effect on `tables`.
    fn record(&self, kind: RequestKind, cl: Consistency, tables: &[TableId], started: Instant) {
        let elapsed = started.elapsed();
        self.metrics.record_request(kind, cl, elapsed);
        for &table in tables {
            self.metrics.record_table(table, kind, elapsed);
        }
    }

    pub fn local_address(&self) -> IpAddr {
        self.local.addr
    }

    /// The table's live SSTables, for trace events (0 when the table is gone).
    fn sstable_count(&self, table: TableId) -> usize {
        self.storage.table_stats(table).map_or(0, |s| s.sstables)
    }

    /// The ring and liveness of the cluster.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// Claims `tokens` for this node on the ring.
    pub fn set_local_tokens(&self, tokens: Vec<i64>) {
        self.topology.set_local_tokens(tokens);
    }

    /// The tokens this node owns on the ring.
    pub fn local_tokens(&self) -> Vec<Token> {
        self.topology.ring().tokens_of(self.local.addr)
    }

    /// Counts a failed request in the proxy's metrics; one that timed out, was unavailable or
    /// failed also counts in the request latencies, as Cassandra records every request's.
    fn counted<T>(
        &self,
        kind: RequestKind,
        cl: Consistency,
        started: Instant,
        result: CqlResult<T>,
    ) -> CqlResult<T> {
        if let Err(e) = &result {
            if self.metrics.proxy().record_error(kind, e) {
                self.metrics.record_request(kind, cl, started.elapsed());
            }
        }
        result
    }
}
