//! Writes to replicas: Cassandra's StorageProxy.mutate with its write response handlers. Each
//! mutation goes to every live replica of its token (this node's share applied locally, with
//! no network hop; each other replica gets its share in one message), and the client is
//! answered once every mutation has the answers its consistency level needs. Replicas that are
//! down get a hint at once; replicas that have not answered when the write timeout expires get
//! one then (the sends go on after the client has its answer).
use std::collections::BTreeMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use hints::HintsService;
use mutation::{Mutation, TableId};
use net::{Messaging, Verb};
use ring::{Endpoint, ReplicationStrategy};
use storage::{Storage, StorageError};
use tokio::sync::oneshot;
use types::{Consistency, CqlError, CqlResult};
use uuid::Uuid;

use super::Coordinator;
use crate::consistency::validate_for_write;
use crate::failures::{local_outcome, remote_outcome, Needed, Outcome, Replica};
use crate::messages::MutationRequest;
use crate::proxy_metrics::{ProxyMetrics, RequestKind};
use crate::remote::Attachments;
use crate::replicas::ReplicaPlan;
use crate::responses::{unavailable, Requirement, Tally};
use crate::timeouts::TimeoutKind;
use crate::trace::{self, Trace};

/// A replica and the mutations (indexes into the write's) it is sent.
pub(crate) struct Target {
    pub endpoint: Endpoint,
    pub mutations: Vec<usize>,
}

/// A write about to be sent.
pub(crate) struct Fanout {
    pub mutations: Arc<Vec<Mutation>>,
    pub plans: Vec<ReplicaPlan>,
    /// What the level needs of any token's replicas.
    pub requirement: Requirement,
    /// What it needs of each mutation's, counting its pending replicas.
    pub requirements: Vec<Requirement>,
    pub cl: Consistency,
    pub write_type: &'static str,
    pub local: IpAddr,
}

/// Where the sends go and how they are answered for.
pub(crate) struct Senders {
    pub storage: Arc<Storage>,
    pub messaging: Option<Arc<Messaging>>,
    pub storage_port: u16,
    pub epoch: u64,
    /// The tracing session the write belongs to, carried to the replicas.
    pub session: Option<Uuid>,
    pub hints: Option<Arc<HintsService>>,
    pub timeout: Duration,
    pub metrics: Arc<ProxyMetrics>,
}

impl Senders {
    /// What sends a write's messages through the services attached so far, waiting at most
    /// `timeout`.
    pub fn new(
        attached: &Attachments,
        storage: Arc<Storage>,
        storage_port: u16,
        timeout: Duration,
        metrics: Arc<ProxyMetrics>,
    ) -> Senders {
        let remote = attached.remote.get();
        Senders {
            storage,
            messaging: remote.map(|r| r.messaging.clone()),
            storage_port,
            epoch: remote.map_or(0, |r| (r.epoch)()),
            session: None,
            hints: attached.hints.get().cloned(),
            timeout,
            metrics,
        }
    }
}

impl Fanout {
    /// Unavailable when a mutation's live replicas cannot meet the level (ANY is met by a hint).
    pub fn check_available(&self) -> CqlResult<()> {
        if self.cl == Consistency::Any {
            return Ok(());
        }
        for (plan, requirement) in self.plans.iter().zip(&self.requirements) {
            unavailable(requirement, plan, self.cl)?;
        }
        Ok(())
    }

    /// The live replicas and the mutations each is sent, this node first.
    fn targets(&self) -> Vec<Target> {
        let mut by_addr: BTreeMap<IpAddr, Target> = BTreeMap::new();
        for (i, plan) in self.plans.iter().enumerate() {
            for endpoint in &plan.live {
                let target = by_addr.entry(endpoint.addr).or_insert_with(|| Target {
                    endpoint: endpoint.clone(),
                    mutations: Vec::new(),
                });
                target.mutations.push(i);
            }
        }
        let mut targets: Vec<Target> = by_addr.into_values().collect();
        targets.sort_by_key(|t| t.endpoint.addr != self.local);
        targets
    }
}

impl Coordinator {
    /// Writes mutations of `keyspace`, each independently (an unlogged batch or a single
    /// statement).
    pub async fn write(
        &self,
        keyspace: &str,
        mutations: Vec<Mutation>,
        cl: Consistency,
        trace: Option<&Trace>,
    ) -> CqlResult<()> {
        let write_type = match mutations.len() {
            0 => return Ok(()),
            1 => "SIMPLE",
            _ => "UNLOGGED_BATCH",
        };
        let strategy = self.strategy(keyspace);
        self.write_as(&strategy, mutations, cl, write_type, trace)
            .await
    }

