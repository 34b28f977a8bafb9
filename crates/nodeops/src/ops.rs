//! [`NodeOps`]: this node's part in topology changes. Each operation is a few steps, each a
//! metadata log entry checked against the state it meets, with the data movement between
//! them handed to the [`RangeMover`] when one is attached:
//! - bootstrap: StartJoin (Joining: a pending owner, written to, not read from) → ring delay
//!   → fetch the ranges gained → FinishJoin (Normal);
//! - replace: StartReplace (Replacing the dead node, whose tokens it takes) → ring delay →
//!   fetch → FinishJoin (Normal; the dead node goes);
//! - decommission: StartLeave (Leaving) → ring delay → send the ranges lost → FinishLeave
//!   (Left) → RemoveNode (out of the metadata group) → the node stops serving;
//! - removenode (of a dead node, run by another): StartLeave → FinishLeave → RemoveNode.
//!
//! A node restarted in the middle goes on from the state the log holds for it: Joining or
//! Replacing finishes its join, Leaving finishes its decommission.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gossip::{keys, Membership};
use metadata::{
    ClusterMetadata, HostId, MetadataError, MetadataService, NodeRecord, NodeState, Transformation,
};
use parking_lot::RwLock;
use query::QueryProcessor;
use ring::{ReplicationStrategy, TokenMetadata};
use tokio::sync::{watch, Mutex};

use crate::mover::{Purpose, RangeMover, Transfer};
use crate::plan::{gained_ranges, lost_ranges, replication_checks, restored_ranges, Rings};
use crate::rings::{future_ring_of, ring_of};

/// A pause before a step is tried again (no majority, or another change under way).
const RETRY: Duration = Duration::from_millis(500);
/// How long a change waits for gossip to see up the nodes it streams from.
const SOURCES_WAIT: Duration = Duration::from_secs(30);
/// How often a node waiting for another topology change to end says so.
const WAIT_REPORT: Duration = Duration::from_secs(10);

/// What the node is doing in the ring, as `nodetool netstats` reports Cassandra's mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationMode {
    Starting,
    Joining,
    Normal,
    Leaving,
    Decommissioned,
}

impl OperationMode {
    pub fn name(self) -> &'static str {
        match self {
            OperationMode::Starting => "STARTING",
            OperationMode::Joining => "JOINING",
            OperationMode::Normal => "NORMAL",
            OperationMode::Leaving => "LEAVING",
            OperationMode::Decommissioned => "DECOMMISSIONED",
        }
    }
}

/// The data a step of a change moves.
#[derive(Clone, Copy, Debug)]
enum Move {
    /// This node fetches what it gains (`strict`: from the nodes giving it up).
    Fetch { strict: bool },
    /// This node sends what it loses.
    Send,
    /// The new replicas of the removed node's ranges fetch them from the survivors.
    Restore(IpAddr),
}

impl Move {
    fn purpose(self) -> Purpose {
        match self {
            Move::Fetch { .. } => Purpose::Bootstrap,
            Move::Send => Purpose::Unbootstrap,
            Move::Restore(_) => Purpose::RestoreReplicaCount,
        }
    }
}

pub struct NodeOps {
    metadata: Arc<MetadataService>,
    processor: Arc<QueryProcessor>,
    gossip: Option<Arc<dyn Membership>>,
    ring_delay: Duration,
    mover: RwLock<Option<Arc<dyn RangeMover>>>,
    mode: watch::Sender<OperationMode>,
    /// One operation started on this node at a time.
    busy: Mutex<()>,
}

impl NodeOps {
    pub fn new(
        metadata: Arc<MetadataService>,
        processor: Arc<QueryProcessor>,
        gossip: Option<Arc<dyn Membership>>,
        ring_delay: Duration,
    ) -> Arc<NodeOps> {
        Arc::new(NodeOps {
            metadata,
            processor,
            gossip,
            ring_delay,
            mover: RwLock::new(None),
            mode: watch::Sender::new(OperationMode::Starting),
            busy: Mutex::new(()),
        })
    }

    /// Attaches the data movement (the streaming service).
    pub fn set_mover(&self, mover: Arc<dyn RangeMover>) {
        *self.mover.write() = Some(mover);
    }

    pub fn mode(&self) -> OperationMode {
        *self.mode.borrow()
    }

    /// Records that the node is in the ring, serving.
    pub fn mark_normal(&self) {
        self.mode.send_replace(OperationMode::Normal);
    }

