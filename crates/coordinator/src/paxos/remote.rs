//! The proposer's reach: this node's Paxos participant (`Local`), the verbs to the other
//! replicas (`NodeReplicas`, the [`paxos::Replicas`] of a node), and the node's Paxos service
//! built on both ([`PaxosService`]).
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash, Hasher};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use clock::SharedClock;
use mutation::{Mutation, PartitionKey, TableId, TokenRange};
use net::Verb;
use paxos::{
    Answer, BallotGenerator, Config, Electorate, NoReply, Prepare, PrepareAnswer, Proposal,
    ProposeAnswer, Proposer, Replica, Replicas, StoreError,
};
use ring::{Endpoint, ReplicationStrategy};
use storage::Storage;
use uuid::Uuid;

use super::cleanup::CleanupReplicas;
use super::store::{LocalData, SystemPaxos};
use super::{Lwt, LwtKey};
use crate::coordinator::strategies::Strategies;
use crate::messages::paxos::{
    decode_cleanup_answer, decode_prepare_answer, decode_propose_answer, CleanupRequest,
    PaxosRequest,
};
use crate::remote::Attachments;
use crate::replicas::ReplicaPlan;
use crate::timeouts::{LiveTimeouts, TimeoutKind};
use crate::topology::Topology;

tokio::task_local! {
    /// The tracing session of the operation a proposer runs in this task: its messages carry
    /// it, so replicas trace their part.
    static SESSION: Option<Uuid>;
}

/// Runs `operation` with its messages carrying tracing session `session`.
pub(crate) async fn traced<F: std::future::Future>(
    session: Option<Uuid>,
    operation: F,
) -> F::Output {
    SESSION.scope(session, operation).await
}

/// This node's participant: the protocol's rules over `system.paxos` and the local tables.
pub(crate) struct Local {
    pub replica: Replica<Lwt, SystemPaxos, LocalData>,
    pub storage: Arc<Storage>,
}

impl Local {
    /// Promises (or not) and reads; durable before it returns.
    pub async fn prepare(&self, request: &Prepare<Lwt>) -> Result<PrepareAnswer<Lwt>, StoreError> {
        let answer = self.replica.prepare(request)?;
        self.synced(answer).await
    }

    pub async fn propose(
        &self,
        proposal: &Proposal<Mutation>,
    ) -> Result<ProposeAnswer, StoreError> {
        let key = key_of(proposal);
        let answer = self.replica.propose(&key, proposal)?;
        self.synced(answer).await
    }

    pub async fn commit(&self, commit: &Proposal<Mutation>) -> Result<(), StoreError> {
        let key = key_of(commit);
        self.replica.commit(&key, commit)?;
        self.synced(()).await
    }

    /// One step of a purge after repair, durable before it returns: without keys, raises the
    /// low bound to the repair's ballot and says which partitions of the table in the ranges
    /// could be purged here; with them, purges those it still can.
    pub async fn cleanup(
        &self,
        request: &CleanupRequest,
    ) -> Result<Vec<(PartitionKey, bool)>, StoreError> {
        let replica = &self.replica;
        let lwt = |key: &PartitionKey| LwtKey {
            table: request.table,
            key: key.clone(),
        };
        let answer = match &request.keys {
            None => {
                replica.raise_low_bound(request.repaired)?;
                let keys = replica.store().keys_in(request.table, &request.ranges)?;
                keys.into_iter()
                    .map(|k| Ok((k.clone(), replica.is_purgeable(&lwt(&k), request.repaired)?)))
                    .collect::<Result<Vec<_>, StoreError>>()?
            }
            Some(keys) => keys
                .iter()
                .map(|k| Ok((k.clone(), replica.purge(&lwt(k), request.repaired)?)))
                .collect::<Result<Vec<_>, StoreError>>()?,
        };
        self.synced(answer).await
    }

    /// `answer` once what the call wrote is durable per the commit log's sync mode.
    async fn synced<A>(&self, answer: A) -> Result<A, StoreError> {
        self.storage
            .sync_log()
            .await
            .map_err(|e| StoreError(e.to_string()))?;
        Ok(answer)
    }
}

/// The partition a proposal decides for (its mutation's).
pub(crate) fn key_of(proposal: &Proposal<Mutation>) -> LwtKey {
    LwtKey {
        table: proposal.update.table,
        key: proposal.update.key.clone(),
    }
}