    /// Checks the consistency level against the live replicas, then applies the mutations.
    pub(super) async fn write_as(
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

    /// `write_as` without the counting.
    pub(super) async fn deliver(
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
    pub(super) async fn apply_fanout(
        &self,
        fanout: Fanout,
        trace: Option<&Trace>,
    ) -> CqlResult<()> {
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
            let senders = Senders {
                session: trace.map(Trace::session),
                ..self.senders(TimeoutKind::Write)
            };
            send(fanout, senders).await?;
        }
        self.record(RequestKind::Write, cl, &tables, started);
        Ok(())
    }

    /// The replicas of each mutation, ready to send.
    pub(super) fn fanout(
        &self,
        strategy: &ReplicationStrategy,
        mutations: Vec<Mutation>,
        cl: Consistency,
        write_type: &'static str,
    ) -> Fanout {
        let reachable = self.attached.remote.get().is_some();
        let plans: Vec<ReplicaPlan> = mutations
            .iter()
            .map(|m| ReplicaPlan::for_write(&self.topology, strategy, m.key.token, reachable))
            .collect();
        let requirement = Requirement::new(strategy, cl, &self.local.datacenter);
        #[cfg(feature = "sim-faults")]
        let requirement = crate::faults::write_requirement(requirement);
        let requirements = plans
            .iter()
            .map(|p| requirement.with_pending(&p.pending))
            .collect();
        Fanout {
            mutations: Arc::new(mutations),
            plans,
            requirement,
            requirements,
            cl,
            write_type,
            local: self.local.addr,
        }
    }

    /// What sends a request's messages, waiting at most the `kind` timeout.
    pub(super) fn senders(&self, kind: TimeoutKind) -> Senders {
        let timeout = self.timeouts.get(kind);
        let (storage, metrics) = (self.storage.clone(), self.metrics.proxy().clone());
        let port = self.replica.storage_port;
        Senders::new(&self.attached, storage, port, timeout, metrics)
    }
}

/// Sends the write and answers once the level is met, a failure makes it unreachable, or the
/// timeout expires.
pub(crate) async fn send(fanout: Fanout, senders: Senders) -> CqlResult<()> {
    send_after(fanout, senders, None).await
}

/// [`send`] for mutations replica `applied` (a counter leader) has applied already: its write
/// counts as its answer and it is not sent to.
pub(crate) async fn send_after(
    fanout: Fanout,
    senders: Senders,
    applied: Option<IpAddr>,
) -> CqlResult<()> {
    let (answer, answered) = oneshot::channel();
    tokio::spawn(drive(fanout, senders, applied, answer));
    answered
        .await
        .unwrap_or_else(|_| Err(CqlError::Server("the write was abandoned".into())))
}

async fn drive(
    fanout: Fanout,
    senders: Senders,
    applied: Option<IpAddr>,
    answer: oneshot::Sender<CqlResult<()>>,
) {
    let deadline = Instant::now() + senders.timeout;
    let mut targets = fanout.targets();
    targets.retain(|t| Some(t.endpoint.addr) != applied);
    let mut tallies: Vec<Tally> = fanout
        .plans
        .iter()
        .zip(&fanout.requirements)
        .map(|(p, r)| {
            let mut tally = Tally::new(r, p.live.iter().map(|e| e.datacenter.as_ref()));
            let done = p.live.iter().filter(|e| Some(e.addr) == applied);
            done.for_each(|e| tally.ack(e.datacenter.as_ref()));
            tally
        })
        .collect();
    hint_dead(&fanout, &senders, &mut tallies);
    let mut sends: FuturesUnordered<BoxFuture<'static, (usize, Outcome)>> = targets
        .iter()
        .enumerate()
        .map(|(t, target)| send_one(t, target, &fanout, &senders))
        .collect();
    let mut outcomes = vec![None; targets.len()];
    let mut answer = Some(answer);
    loop {
        if let Some(verdict) = verdict(&fanout, &tallies) {
            if let Some(answer) = answer.take() {
                let _ = answer.send(verdict);
            }
        }
        // Biased: a reply that is in when the deadline passes counts, the same in every run.
        let next = tokio::select! {
            biased;
            next = sends.next() => next,
            _ = tokio::time::sleep_until(deadline) => None,
        };
        let Some((t, outcome)) = next else { break };
        outcomes[t] = Some(outcome);
        let dc = targets[t].endpoint.datacenter.as_ref();
        for &m in &targets[t].mutations {
            match outcome {
                Outcome::Applied => tallies[m].ack(dc),
                Outcome::Failed(code) => tallies[m].fail(dc, targets[t].endpoint.addr, code),
                Outcome::Silent => {}
            }
        }
    }
    if let Some(answer) = answer.take() {
        let _ = answer.send(Err(timed_out(&fanout, &tallies)));
    }
    hint_silent(&fanout, &senders, &targets, &outcomes);
}

/// The client's answer once it is known: met, or lost to failures.
fn verdict(fanout: &Fanout, tallies: &[Tally]) -> Option<CqlResult<()>> {
    if tallies.iter().all(Tally::is_met) {
        return Some(Ok(()));
    }
    let lost = tallies.iter().find(|t| t.is_lost() && t.failures() > 0)?;
    Some(Err(CqlError::WriteFailure {
        message: format!(
            "Operation failed - received {} responses and {} failures",
            lost.received(),
            lost.failures()
        ),
        consistency: fanout.cl,
        received: lost.received(),
        block_for: lost.block_for(),
        failures: lost.failures(),
        write_type: fanout.write_type.to_string(),
        reasons: lost.reasons().to_vec(),
    }))
}

/// WriteTimeout naming the mutation furthest from its level.
fn timed_out(fanout: &Fanout, tallies: &[Tally]) -> CqlError {
    let weakest = tallies
        .iter()
        .filter(|t| !t.is_met())
        .min_by_key(|t| t.received());
    let (received, block_for) = weakest.map_or((0, fanout.requirement.block_for()), |t| {
        (t.received(), t.block_for())
    });
    CqlError::WriteTimeout {
        message: format!("Operation timed out - received only {received} responses."),
        consistency: fanout.cl,
        received,
        block_for,
        write_type: fanout.write_type.to_string(),
    }
}

/// Applies or sends one replica's share.
fn send_one(
    t: usize,
    target: &Target,
    fanout: &Fanout,
    senders: &Senders,
) -> BoxFuture<'static, (usize, Outcome)> {
    let mutations = &fanout.mutations;
    if target.endpoint.addr == fanout.local {
        let mine: Vec<Mutation> = target
            .mutations
            .iter()
            .map(|&i| mutations[i].clone())
            .collect();
        let storage = senders.storage.clone();
        return Box::pin(async move { (t, local_outcome(storage.apply_batch(mine).await)) });
    }
    let Some(messaging) = senders.messaging.clone() else {
        return Box::pin(async move { (t, Outcome::Silent) });
    };
    let payload: Bytes = MutationRequest::encode(
        senders.epoch,
        senders.session,
        target.mutations.iter().map(|&i| &mutations[i]),
    );
    let to = std::net::SocketAddr::new(target.endpoint.addr, senders.storage_port);
    let timeout = senders.timeout;
    let replica = senders.metrics.replica(target.endpoint.addr);
    Box::pin(async move {
        let started = Instant::now();
        let answer = messaging
            .request(to, Verb::Mutation, payload, timeout)
            .await;
        replica.record(started.elapsed());
        (t, remote_outcome(answer))
    })
}

