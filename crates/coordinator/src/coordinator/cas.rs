//! Lightweight transactions on the coordinator side (Cassandra's `StorageProxy.cas` and
//! `readWithPaxos`, Paxos v2): [`Coordinator::cas`] runs a compare-and-set on one partition
//! and [`Coordinator::serial_read`] a linearizable read, each as a Paxos round among the
//! partition's replicas (natural and pending; only the local datacenter's for LOCAL_SERIAL)
//! driven by the node's proposer (`crate::paxos`).
//!
//! For the query layer: `condition` is called with the partition as a quorum holds it (the
//! rows `filter` selects, live at `scope.now`) and the write timestamp (µs, the ballot's) that
//! every cell of the mutation it returns must carry; it may be called more than once (each
//! time a round is lost to contention and retried), and only the last call's mutation counts.
//! The mutation must be of `scope.table` and `key`.
//!
//! Errors as Cassandra 5.0 answers them: Unavailable (at the serial consistency) when fewer
//! than a quorum of the electorate is alive; WriteTimeout with write type CAS at the serial
//! consistency when a round does not complete (contention past `cas_contention_timeout`, or
//! replicas silent); CasWriteUnknown (CAS_WRITE_UNKNOWN, a WriteTimeout CAS before protocol
//! v5) when the operation's own proposal may have been accepted and may yet be completed;
//! ReadTimeout for a SERIAL read; WriteFailure/ReadFailure when replicas failed.
//! The commit waits for a quorum of the electorate whatever the request's consistency
//! (docs/differences.md).
use tokio::time::Instant;

use mutation::{Mutation, Partition, PartitionKey, ReadFilter, TableId};
use paxos::{Metrics as PaxosMetrics, Outcome, PaxosError};
use types::{Consistency, CqlError, CqlResult};

use super::Coordinator;
use crate::paxos::remote::{traced, PaxosService};
use crate::paxos::{LwtKey, LwtQuery};
use crate::proxy_metrics::RequestKind;
use crate::trace::{self, Trace};

/// What a compare-and-set or a SERIAL read runs under.
pub struct CasScope<'a> {
    pub keyspace: &'a str,
    pub table: TableId,
    /// SERIAL or LOCAL_SERIAL (the protocol's serial consistency; SERIAL when absent).
    pub serial: Consistency,
    /// The request's consistency, for the commit (Cassandra: ANY allowed for the commit).
    pub commit: Consistency,
    /// Seconds, for expiring cells when reading.
    pub now: i32,
    pub trace: Option<&'a Trace>,
}

/// How a compare-and-set ended.
#[derive(Clone, Debug, PartialEq)]
pub enum CasOutcome {
    Applied,
    /// The condition did not hold: the partition as read (the rows `filter` selects).
    NotApplied(Option<Partition>),
}

impl Coordinator {
    /// A compare-and-set on partition `key` of `scope.table`: `condition` sees the current
    /// partition (rows selected by `filter`) and the write timestamp (µs, the ballot's) every
    /// cell of the returned mutation must carry; it returns the mutation, or None when the
    /// condition does not hold.
    pub async fn cas<F>(
        &self,
        scope: &CasScope<'_>,
        key: &PartitionKey,
        filter: &ReadFilter,
        mut condition: F,
    ) -> CqlResult<CasOutcome>
    where
        F: FnMut(Option<&Partition>, i64) -> Option<Mutation> + Send,
    {
        let started = Instant::now();
        let result = async {
            let service = self.paxos_service(scope.serial)?;
            let proposer = service.proposer(scope.serial);
            let (lwt_key, query) = lwt(scope, key, filter);
            trace::trace(scope.trace, || {
                "Reading existing values for CAS precondition".into()
            });
            let cas = proposer.cas(&lwt_key, &query, |current, ballot| {
                let update = condition(current.as_ref(), ballot.micros as i64);
                trace::trace(scope.trace, || match &update {
                    Some(_) => "CAS precondition is met; proposing client-requested updates".into(),
                    None => "CAS precondition does not match current values".into(),
                });
                update
            });
            // Boxed (and the SERIAL read below): the proposer's future is kilobytes,
            // and inline it would widen the future of every request, which the transport
            // copies into each request's allocation (bench/ab, issue 28).
            let outcome = Box::pin(traced(session(scope), cas)).await;
            trace_outcome(scope.trace, proposer.metrics(), &outcome);
            match outcome {
                Ok(Outcome::Applied) => Ok(CasOutcome::Applied),
                Ok(Outcome::NotApplied(current)) => Ok(CasOutcome::NotApplied(current)),
                Err(e) => Err(write_error(e, scope.serial)),
            }
        }
        .await;
        self.finish(RequestKind::CasWrite, scope, started, result)
    }