/// A node's replicas of each partition, reached without a hop for this node and over
/// messaging for the others; `local_dc` restricts the electorate (LOCAL_SERIAL).
pub(crate) struct NodeReplicas {
    pub local: Arc<Local>,
    pub local_endpoint: Endpoint,
    pub topology: Arc<Topology>,
    pub strategies: Arc<Strategies>,
    pub attached: Arc<Attachments>,
    pub timeouts: Arc<LiveTimeouts>,
    pub local_dc: bool,
}

impl NodeReplicas {
    fn strategy(&self, key: &LwtKey) -> Arc<ReplicationStrategy> {
        self.strategies
            .of_table(key.table)
            .unwrap_or_else(|| Arc::new(ReplicationStrategy::Local))
    }

    /// Whether `endpoint` votes under this electorate's datacenter rule.
    fn votes(&self, endpoint: &Endpoint) -> bool {
        !self.local_dc || endpoint.datacenter == self.local_endpoint.datacenter
    }

    /// Sends `payload` to `to` and decodes its answer; a failure answer is `Failed`, silence
    /// (or no messaging) `Timeout`.
    async fn ask<A>(
        &self,
        to: IpAddr,
        verb: Verb,
        payload: Bytes,
        decode: fn(&[u8]) -> Result<A, mutation::codec::DecodeError>,
    ) -> Answer<A> {
        let Some(remote) = self.attached.remote.get() else {
            return Err(NoReply::Timeout);
        };
        let timeout = self.timeouts.get(TimeoutKind::Write);
        let peer = SocketAddr::new(to, remote.storage_port);
        match remote.messaging.request(peer, verb, payload, timeout).await {
            Ok(bytes) => decode(&bytes).map_err(|e| {
                tracing::warn!("malformed {verb:?} answer from {to}: {}", e.0);
                NoReply::Failed
            }),
            Err(net::NetError::Remote(e)) => {
                tracing::debug!("{verb:?} failed on {to}: {}", e.message);
                Err(NoReply::Failed)
            }
            Err(_) => Err(NoReply::Timeout),
        }
    }

    /// `body` with the metadata epoch and the tracing session of the operation sending it.
    fn header<B>(&self, body: B) -> PaxosRequest<B> {
        let epoch = self.attached.remote.get().map_or(0, |r| (r.epoch)());
        PaxosRequest {
            epoch,
            session: SESSION.try_with(|s| *s).ok().flatten(),
            body,
        }
    }

    fn is_local(&self, to: &IpAddr) -> bool {
        *to == self.local_endpoint.addr
    }
}

/// A local failure as an answer: the store failed.
fn local<A>(result: Result<A, StoreError>) -> Answer<A> {
    result.map_err(|e| {
        tracing::error!("local Paxos state: {e}");
        NoReply::Failed
    })
}

impl Replicas<Lwt> for NodeReplicas {
    type Node = IpAddr;

    /// The partition's replicas as a write sees them (natural ones, and pending ones during a
    /// topology change), only the local datacenter's for LOCAL_SERIAL.
    fn electorate(&self, key: &LwtKey) -> Electorate<IpAddr> {
        let strategy = self.strategy(key);
        let plan = ReplicaPlan::for_write(&self.topology, &strategy, key.key.token, true);
        let is_pending = |e: &Endpoint| plan.pending.iter().any(|p| p.addr == e.addr);
        let voters = plan.live.iter().chain(&plan.dead).filter(|e| self.votes(e));
        let (pending, natural): (Vec<&Endpoint>, Vec<&Endpoint>) =
            voters.partition(|e| is_pending(e));
        Electorate {
            natural: natural.into_iter().map(|e| e.addr).collect(),
            pending: pending.into_iter().map(|e| e.addr).collect(),
        }
    }

    fn is_alive(&self, node: &IpAddr) -> bool {
        self.is_local(node)
            || (self.attached.remote.get().is_some() && self.topology.is_alive(*node))
    }

    async fn prepare(&self, to: &IpAddr, request: &Prepare<Lwt>) -> Answer<PrepareAnswer<Lwt>> {
        if self.is_local(to) {
            return local(self.local.prepare(request).await);
        }
        let payload = self.header(request.clone()).encode_prepare();
        self.ask(*to, Verb::PaxosPrepare, payload, decode_prepare_answer)
            .await
    }

    async fn propose(
        &self,
        to: &IpAddr,
        _key: &LwtKey,
        proposal: &Proposal<Mutation>,
    ) -> Answer<ProposeAnswer> {
        if self.is_local(to) {
            return local(self.local.propose(proposal).await);
        }
        let payload = self.header(proposal.clone()).encode_proposal();
        self.ask(*to, Verb::PaxosPropose, payload, decode_propose_answer)
            .await
    }