/// Hints every mutation for replicas already known to be down; with ANY a stored hint counts
/// as an answer.
fn hint_dead<'a>(fanout: &'a Fanout, senders: &Senders, tallies: &mut [Tally<'a>]) {
    for (i, plan) in fanout.plans.iter().enumerate() {
        for endpoint in &plan.dead {
            let stored = hint(senders, endpoint, &fanout.mutations[i]);
            if stored && fanout.cl == Consistency::Any {
                tallies[i].ack_extra(endpoint.datacenter.as_ref());
            }
        }
    }
}

/// Hints the mutations of replicas that did not answer in time.
fn hint_silent(
    fanout: &Fanout,
    senders: &Senders,
    targets: &[Target],
    outcomes: &[Option<Outcome>],
) {
    for (target, outcome) in targets.iter().zip(outcomes) {
        if matches!(outcome, Some(Outcome::Applied | Outcome::Failed(_))) {
            continue;
        }
        for &i in &target.mutations {
            hint(senders, &target.endpoint, &fanout.mutations[i]);
        }
    }
}

/// Stores a hint of `mutation` for `endpoint` when hinted handoff wants one.
fn hint(senders: &Senders, endpoint: &Endpoint, mutation: &Mutation) -> bool {
    let Some(hints) = &senders.hints else {
        return false;
    };
    let host_id = uuid::Uuid::from_bytes(endpoint.host_id);
    if !hints.should_hint(host_id, &endpoint.datacenter) {
        return false;
    }
    match hints.store(host_id, mutation) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!("no hint stored for {}: {e}", endpoint.addr);
            false
        }
    }
}

/// Runs a local write, answering WriteTimeout when it outlasts `timeout` and WriteFailure
/// when storage fails it. A write the commit log cannot take waits out the timeout and
/// answers WriteTimeout, as Cassandra's writes wait for a commit-log segment that does not
/// come (`commit_failure_policy: stop_commit` "lets writes collect").
pub(crate) async fn bounded<T>(
    write: impl Future<Output = storage::Result<T>>,
    timeout: Duration,
    replica: &Replica,
    needed: Needed,
    write_type: &str,
) -> CqlResult<T> {
    let deadline = Instant::now() + timeout;
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
        storage_port: 7000,
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