    /// Resolves once this node has left the ring (decommissioned).
    pub async fn decommissioned(&self) {
        let mut mode = self.mode.subscribe();
        let _ = mode.wait_for(|m| *m == OperationMode::Decommissioned).await;
    }

    fn host_id(&self) -> HostId {
        self.processor.node().host_id
    }

    fn me(&self, meta: &ClusterMetadata) -> Option<NodeRecord> {
        meta.nodes.get(&self.host_id()).cloned()
    }

    /// Joins the ring as a pending owner of `node`'s tokens and becomes Normal once the
    /// ranges it gains are fetched; a node found Joining (restarted mid-join) goes on.
    pub async fn bootstrap(&self, node: NodeRecord) -> Result<(), String> {
        let _busy = self.busy.lock().await;
        let start = Transformation::StartJoin {
            node: Box::new(node),
        };
        self.start_unless(start, |s| s == NodeState::Joining)
            .await?;
        self.finish_join().await
    }

    /// Takes the tokens of the dead node `replaces` (`replace_address_first_boot`) and becomes
    /// Normal once their ranges are fetched from the live replicas.
    pub async fn replace(&self, node: NodeRecord, replaces: HostId) -> Result<(), String> {
        let _busy = self.busy.lock().await;
        let start = Transformation::StartReplace {
            node: Box::new(node),
            replaces,
        };
        self.start_unless(start, |s| matches!(s, NodeState::Replacing(_)))
            .await?;
        self.finish_join().await
    }

    /// Goes on with the join of a node found Joining or Replacing at start-up.
    pub async fn resume_join(&self) -> Result<(), String> {
        let _busy = self.busy.lock().await;
        tracing::info!("this node was joining the ring when it stopped: finishing the join");
        self.finish_join().await
    }

    async fn finish_join(&self) -> Result<(), String> {
        self.mode.send_replace(OperationMode::Joining);
        self.settle("joining").await;
        let meta = self.metadata.current();
        let strict = self.me(&meta).map(|n| n.state) == Some(NodeState::Joining);
        self.move_data(Move::Fetch { strict }).await?;
        let done = Transformation::FinishJoin {
            host_id: self.host_id(),
        };
        self.commit_retrying(done).await?;
        self.mode.send_replace(OperationMode::Normal);
        tracing::info!("joined the ring: this node is Normal");
        Ok(())
    }

    /// `nodetool decommission [--force]`: refused unless this node is Normal (or already
    /// Leaving, when it goes on) and, without `force`, unless every keyspace keeps enough
    /// nodes for its replication factor.
    pub async fn decommission(&self, force: bool) -> Result<(), String> {
        let _busy = self.busy.try_lock().map_err(|_| {
            "an operation is already running on this node (nodetool netstats shows it)".to_string()
        })?;
        let meta = self.metadata.current();
        let me = self
            .me(&meta)
            .ok_or("this node is not in the ring; there is nothing to decommission")?;
        if me.state == NodeState::Normal {
            let schema = self.processor.schema();
            let strategies = schema
                .schema
                .keyspaces()
                .keys()
                .map(|name| (name.clone(), self.processor.strategy(name)));
            let checks = if force {
                Vec::new()
            } else {
                replication_checks(strategies, &me.dc)
            };
            let start = Transformation::StartLeave {
                host_id: me.host_id,
                checks,
            };
            self.commit(start).await?;
        } else if me.state != NodeState::Leaving {
            return Err(format!(
                "This node is {:?} in the ring and cannot be decommissioned",
                me.state
            ));
        }
        self.finish_leave().await
    }

    /// Goes on with the decommission of a node found Leaving at start-up.
    pub async fn resume_leave(&self) -> Result<(), String> {
        let _busy = self.busy.lock().await;
        tracing::info!(
            "this node was leaving the ring when it stopped: finishing the decommission"
        );
        self.finish_leave().await
    }

    async fn finish_leave(&self) -> Result<(), String> {
        self.mode.send_replace(OperationMode::Leaving);
        if let Some(gossip) = &self.gossip {
            gossip.set_local(keys::STATUS, keys::Status::Leaving.as_str().to_string());
        }
        self.settle("leaving").await;
        self.move_data(Move::Send).await?;
        let host_id = self.host_id();
        self.commit_retrying(Transformation::FinishLeave { host_id })
            .await?;
        self.forget(host_id).await;
        if let Some(gossip) = &self.gossip {
            gossip.set_local(keys::STATUS, keys::Status::Left.as_str().to_string());
        }
        tracing::info!("decommissioned: this node has left the ring and stops serving");
        self.mode.send_replace(OperationMode::Decommissioned);
        Ok(())
    }

