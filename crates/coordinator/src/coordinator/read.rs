//! Single-partition reads from replicas, as Cassandra's coordinator reads: the closest replica
//! is asked for data and the others the level needs for digests of the same answer; when the
//! digests match the data is the answer, else every contacted replica is asked for its data,
//! the answers are reconciled by timestamp and tombstones, and the replicas that missed
//! something are repaired before the client is answered (blocking read repair: a repair not
//! applied in time makes the read time out, so QUORUM reads never go back in time). The read runs
//! in storage's rounds (a row limit asks for a bounded number of rows, then more after the
//! last complete row when tombstones hid too many), each round asked of the replicas.
//! A replica that fails or cannot be reached is replaced by a spare live replica, if any
//! (see `gather`).
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use mutation::rounds::{Round, Rounds};
use mutation::{Mutation, Partition, PartitionKey, ReadFilter, ReadStats, TableId};
use net::{Messaging, Verb};
use ring::{Endpoint, ReplicationStrategy};
use storage::{Storage, StorageError};
use tokio::time::Instant;
use types::{Consistency, CqlError, CqlResult};
use uuid::Uuid;

use super::gather::{self, gather, Answer, Failure, Shortfall, Speculation};
use super::speculation::ReadPolicy;
use super::Coordinator;
use crate::consistency::{block_for, validate_for_read};
use crate::failures::reason;
use crate::failures::Needed;
use crate::messages::{MutationRequest, ReadReply, ReadRequest};
use crate::proxy_metrics::{ProxyMetrics, RequestKind};
use crate::replicas::ReplicaPlan;
use crate::responses::{unavailable, Requirement};
use crate::timeouts::TimeoutKind;
use crate::trace::{self, Trace};

