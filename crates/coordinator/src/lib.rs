//! The storage proxy. Every read and write goes through here: it finds the replicas of a
//! token on the ring, checks the consistency level against the live replicas (answering
//! Unavailable as Cassandra does), and applies the operation. A single node is a one-member
//! ring whose only replica is local storage; remote replicas plug in here.
mod batchlog;
mod consistency;
mod counters;
mod failures;
mod gather;
mod messages;
pub mod metrics;
pub mod proxy_metrics;
mod range;
mod read;
mod remote;
mod replicas;
mod responses;
mod slow;
mod speculation;
mod timeouts;
mod topology;
pub mod trace;
mod verbs;
mod write;

use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mutation::{KeyRange, Mutation, Partition, PartitionKey, ReadFilter, ReadStats, TableId};
use net::Verb;
use ring::{Endpoint, ReplicationStrategy, Token};
use storage::{Storage, StorageError};
use types::{Consistency, CqlError, CqlResult};

pub use batchlog::{BatchGroups, BatchlogStats, StrategyLookup};
pub use consistency::{block_for, validate_for_read, validate_for_write};
use failures::Needed;
pub use failures::Replica;
pub use metrics::{Metrics, RequestKind};
pub use remote::{EpochSource, EpochWaiter, Remote};
pub use replicas::ReplicaPlan;
pub use responses::Requirement;
pub use slow::SlowQueries;
pub use speculation::{ReadPolicy, SpeculativeRetry};
pub use timeouts::{LiveTimeouts, TimeoutKind, Timeouts};
pub use topology::{Liveness, Topology};
pub use trace::{Trace, TraceEvent, TraceSink};

/// The storage port failure messages name until told otherwise (Cassandra's default).
const DEFAULT_STORAGE_PORT: u16 = 7000;

/// Routes reads and writes to replicas and enforces consistency levels.
pub struct Coordinator {
    storage: Arc<Storage>,
    topology: Arc<Topology>,
    local: Endpoint,
    /// This node as failure messages name it.
    replica: Replica,
    timeouts: LiveTimeouts,
    metrics: Metrics,
    slow: Arc<SlowQueries>,
    attached: Arc<remote::Attachments>,
    batchlog: batchlog::Batchlog,
}

impl Coordinator {
    /// A coordinator for a ring that so far holds only this node.
    pub fn new(storage: Arc<Storage>, local: Endpoint, timeouts: Timeouts) -> Coordinator {
        Coordinator {
            storage,
            topology: Arc::new(Topology::new(local.clone())),
            replica: Replica {
                address: local.addr,
                storage_port: DEFAULT_STORAGE_PORT,
            },
            local,
            timeouts: LiveTimeouts::new(timeouts),
            metrics: Metrics::default(),
            slow: Arc::new(SlowQueries::default()),
            attached: Arc::default(),
            batchlog: batchlog::Batchlog::default(),
        }
    }

    /// The coordinator naming this node `/address:storage_port` in failure messages.
    pub fn with_storage_port(mut self, storage_port: u16) -> Coordinator {
        self.replica.storage_port = storage_port;
        self
    }