    /// `nodetool removenode <host id>`: a node gone for good leaves the ring; refused for a
    /// live node, for this node, or while another topology change runs.
    pub async fn removenode(&self, host_id: HostId) -> Result<(), String> {
        let _busy = self.busy.try_lock().map_err(|_| {
            "an operation is already running on this node (nodetool netstats shows it)".to_string()
        })?;
        if host_id == self.host_id() {
            return Err("Cannot remove self".to_string());
        }
        let meta = self.metadata.current();
        let node = meta.nodes.get(&host_id).ok_or("Host ID not found.")?;
        if self.is_alive(node.addr.ip()) {
            return Err(format!(
                "Node /{} is alive and owns this ID. Use decommission command to remove it from the ring",
                node.addr
            ));
        }
        match node.state {
            NodeState::Normal => {
                let start = Transformation::StartLeave {
                    host_id,
                    checks: Vec::new(),
                };
                self.commit(start).await?;
            }
            NodeState::Leaving | NodeState::Left => {}
            other => return Err(format!("node {host_id} is {other:?} and cannot be removed")),
        }
        tracing::info!("removing node {host_id} ({}) from the ring", node.addr);
        self.settle("being removed").await;
        self.move_data(Move::Restore(node.addr.ip())).await?;
        self.complete_removal(host_id).await
    }

    /// `nodetool removenode force`: completes the removal under way at once.
    pub async fn force_removal(&self) -> Result<(), String> {
        let meta = self.metadata.current();
        let removing = self
            .removal(&meta)
            .ok_or("No removal in progress to force")?;
        self.complete_removal(removing.host_id).await
    }

    /// `nodetool removenode status`.
    pub fn removal_status(&self) -> String {
        match self.removal(&self.metadata.current()) {
            Some(node) => format!(
                "RemovalStatus: Removing node {} ({}): its replicas' ranges are being restored.",
                node.host_id, node.addr
            ),
            None => "RemovalStatus: No removals in process.".to_string(),
        }
    }