impl Coordinator {
    /// ReadTimeout when a local read started at `started` outlasted its timeout (`read` or
    /// `range`): the read runs to its end, then its answer counts as a replica's response that
    /// came too late, as Cassandra's coordinator gives up on replicas after the timeout.
    pub(super) fn in_time(
        &self,
        kind: TimeoutKind,
        started: tokio::time::Instant,
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

    /// Whether this node alone answers at the level for replicas `live`.
    pub(super) fn is_only_contact(
        &self,
        requirement: &Requirement,
        live: &[ring::Endpoint],
    ) -> bool {
        only_contact(requirement, live, self.local.addr)
    }

    /// What asks replicas for a read of tracing session `trace`, waiting at most the `kind`
    /// timeout.
    pub(super) fn readers(&self, kind: TimeoutKind, trace: Option<&Trace>) -> Readers {
        let remote = self.attached.remote.get();
        Readers {
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

    /// Reads one partition, adding what the read did to `stats`.
    pub async fn read(
        &self,
        scope: &ReadScope<'_>,
        key: &PartitionKey,
        filter: &ReadFilter,
        stats: &mut ReadStats,
    ) -> CqlResult<Option<Partition>> {
        let ReadScope {
            table,
            cl,
            now,
            trace,
            policy,
            ..
        } = *scope;
        let strategy = &*self.strategy(scope.keyspace);
        let begun = tokio::time::Instant::now();
        let read = async {
            validate_for_read(cl)?;
            let reachable = self.attached.remote.get().is_some();
            let mut replicas = ReplicaPlan::new(&self.topology, strategy, key.token, reachable);
            let proxy = self.metrics.proxy();
            proxy.count_routing(replicas.includes(self.local.addr));
            let requirement = Requirement::new(strategy, cl, &self.local.datacenter);
            unavailable(&requirement, &replicas, cl)?;
            let started = tokio::time::Instant::now();
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
                let (contacts, spares) = contacts(&requirement, &replicas.live);
                let (local, port) = (self.local.addr, self.replica.storage_port);
                trace::sending(trace, Verb::Read, local, port, contacts.iter());
                let plan = ReadPlan {
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
                let readers = Readers {
                    read_repair: policy.read_repair,
                    ..self.readers(TimeoutKind::Read, trace)
                };
                (read(&readers, plan, filter, now, stats).await?, Ok(()))
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

    /// The client's error for a local read storage failed.
    pub(super) fn read_error(
        &self,
        error: StorageError,
        strategy: &ReplicationStrategy,
        cl: Consistency,
    ) -> CqlError {
        let block_for = block_for(strategy, cl, &self.local.datacenter);
        self.replica.read_error(error, Needed::new(cl, block_for))
    }
}

/// What every read of one request shares: where the table lives, how consistent, when,
/// traced, with the table's read policy.
#[derive(Clone, Copy)]
pub struct ReadScope<'a> {
    pub keyspace: &'a str,
    pub table: TableId,
    pub cl: Consistency,
    pub now: i32,
    pub trace: Option<&'a Trace>,
    /// The table's speculative retry and read repair (single-partition reads only).
    pub policy: &'a ReadPolicy,
}

/// One single-partition read as sent to replicas.
pub(crate) struct ReadPlan<'a> {
    pub table: TableId,
    pub key: &'a PartitionKey,
    pub cl: Consistency,
    pub block_for: i32,
    /// The replicas asked first, closest first (the first gives data).
    pub contacts: Vec<Endpoint>,
    /// Live replicas that replace a contact that fails, or one too slow.
    pub spares: Vec<Endpoint>,
    /// How long to wait for the contacts before asking a spare (speculative_retry).
    pub speculate_after: Option<Duration>,
}

/// How a read reaches replicas.
pub(crate) struct Readers {
    pub storage: Arc<Storage>,
    pub messaging: Option<Arc<Messaging>>,
    pub storage_port: u16,
    pub epoch: u64,
    /// The tracing session the request belongs to, carried to the replicas asked.
    pub session: Option<Uuid>,
    pub local: IpAddr,
    pub timeout: Duration,
    pub write_timeout: Duration,
    pub metrics: Arc<ProxyMetrics>,
    /// Whether replicas found stale are repaired (the table's `read_repair`).
    pub read_repair: bool,
}

/// What each live replica (closest first) is to a read at `requirement`: a contact the level
/// needs, a spare that may replace one, or neither (outside the level's datacenters).
fn roles<'a>(
    requirement: &'a Requirement,
    live: &'a [Endpoint],
) -> impl Iterator<Item = (&'a Endpoint, Role)> + 'a {
    // Contacts taken per datacenter, kept only for EACH_QUORUM (the map allocates).
    let mut taken: std::collections::BTreeMap<&str, i32> = Default::default();
    let mut total = 0;
    live.iter().map(move |endpoint| {
        let dc = endpoint.datacenter.as_ref();
        let (wanted, usable) = match requirement {
            Requirement::Total(n) => (total < *n, true),
            Requirement::InDatacenter { dc: local, n } => {
                let here = dc == &**local;
                (here && total < *n, here)
            }
            Requirement::EachDatacenter(each) => match each.get(dc) {
                Some(n) => {
                    let count = taken.entry(dc).or_insert(0);
                    let wanted = *count < *n;
                    *count += i32::from(wanted);
                    (wanted, true)
                }
                None => (false, false),
            },
        };
        total += i32::from(wanted);
        let role = match (wanted, usable) {
            (true, _) => Role::Contact,
            (false, true) => Role::Spare,
            (false, false) => Role::Unused,
        };
        (endpoint, role)
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Contact,
    Spare,
    Unused,
}

/// Splits live replicas (closest first) into the contacts `requirement` needs and spares.
pub(crate) fn contacts(
    requirement: &Requirement,
    live: &[Endpoint],
) -> (Vec<Endpoint>, Vec<Endpoint>) {
    let (mut contacts, mut spares) = (Vec::new(), Vec::new());
    for (endpoint, role) in roles(requirement, live) {
        match role {
            Role::Contact => contacts.push(endpoint.clone()),
            Role::Spare => spares.push(endpoint.clone()),
            Role::Unused => {}
        }
    }
    (contacts, spares)
}

/// Whether `local` alone is the contact a read at `requirement` needs (nothing is copied: this
/// decides the single-node path of every read).
pub(crate) fn only_contact(requirement: &Requirement, live: &[Endpoint], local: IpAddr) -> bool {
    let mut contacts = roles(requirement, live).filter(|(_, role)| *role == Role::Contact);
    contacts.next().is_some_and(|(e, _)| e.addr == local) && contacts.next().is_none()
}

/// Reads the partition from the replicas of `plan`, round after round.
pub(crate) async fn read(
    readers: &Readers,
    plan: ReadPlan<'_>,
    filter: &ReadFilter,
    now: i32,
    stats: &mut ReadStats,
) -> CqlResult<Option<Partition>> {
    let deadline = Instant::now() + readers.timeout;
    let mut plan = plan;
    let mut rounds = Rounds::new(plan.key, filter);
    while let Some((round_filter, cap)) = rounds.next() {
        let round = read_round(readers, &mut plan, &round_filter, cap, deadline).await?;
        rounds.add(round, now, stats);
    }
    Ok(rounds.finish())
}

/// One round: data and digests, then, when they disagree, data from all and repair.
async fn read_round(
    readers: &Readers,
    plan: &mut ReadPlan<'_>,
    filter: &ReadFilter,
    cap: usize,
    deadline: Instant,
) -> CqlResult<Round> {
    let replies = ask(readers, plan, filter, cap, true, deadline).await?;
    let digest = replies[0].1.digest();
    if replies.iter().all(|(_, reply)| reply.digest() == digest) {
        return Ok(merge(filter, &replies));
    }
    tracing::debug!("digest mismatch reading {:?}", plan.key);
    readers
        .metrics
        .digest_mismatches
        .fetch_add(1, Ordering::Relaxed);
    let replies = ask(readers, plan, filter, cap, false, deadline).await?;
    let round = merge(filter, &replies);
    if readers.read_repair {
        let unapplied = repair(readers, plan, &round, &replies).await;
        if unapplied > 0 {
            return Err(repair_timed_out(plan.cl, plan.block_for, unapplied));
        }
    }
    Ok(round)
}

/// The round made of every data reply.
fn merge(filter: &ReadFilter, replies: &[(Endpoint, ReadReply)]) -> Round {
    let mut round = Round::new(filter);
    for (_, reply) in replies {
        if let ReadReply::Data(data) = reply {
            round.add(data.clone());
        }
    }
    round
}

/// Asks every contact (the first for data; the others for digests when `digests`, else for
/// data), replacing failed contacts by spares; the replies in contact order, the data one first.
async fn ask(
    readers: &Readers,
    plan: &mut ReadPlan<'_>,
    filter: &ReadFilter,
    cap: usize,
    digests: bool,
    deadline: Instant,
) -> CqlResult<Vec<(Endpoint, ReadReply)>> {
    let request = ReadRequest {
        epoch: readers.epoch,
        session: readers.session,
        table: plan.table,
        key: plan.key.clone(),
        filter: filter.clone(),
        cap,
        digest: false,
    };
    let ask = |slot: usize, endpoint: Endpoint| {
        let digest = digests && slot > 0;
        ask_one(readers, &request, endpoint, slot, digest)
    };
    let speculation = Speculation {
        after: plan.speculate_after,
        counter: Some(&readers.metrics.speculative_retries),
    };
    gather(
        &mut plan.contacts,
        &mut plan.spares,
        ask,
        speculation,
        deadline,
    )
    .await
    .map_err(|shortfall| shortfall_error(plan, shortfall))
}

/// Asks one replica: this node without a hop, another through messaging.
impl Readers {
    /// One request to the replica at `addr`.
    pub fn remote(&self, addr: IpAddr) -> gather::Remote {
        let to = SocketAddr::new(addr, self.storage_port);
        gather::Remote::new(self.messaging.clone(), to, self.timeout)
    }
}

fn ask_one(
    readers: &Readers,
    request: &ReadRequest,
    endpoint: Endpoint,
    slot: usize,
    digest: bool,
) -> BoxFuture<'static, Answer<ReadReply>> {
    if endpoint.addr == readers.local {
        let r = request;
        let answer = readers
            .storage
            .read_source(r.table, &r.key, &r.filter, r.cap)
            .map(|data| ReadReply::new(data, digest))
            .map_err(|e| {
                tracing::error!("local read failed: {e}");
                Failure::Failed(reason::UNKNOWN)
            });
        return Box::pin(async move { (slot, endpoint, answer) });
    }
    let payload = request.encode_asking(digest);
    let replica = readers.metrics.replica(endpoint.addr);
    let asking = readers.remote(endpoint.addr);
    Box::pin(async move {
        let answer = asking.request(Verb::Read, payload, &replica).await;
        (
            slot,
            endpoint,
            answer.and_then(|b| gather::decoded(b, ReadReply::decode)),
        )
    })
}

/// ReadTimeout when replicas were silent, ReadFailure when some failed.
pub(crate) fn shortfall_error<R>(plan: &ReadPlan<'_>, shortfall: Shortfall<R>) -> CqlError
where
    R: HasData,
{
    let received = shortfall.received();
    let data_present = shortfall
        .replies
        .iter()
        .flatten()
        .any(|(_, r)| r.has_data());
    if shortfall.failures.is_empty() {
        return CqlError::ReadTimeout {
            message: format!("Operation timed out - received only {received} responses."),
            consistency: plan.cl,
            received,
            block_for: plan.block_for,
            data_present,
        };
    }
    let failures = shortfall.failures.len() as i32;
    CqlError::ReadFailure {
        message: format!(
            "Operation failed - received {received} responses and {failures} failures"
        ),
        consistency: plan.cl,
        received,
        block_for: plan.block_for,
        failures,
        data_present,
        reasons: shortfall.failures,
    }
}

/// Whether a reply carries data (a ReadTimeout's `data_present`).
pub(crate) trait HasData {
    fn has_data(&self) -> bool;
}

impl HasData for ReadReply {
    fn has_data(&self) -> bool {
        matches!(self, ReadReply::Data(_))
    }
}

/// Sends each replica what it lacks of the reconciled round and waits (at most the write
/// timeout) for them to apply it; how many repairs were not applied.
async fn repair(
    readers: &Readers,
    plan: &ReadPlan<'_>,
    round: &Round,
    replies: &[(Endpoint, ReadReply)],
) -> usize {
    let Some(merged) = round.data() else { return 0 };
    let empty = mutation::PartitionData::default();
    let mut repairs = Vec::new();
    for (endpoint, reply) in replies {
        let ReadReply::Data(data) = reply else {
            continue;
        };
        let theirs = data.as_ref().map_or(&empty, |d| &d.data);
        let Some(update) = merged.missing_in(theirs) else {
            continue;
        };
        let mutation = Mutation {
            table: plan.table,
            key: plan.key.clone(),
            update,
        };
        repairs.push((endpoint.clone(), mutation));
    }
    apply_repairs(readers, repairs).await
}

/// Applies each repair on its replica, waiting at most the write timeout for them all; how
/// many were not applied (failed, or not acknowledged in time).
pub(crate) async fn apply_repairs(readers: &Readers, repairs: Vec<(Endpoint, Mutation)>) -> usize {
    let mut unapplied = repairs.len();
    readers
        .metrics
        .read_repairs
        .fetch_add(unapplied as u64, Ordering::Relaxed);
    let mut writes: FuturesUnordered<BoxFuture<'static, bool>> = repairs
        .into_iter()
        .map(|(endpoint, mutation)| repair_one(readers, &endpoint, mutation))
        .collect();
    let deadline = Instant::now() + readers.write_timeout;
    while let Ok(Some(applied)) = tokio::time::timeout_at(deadline, writes.next()).await {
        if applied {
            unapplied -= 1;
        } else {
            tracing::debug!("a read repair was not applied");
        }
    }
    unapplied
}

/// The answer to a read whose repairs were not all applied: every replica answered, but the
/// read cannot return data a later QUORUM read might not see. Cassandra's blocking read repair
/// answers ReadTimeout with data present, counting the replicas still owing an acknowledgement
/// as missing (at least one).
pub(crate) fn repair_timed_out(cl: Consistency, block_for: i32, unapplied: usize) -> CqlError {
    let unapplied = i32::try_from(unapplied).unwrap_or(i32::MAX);
    let received = block_for.saturating_sub(unapplied).clamp(0, block_for - 1);
    CqlError::ReadTimeout {
        message: format!("Operation timed out - received only {received} responses."),
        consistency: cl,
        received,
        block_for,
        data_present: true,
    }
}

fn repair_one(
    readers: &Readers,
    endpoint: &Endpoint,
    mutation: Mutation,
) -> BoxFuture<'static, bool> {
    if endpoint.addr == readers.local {
        let storage = readers.storage.clone();
        return Box::pin(async move { storage.apply(mutation).await.is_ok() });
    }
    let Some(messaging) = readers.messaging.clone() else {
        return Box::pin(async { false });
    };
    let payload =
        MutationRequest::encode(readers.epoch, readers.session, std::iter::once(&mutation));
    let to = SocketAddr::new(endpoint.addr, readers.storage_port);
    let timeout = readers.write_timeout;
    Box::pin(async move {
        messaging
            .request(to, Verb::Mutation, payload, timeout)
            .await
            .is_ok()
    })
}