    /// Lets requests reach other nodes; a node attaches it once, when its cluster services run.
    pub fn attach_remote(&self, remote: Remote) {
        let replica = verbs::Replica {
            storage: self.storage.clone(),
            await_epoch: remote.await_epoch.clone(),
            leader: self.leader(),
            attached: self.attached.clone(),
        };
        verbs::register(&remote.messaging, replica);
        if self.attached.remote.set(remote).is_err() {
            tracing::warn!("internode messaging was attached to the coordinator twice");
        }
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

    /// ReadTimeout when a local read started at `started` outlasted its timeout (`read` or
    /// `range`): the read runs to its end, then its answer counts as a replica's response that
    /// came too late, as Cassandra's coordinator gives up on replicas after the timeout.
    fn in_time(
        &self,
        kind: TimeoutKind,
        started: Instant,
        strategy: &ReplicationStrategy,
        cl: Consistency,
    ) -> CqlResult<()> {
        if started.elapsed() <= self.timeouts.get(kind) {
            return Ok(());
        }
        Err(CqlError::ReadTimeout {
            message: "Operation timed out - received only 0 responses.".into(),
            consistency: cl,
            received: 0,
            block_for: block_for(strategy, cl, &self.local.datacenter),
            data_present: false,
        })
    }

    /// Writes mutations, each independently (an unlogged batch or a single statement).
    pub async fn write(
        &self,
        strategy: &ReplicationStrategy,
        mutations: Vec<Mutation>,
        cl: Consistency,
        trace: Option<&Trace>,
    ) -> CqlResult<()> {
        let write_type = match mutations.len() {
            0 => return Ok(()),
            1 => "SIMPLE",
            _ => "UNLOGGED_BATCH",
        };
        self.write_as(strategy, mutations, cl, write_type, trace)
            .await
    }

    /// Checks the consistency level against the live replicas, then applies the mutations.
    async fn write_as(
        &self,
        strategy: &ReplicationStrategy,
        mutations: Vec<Mutation>,
        cl: Consistency,
        write_type: &'static str,
        trace: Option<&Trace>,
    ) -> CqlResult<()> {
        let started = Instant::now();
        let written = self
            .deliver(strategy, mutations, cl, write_type, trace)
            .await;
        self.counted(RequestKind::Write, cl, started, written)
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

    /// `write_as` without the counting.
    async fn deliver(
        &self,
        strategy: &ReplicationStrategy,
        mutations: Vec<Mutation>,
        cl: Consistency,
        write_type: &'static str,
        trace: Option<&Trace>,
    ) -> CqlResult<()> {
        validate_for_write(cl)?;
        trace::trace(trace, || "Determining replicas for mutation".into());
        let fanout = self.fanout(strategy, mutations, cl, write_type);
        if let [plan] = fanout.plans.as_slice() {
            self.metrics
                .proxy()
                .count_routing(plan.includes(self.local.addr));
        }
        fanout.check_available()?;
        self.apply_fanout(fanout, trace).await
    }

    /// Applies a write whose replicas are known: as one local commit-log record when this
    /// node is their only replica, else through the replicas. Records the request.
    async fn apply_fanout(&self, fanout: write::Fanout, trace: Option<&Trace>) -> CqlResult<()> {
        let (cl, write_type) = (fanout.cl, fanout.write_type);
        let tables: Vec<TableId> = fanout.mutations.iter().map(|m| m.table).collect();
        let started = Instant::now();
        if fanout.plans.iter().all(|p| p.only_local(&self.local)) {
            let block_for = fanout.requirement.block_for();
            let mutations = Arc::try_unwrap(fanout.mutations).unwrap_or_else(|m| (*m).clone());
            let timeout = self.timeouts.get(TimeoutKind::Write);
            trace::trace(trace, || "Appending to commitlog".into());
            let write = self.storage.apply_batch(mutations);
            let needed = Needed::new(cl, block_for);
            bounded(write, timeout, &self.replica, needed, write_type).await?;
        } else {
            let targets = fanout.plans.iter().flat_map(|p| &p.live);
            let port = self.replica.storage_port;
            trace::sending(trace, Verb::Mutation, self.local.addr, port, targets);
            let senders = write::Senders {
                session: trace.map(Trace::session),
                ..self.senders(TimeoutKind::Write)
            };
            write::send(fanout, senders).await?;
        }
        self.record(RequestKind::Write, cl, &tables, started);
        Ok(())
    }

    /// The replicas of each mutation, ready to send.
    fn fanout(
        &self,
        strategy: &ReplicationStrategy,
        mutations: Vec<Mutation>,
        cl: Consistency,
        write_type: &'static str,
    ) -> write::Fanout {
        let reachable = self.attached.remote.get().is_some();
        let plans: Vec<ReplicaPlan> = mutations
            .iter()
            .map(|m| ReplicaPlan::for_write(&self.topology, strategy, m.key.token, reachable))
            .collect();
        let requirement = Requirement::new(strategy, cl, &self.local.datacenter);
        let requirements = plans
            .iter()
            .map(|p| requirement.with_pending(&p.pending))
            .collect();
        write::Fanout {
            mutations: Arc::new(mutations),
            plans,
            requirement,
            requirements,
            cl,
            write_type,
            local: self.local.addr,
        }
    }

    /// Whether this node alone answers at the level for replicas `live`.
    fn is_only_contact(&self, requirement: &Requirement, live: &[ring::Endpoint]) -> bool {
        read::only_contact(requirement, live, self.local.addr)
    }

    /// What asks replicas for a read of tracing session `trace`, waiting at most the `kind`
    /// timeout.
    fn readers(&self, kind: TimeoutKind, trace: Option<&Trace>) -> read::Readers {
        let remote = self.attached.remote.get();
        read::Readers {
            storage: self.storage.clone(),
            messaging: remote.map(|r| r.messaging.clone()),
            storage_port: self.replica.storage_port,
            epoch: remote.map_or(0, |r| (r.epoch)()),
            session: trace.map(Trace::session),
            local: self.local.addr,
            timeout: self.timeouts.get(kind),
            write_timeout: self.timeouts.get(TimeoutKind::Write),
            metrics: self.metrics.proxy().clone(),
            read_repair: true,
        }
    }

    /// What sends a request's messages, waiting at most the `kind` timeout.
    fn senders(&self, kind: TimeoutKind) -> write::Senders {
        let timeout = self.timeouts.get(kind);
        let (storage, metrics) = (self.storage.clone(), self.metrics.proxy().clone());
        self.attached
            .senders(storage, self.replica.storage_port, timeout, metrics)
    }

    /// Reads one partition, adding what the read did to `stats`.
    #[allow(clippy::too_many_arguments)]
    pub async fn read(
        &self,
        strategy: &ReplicationStrategy,
        table: TableId,
        key: &PartitionKey,
        filter: &ReadFilter,
        cl: Consistency,
        now: i32,
        stats: &mut ReadStats,
        trace: Option<&Trace>,
        policy: &ReadPolicy,
    ) -> CqlResult<Option<Partition>> {
        let begun = Instant::now();
        let read = async {
            validate_for_read(cl)?;
            let reachable = self.attached.remote.get().is_some();
            let mut replicas = ReplicaPlan::new(&self.topology, strategy, key.token, reachable);
            let proxy = self.metrics.proxy();
            proxy.count_routing(replicas.includes(self.local.addr));
            let requirement = Requirement::new(strategy, cl, &self.local.datacenter);
            unavailable(&requirement, &replicas, cl)?;
            let started = Instant::now();
            // A local read runs to its end; past the timeout it then answers ReadTimeout.
            let (partition, late) = if self.is_only_contact(&requirement, &replicas.live) {
                trace::trace(trace, || "Acquiring sstable references".into());
                let (partition, read) = self
                    .storage
                    .read_with_stats(table, key, filter, now)
                    .map_err(|e| self.read_error(e, strategy, cl))?;
                if let Some(t) = trace {
                    trace::partition_read(t, &read, self.sstable_count(table));
                }
                stats.add(read);
                (
                    partition,
                    self.in_time(TimeoutKind::Read, started, strategy, cl),
                )
            } else {
                replicas.prefer_fast(&self.local, |addr| proxy.score_class(addr));
                let (contacts, spares) = read::contacts(&requirement, &replicas.live);
                let (local, port) = (self.local.addr, self.replica.storage_port);
                trace::sending(trace, Verb::Read, local, port, contacts.iter());
                let plan = read::ReadPlan {
                    table,
                    key,
                    cl,
                    block_for: requirement.block_for(),
                    contacts,
                    spares,
                    speculate_after: policy
                        .speculative_retry
                        .delay(&self.metrics.table(table).reads.snapshot()),
                };
                let readers = read::Readers {
                    read_repair: policy.read_repair,
                    ..self.readers(TimeoutKind::Read, trace)
                };
                (
                    read::read(&readers, plan, filter, now, stats).await?,
                    Ok(()),
                )
            };
            self.slow.check(started.elapsed(), || {
                self.describe_read(table, Some(key), usize::MAX)
            });
            late?;
            self.record(RequestKind::Read, cl, &[table], started);
            Ok(partition)
        };
        self.counted(RequestKind::Read, cl, begun, read.await)
    }

    /// Reads up to `limit` partitions of a key range, in token order, adding what the scan
    /// did to `stats`.
    #[allow(clippy::too_many_arguments)]
    pub async fn scan(
        &self,
        strategy: &ReplicationStrategy,
        table: TableId,
        range: &KeyRange,
        filter: &ReadFilter,
        cl: Consistency,
        now: i32,
        limit: usize,
        stats: &mut ReadStats,
        trace: Option<&Trace>,
    ) -> CqlResult<Vec<Partition>> {
        let begun = Instant::now();
        let scan = async {
            validate_for_read(cl)?;
            let reachable = self.attached.remote.get().is_some();
            let requirement = Requirement::new(strategy, cl, &self.local.datacenter);
            let stretches =
                range::stretches(&self.topology, strategy, range, reachable, &requirement, cl)?;
            let started = Instant::now();
            if !stretches
                .iter()
                .all(|s| self.is_only_contact(&requirement, &s.live))
            {
                if trace.is_some() {
                    let contacted: Vec<ring::Endpoint> = stretches
                        .iter()
                        .flat_map(|s| read::contacts(&requirement, &s.live).0)
                        .collect();
                    let (local, port) = (self.local.addr, self.replica.storage_port);
                    trace::sending(trace, Verb::RangeRead, local, port, contacted.iter());
                }
                let plan = range::ScanPlan {
                    table,
                    cl,
                    requirement: &requirement,
                    stretches,
                    per_piece: range::per_piece(&self.storage, table, &self.topology, strategy),
                };
                let readers = self.readers(TimeoutKind::Range, trace);
                let found = range::scan(&readers, plan, filter, now, limit, stats).await?;
                self.slow
                    .check(started.elapsed(), || self.describe_read(table, None, limit));
                self.record(RequestKind::Range, cl, &[table], started);
                return Ok(found);
            }
            trace::trace(trace, || {
                let sstables = self.sstable_count(table);
                let range = trace::range_text(range);
                format!("Executing seq scan across {sstables} sstables for {range}")
            });
            let (partitions, read) = self
                .storage
                .scan_with_stats(table, range, filter, now, limit)
                .map_err(|e| self.read_error(e, strategy, cl))?;
            if let Some(t) = trace {
                trace::rows_read(t, &read);
            }
            stats.add(read);
            self.slow
                .check(started.elapsed(), || self.describe_read(table, None, limit));
            self.in_time(TimeoutKind::Range, started, strategy, cl)?;
            self.record(RequestKind::Range, cl, &[table], started);
            Ok(partitions)
        };
        self.counted(RequestKind::Range, cl, begun, scan.await)
    }
}

impl Coordinator {
    fn read_error(
        &self,
        error: StorageError,
        strategy: &ReplicationStrategy,
        cl: Consistency,
    ) -> CqlError {
        let block_for = block_for(strategy, cl, &self.local.datacenter);
        self.replica.read_error(error, Needed::new(cl, block_for))
    }
}

/// Unavailable when the live replicas cannot meet `requirement`.
fn unavailable(
    requirement: &Requirement,
    replicas: &ReplicaPlan,
    cl: Consistency,
) -> CqlResult<()> {
    match requirement.unavailable(&replicas.live) {
        None => Ok(()),
        Some((required, alive)) => Err(CqlError::Unavailable {
            message: format!("Cannot achieve consistency level {}", cl.name()),
            consistency: cl,
            required,
            alive,
        }),
    }
}

/// Runs a local write, answering WriteTimeout when it outlasts `timeout` and WriteFailure
/// when storage fails it. A write the commit log cannot take waits out the timeout and
/// answers WriteTimeout, as Cassandra's writes wait for a commit-log segment that does not
/// come (`commit_failure_policy: stop_commit` "lets writes collect").
async fn bounded<T>(
    write: impl Future<Output = storage::Result<T>>,
    timeout: Duration,
    replica: &Replica,
    needed: Needed,
    write_type: &str,
) -> CqlResult<T> {
    let deadline = tokio::time::Instant::now() + timeout;
    let timed_out = || CqlError::WriteTimeout {
        message: "Operation timed out - received only 0 responses.".into(),
        consistency: needed.consistency,
        received: 0,
        block_for: needed.block_for,
        write_type: write_type.into(),
    };
    match tokio::time::timeout_at(deadline, write).await {
        Ok(Err(StorageError::CommitLogUnavailable(_))) => {
            tokio::time::sleep_until(deadline).await;
            Err(timed_out())
        }
        Ok(result) => result.map_err(|e| replica.write_error(e, needed, write_type)),
        Err(_) => Err(timed_out()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const REPLICA: Replica = Replica {
        address: IpAddr::V4(Ipv4Addr::LOCALHOST),
        storage_port: DEFAULT_STORAGE_PORT,
    };
    const ONE: Needed = Needed {
        consistency: Consistency::One,
        block_for: 1,
    };

    #[tokio::test]
    async fn slow_writes_time_out_with_cassandras_error() {
        let never = std::future::pending::<storage::Result<()>>();
        let err = bounded(never, Duration::from_millis(10), &REPLICA, ONE, "SIMPLE")
            .await
            .unwrap_err();
        match err {
            CqlError::WriteTimeout {
                block_for,
                write_type,
                received,
                ..
            } => {
                assert_eq!((block_for, received, write_type.as_str()), (1, 0, "SIMPLE"));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[tokio::test]
    async fn writes_the_commit_log_cannot_take_wait_out_the_timeout() {
        let refused = async { Err::<(), _>(StorageError::CommitLogUnavailable("stopped".into())) };
        let started = Instant::now();
        let err = bounded(refused, Duration::from_millis(50), &REPLICA, ONE, "SIMPLE")
            .await
            .unwrap_err();
        assert!(matches!(err, CqlError::WriteTimeout { .. }), "{err:?}");
        assert!(started.elapsed() >= Duration::from_millis(50));
    }

    #[tokio::test]
    async fn fast_writes_pass_through() {
        let done = async { Ok(()) };
        assert!(
            bounded(done, Duration::from_secs(1), &REPLICA, ONE, "SIMPLE")
                .await
                .is_ok()
        );
    }
}