    /// A Leaving node that is down: one being removed (a decommissioning node is up).
    fn removal<'a>(&self, meta: &'a ClusterMetadata) -> Option<&'a NodeRecord> {
        meta.nodes.values().find(|n| {
            n.state == NodeState::Leaving
                && n.host_id != self.host_id()
                && !self.is_alive(n.addr.ip())
        })
    }

    async fn complete_removal(&self, host_id: HostId) -> Result<(), String> {
        let meta = self.metadata.current();
        if meta.nodes.get(&host_id).map(|n| n.state) == Some(NodeState::Leaving) {
            self.commit_retrying(Transformation::FinishLeave { host_id })
                .await?;
        }
        self.forget(host_id).await;
        tracing::info!("removed node {host_id} from the ring");
        Ok(())
    }

    /// Takes a node that has left out of the metadata group and the log's nodes.
    async fn forget(&self, host_id: HostId) {
        let remove = Transformation::RemoveNode { host_id };
        if let Err(e) = self.commit_retrying(remove).await {
            tracing::warn!(
                "node {host_id} has left the ring but stays in the metadata group: {e}; \
                 nodetool removenode {host_id} on another node takes it out"
            );
        }
    }

    /// Whether gossip sees the node at `addr` up.
    pub fn is_alive(&self, addr: IpAddr) -> bool {
        self.gossip.as_ref().is_some_and(|g| g.is_alive(addr))
    }

    /// Commits the first step of a change unless this node is already in the state it leads
    /// to (a restart in the middle); waits while another node's change runs.
    async fn start_unless(
        &self,
        start: Transformation,
        started: impl Fn(NodeState) -> bool,
    ) -> Result<(), String> {
        let mut reported: Option<Instant> = None;
        loop {
            if self
                .me(&self.metadata.current())
                .is_some_and(|n| started(n.state))
            {
                return Ok(());
            }
            match self.metadata.commit(start.clone()).await {
                Ok(_) => return Ok(()),
                Err(MetadataError::Rejected(reason))
                    if reason.starts_with("another topology change") =>
                {
                    if reported.is_none_or(|at| at.elapsed() >= WAIT_REPORT) {
                        tracing::info!("waiting to join the ring: {reason}");
                        reported = Some(Instant::now());
                    }
                    tokio::time::sleep(RETRY).await;
                }
                Err(e) => retry_or_fail(e).await?,
            }
        }
    }

    /// Commits one step; a refusal is the operation's answer.
    async fn commit(&self, change: Transformation) -> Result<(), String> {
        self.metadata
            .commit(change)
            .await
            .map(|_| ())
            .map_err(|e| match e {
                MetadataError::Rejected(reason) => reason,
                other => other.to_string(),
            })
    }

    /// Commits a step that must happen (the change is under way): tried again without a
    /// majority, or after a conflict with an unrelated change.
    async fn commit_retrying(&self, change: Transformation) -> Result<(), String> {
        loop {
            match self.metadata.commit(change.clone()).await {
                Ok(_) => return Ok(()),
                Err(e) => retry_or_fail(e).await?,
            }
        }
    }

    /// Waits for the ring delay, so that every coordinator applies the step before the next.
    async fn settle(&self, doing: &str) {
        tracing::info!(
            "this node is {doing}: waiting {:?} (ring delay) for every node to see it",
            self.ring_delay
        );
        tokio::time::sleep(self.ring_delay).await;
    }

    /// Moves the data of the ranges that change hands in the change under way, through the
    /// attached mover.
    async fn move_data(&self, step: Move) -> Result<(), String> {
        let mover = self.mover.read().clone();
        let Some(mover) = mover else {
            self.log_unmoved(match step {
                Move::Fetch { .. } => "fetch the ranges this node gains",
                Move::Send => "send the ranges this node gives up",
                Move::Restore(_) => "restore the replicas of the removed node's ranges",
            });
            return Ok(());
        };
        let transfers = self.plan_when_sources_up(step).await?;
        let ranges: usize = transfers.iter().map(|t| t.ranges.len()).sum();
        tracing::info!(
            "{}: streaming {ranges} ranges in {} transfers",
            step.purpose().name(),
            transfers.len()
        );
        mover.transfer(step.purpose(), transfers).await?;
        tracing::info!("{}: every range has moved", step.purpose().name());
        Ok(())
    }

    fn log_unmoved(&self, what: &str) {
        tracing::warn!(
            "no data streaming in this build: not moving data to {what}; the ranges' new \
             replicas get only the writes made from now on (run nodetool repair to fill them)"
        );
    }

    /// The plan, once gossip sees every source it needs up (a node just started has not heard
    /// from every other yet): tried again for up to `SOURCES_WAIT`.
    async fn plan_when_sources_up(&self, step: Move) -> Result<Vec<Transfer>, String> {
        let deadline = Instant::now() + SOURCES_WAIT;
        loop {
            match self.plan(step) {
                Err(why) if Instant::now() < deadline => {
                    tracing::info!("waiting for the sources to be up: {why}");
                    tokio::time::sleep(RETRY).await;
                }
                planned => return planned,
            }
        }
    }

    /// The transfers of every replicated keyspace with tables, for the change under way.
    fn plan(&self, step: Move) -> Result<Vec<Transfer>, String> {
        let meta = self.metadata.current();
        let now: TokenMetadata = ring_of(&meta);
        let Some(future) = future_ring_of(&meta) else {
            return Ok(Vec::new());
        };
        let local = self.processor.node().listen_address;
        let alive = |addr: IpAddr| addr == local || self.is_alive(addr);
        let schema = self.processor.schema();
        let mut transfers = Vec::new();
        for (name, keyspace) in schema.schema.keyspaces() {
            let strategy = self.processor.strategy(name);
            if keyspace.tables.is_empty() || matches!(*strategy, ReplicationStrategy::Local) {
                continue;
            }
            let rings = Rings {
                strategy: &strategy,
                now: &now,
                future: &future,
            };
            transfers.extend(match step {
                Move::Fetch { strict } => gained_ranges(name, rings, local, &alive, strict)?,
                Move::Send => lost_ranges(name, rings, local),
                Move::Restore(removed) => restored_ranges(name, rings, removed, &alive)?,
            });
        }
        Ok(transfers)
    }
}

/// Waits a moment after a failure worth retrying (no majority, timeout, conflict); any other
/// failure is the answer.
async fn retry_or_fail(e: MetadataError) -> Result<(), String> {
    match e {
        MetadataError::NoQuorum(_) | MetadataError::Timeout => {
            tracing::warn!("topology change step not committed yet: {e}");
            tokio::time::sleep(RETRY).await;
            Ok(())
        }
        MetadataError::Conflict { .. } => Ok(()),
        MetadataError::Rejected(reason) => Err(reason),
        other => Err(other.to_string()),
    }
}