    async fn commit(&self, to: &IpAddr, _key: &LwtKey, commit: &Proposal<Mutation>) -> Answer<()> {
        if self.is_local(to) {
            return local(self.local.commit(commit).await);
        }
        let payload = self.header(commit.clone()).encode_proposal();
        self.ask(*to, Verb::PaxosCommit, payload, |_| Ok(())).await
    }

    async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await
    }
}

impl CleanupReplicas for NodeReplicas {
    async fn cleanup(
        &self,
        to: &IpAddr,
        request: &CleanupRequest,
    ) -> Answer<Vec<(PartitionKey, bool)>> {
        if self.is_local(to) {
            return local(self.local.cleanup(request).await);
        }
        let payload = self.header(request.clone()).encode_cleanup();
        self.ask(*to, Verb::PaxosCleanup, payload, decode_cleanup_answer)
            .await
    }
}

impl PaxosService {
    /// Purges the Paxos state of `table`'s partitions in `ranges` that a repair over
    /// `participants` made durable, up to ballot `repaired`; how many replica states went.
    pub async fn purge_repaired(
        &self,
        table: TableId,
        ranges: &[TokenRange],
        participants: &[IpAddr],
        repaired: paxos::Ballot,
    ) -> Result<usize, String> {
        let replicas = self.serial.replicas();
        super::cleanup::after_repair(replicas, table, ranges, participants, repaired).await
    }
}

/// The node's Paxos: its participant, and a proposer for each serial consistency.
pub(crate) struct PaxosService {
    pub local: Arc<Local>,
    pub serial: Proposer<Lwt, NodeReplicas, SharedClock>,
    pub local_serial: Proposer<Lwt, NodeReplicas, SharedClock>,
}

/// Ballot nodes are 48 bits (a timeuuid's node); the lowest tells the two proposers apart.
const NODE_BITS: u64 = (1 << 48) - 1;

/// What the node's Paxos service is made of, and the service once made: at the first
/// operation or request, when `system.paxos` is known and replayed.
pub(crate) struct PaxosCell {
    pub storage: Arc<Storage>,
    pub local_endpoint: Endpoint,
    pub topology: Arc<Topology>,
    pub strategies: Arc<Strategies>,
    pub attached: Arc<Attachments>,
    pub timeouts: Arc<LiveTimeouts>,
    pub service: OnceLock<Arc<PaxosService>>,
}

impl PaxosCell {
    /// The service, made on first use.
    pub fn get(&self) -> Result<Arc<PaxosService>, StoreError> {
        if let Some(service) = self.service.get() {
            return Ok(service.clone());
        }
        let service = Arc::new(self.make()?);
        // Two first uses at once make two; the first set wins and the other is dropped unused.
        Ok(self.service.get_or_init(|| service).clone())
    }

    fn make(&self) -> Result<PaxosService, StoreError> {
        let clock = self
            .attached
            .remote
            .get()
            .map_or_else(SharedClock::default, |r| r.messaging.clock().clone());
        let (store, seed) = SystemPaxos::open(self.storage.clone(), clock.clone())?;
        let data = LocalData {
            storage: self.storage.clone(),
        };
        let local = Arc::new(Local {
            replica: Replica::new(store, data),
            storage: self.storage.clone(),
        });
        let node = node_id(self.local_endpoint.addr);
        // A start counter that differs between runs, so a restart whose clock went back
        // never issues a ballot of an earlier run (14 bits: a timeuuid's clock sequence).
        let counter = (RandomState::new().hash_one(node) & 0x3fff) as u16;
        let generator =
            |bit: u64| BallotGenerator::new(clock.clone(), node | bit, counter, Some(seed.ballot));
        let replicas = |local_dc: bool| NodeReplicas {
            local: local.clone(),
            local_endpoint: self.local_endpoint.clone(),
            topology: self.topology.clone(),
            strategies: self.strategies.clone(),
            attached: self.attached.clone(),
            timeouts: self.timeouts.clone(),
            local_dc,
        };
        let config = Config::default();
        Ok(PaxosService {
            serial: Proposer::new(replicas(false), generator(0), config.clone(), node),
            local_serial: Proposer::new(replicas(true), generator(1), config, node ^ 1),
            local,
        })
    }
}

/// The ballot node of the node at `addr`: its address hashed into 47 bits, shifted left one.
fn node_id(addr: IpAddr) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    addr.hash(&mut hasher);
    (hasher.finish() << 1) & NODE_BITS
}

#[cfg(test)]
mod tests;