    /// A linearizable read (SELECT at SERIAL / LOCAL_SERIAL): completes an in-progress
    /// proposal first.
    pub async fn serial_read(
        &self,
        scope: &CasScope<'_>,
        key: &PartitionKey,
        filter: &ReadFilter,
    ) -> CqlResult<Option<Partition>> {
        let started = Instant::now();
        let result = async {
            let service = self.paxos_service(scope.serial)?;
            let proposer = service.proposer(scope.serial);
            let (lwt_key, query) = lwt(scope, key, filter);
            trace::trace(scope.trace, || "Reading with SERIAL consistency".into());
            let read = Box::pin(traced(session(scope), proposer.read(&lwt_key, &query))).await;
            trace::trace(scope.trace, || match &read {
                Ok(_) => "SERIAL read done".into(),
                Err(e) => format!("SERIAL read failed: {e}"),
            });
            read.map_err(|e| read_error(e, scope.serial))
        }
        .await;
        self.finish(RequestKind::CasRead, scope, started, result)
    }

    /// What this node's proposers did since it started (SERIAL and LOCAL_SERIAL together),
    /// by event, as Cassandra's CASClientRequest metrics count: contention (rounds lost to
    /// another ballot), unfinished_commit (rounds of others completed first), and outcomes.
    pub fn paxos_counters(&self) -> Vec<(&'static str, u64)> {
        let Some(service) = self.paxos.service.get() else {
            return paxos_events(&PaxosMetrics::default(), &PaxosMetrics::default());
        };
        paxos_events(service.serial.metrics(), service.local_serial.metrics())
    }

    /// Purges the Paxos state of `table`'s partitions in `ranges` once a repair over
    /// `participants` (their addresses, this node among them) succeeded: every round at or
    /// before `repaired_micros` (the repair's start less `paxos_purge_grace_period`) that all
    /// of them hold committed (see `crate::paxos::cleanup`). How many replica states went.
    pub async fn purge_repaired_paxos(
        &self,
        table: TableId,
        ranges: &[mutation::TokenRange],
        participants: &[std::net::IpAddr],
        repaired_micros: i64,
    ) -> Result<usize, String> {
        let service = self.paxos.get().map_err(|e| e.to_string())?;
        let repaired = paxos::Ballot {
            micros: u64::try_from(repaired_micros).unwrap_or(0),
            counter: 0,
            node: 0,
        };
        service
            .purge_repaired(table, ranges, participants, repaired)
            .await
    }

    /// The node's Paxos service for an operation at `serial`.
    fn paxos_service(&self, serial: Consistency) -> CqlResult<std::sync::Arc<PaxosService>> {
        if !matches!(serial, Consistency::Serial | Consistency::LocalSerial) {
            return Err(CqlError::Invalid(format!(
                "Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL, got {serial:?}"
            )));
        }
        self.paxos
            .get()
            .map_err(|e| CqlError::Server(format!("Paxos state unavailable: {e}")))
    }

    /// Records the operation's latency (and its table's) or its failure.
    fn finish<T>(
        &self,
        kind: RequestKind,
        scope: &CasScope<'_>,
        started: Instant,
        result: CqlResult<T>,
    ) -> CqlResult<T> {
        if result.is_ok() {
            self.record(kind, scope.serial, &[scope.table], started);
        }
        self.counted(kind, scope.serial, started, result)
    }
}

impl PaxosService {
    fn proposer(
        &self,
        serial: Consistency,
    ) -> &paxos::Proposer<crate::paxos::Lwt, crate::paxos::remote::NodeReplicas, clock::SharedClock>
    {
        match serial {
            Consistency::LocalSerial => &self.local_serial,
            _ => &self.serial,
        }
    }
}

/// Each counter of `a` and `b` added, named.
fn paxos_events(a: &PaxosMetrics, b: &PaxosMetrics) -> Vec<(&'static str, u64)> {
    let sum = |of: fn(&PaxosMetrics) -> &std::sync::atomic::AtomicU64| {
        PaxosMetrics::get(of(a)) + PaxosMetrics::get(of(b))
    };
    vec![
        ("applied", sum(|m| &m.applied)),
        ("condition_not_met", sum(|m| &m.not_applied)),
        ("serial_reads", sum(|m| &m.reads)),
        ("contention", sum(|m| &m.contentions)),
        ("unfinished_commit", sum(|m| &m.repairs)),
        ("commit_refreshes", sum(|m| &m.commit_refreshes)),
        ("timeouts", sum(|m| &m.timeouts)),
        ("write_unknown", sum(|m| &m.write_unknown)),
        ("unavailables", sum(|m| &m.unavailables)),
        ("failures", sum(|m| &m.failures)),
    ]
}

/// The tracing session of a traced operation.
fn session(scope: &CasScope<'_>) -> Option<uuid::Uuid> {
    scope.trace.map(Trace::session)
}

fn lwt(scope: &CasScope<'_>, key: &PartitionKey, filter: &ReadFilter) -> (LwtKey, LwtQuery) {
    let lwt_key = LwtKey {
        table: scope.table,
        key: key.clone(),
    };
    let query = LwtQuery {
        key: key.clone(),
        filter: filter.clone(),
        now: scope.now,
    };
    (lwt_key, query)
}

fn trace_outcome<V>(
    trace: Option<&Trace>,
    metrics: &PaxosMetrics,
    outcome: &Result<Outcome<V>, PaxosError>,
) {
    trace::trace(trace, || {
        let contentions = PaxosMetrics::get(&metrics.contentions);
        match outcome {
            Ok(Outcome::Applied) => "CAS applied successfully".into(),
            Ok(Outcome::NotApplied(_)) => "CAS did not apply".into(),
            Err(e) => format!("CAS failed: {e} (contentions on this node: {contentions})"),
        }
    });
}

fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// A compare-and-set's error as Cassandra answers it.
fn write_error(error: PaxosError, serial: Consistency) -> CqlError {
    match error {
        PaxosError::Unavailable { required, alive } => unavailable(serial, required, alive),
        PaxosError::Timeout {
            received,
            required,
            write_unknown: true,
            ..
        } => CqlError::CasWriteUnknown {
            message: format!(
                "CAS operation result is unknown - proposal accepted by {received} but not a quorum."
            ),
            consistency: serial,
            received: count(received),
            block_for: count(required),
        },
        PaxosError::Timeout {
            received,
            required,
            contentions,
            ..
        } => CqlError::CasWriteTimeout {
            message: format!("CAS operation timed out - encountered contentions: {contentions}"),
            consistency: serial,
            received: count(received),
            block_for: count(required),
            contentions: u16::try_from(contentions).unwrap_or(u16::MAX),
        },
        PaxosError::Failure {
            received,
            required,
            failures,
            ..
        } => CqlError::WriteFailure {
            message: format!(
                "Operation failed - received {received} responses and {failures} failures"
            ),
            consistency: serial,
            received: count(received),
            block_for: count(required),
            failures: count(failures),
            write_type: "CAS".into(),
            reasons: Vec::new(),
        },
    }
}

/// A SERIAL read's error as Cassandra answers it.
fn read_error(error: PaxosError, serial: Consistency) -> CqlError {
    match error {
        PaxosError::Unavailable { required, alive } => unavailable(serial, required, alive),
        PaxosError::Timeout {
            received, required, ..
        } => CqlError::ReadTimeout {
            message: format!("Operation timed out - received only {received} responses."),
            consistency: serial,
            received: count(received),
            block_for: count(required),
            data_present: false,
        },
        PaxosError::Failure {
            received,
            required,
            failures,
            ..
        } => CqlError::ReadFailure {
            message: format!(
                "Operation failed - received {received} responses and {failures} failures"
            ),
            consistency: serial,
            received: count(received),
            block_for: count(required),
            failures: count(failures),
            data_present: false,
            reasons: Vec::new(),
        },
    }
}

fn unavailable(serial: Consistency, required: usize, alive: usize) -> CqlError {
    CqlError::Unavailable {
        message: format!("Cannot achieve consistency level {}", serial_name(serial)),
        consistency: serial,
        required: count(required),
        alive: count(alive),
    }
}

fn serial_name(serial: Consistency) -> &'static str {
    match serial {
        Consistency::LocalSerial => "LOCAL_SERIAL",
        _ => "SERIAL",
    }
}

#[cfg(test)]
mod tests;
