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
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use gossip::{keys, Membership};
use metadata::{
    ClusterMetadata, HostId, MetadataError, MetadataService, NodeRecord, NodeState, Transformation,
};
use parking_lot::RwLock;
use query::QueryProcessor;
use ring::{ReplicationStrategy, TokenMetadata};
use tokio::sync::{watch, Mutex};
use tokio::time::Instant;

use crate::mover::{Purpose, RangeMover, Transfer};
use crate::plan::{gained_ranges, lost_ranges, replication_checks, restored_ranges, Rings};
use crate::rings::{future_ring_of, ring_of};

/// A pause before a step is tried again (no majority, or another change under way).
pub(crate) const RETRY: Duration = Duration::from_millis(500);
/// How long a change waits for gossip to see up the nodes it streams from.
const SOURCES_WAIT: Duration = Duration::from_secs(30);
/// How often a node waiting for another topology change to end says so.
pub(crate) const WAIT_REPORT: Duration = Duration::from_secs(10);

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

/// How this node's topology changes run.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The wait after a step for every node to apply it (`ring_delay_ms`).
    pub ring_delay: Duration,
    /// Cassandra's `cassandra.consistent.rangemovement`: a joining node fetches each range
    /// from the node giving it up, and refuses to join while that node is down; off, it takes
    /// the range from another live replica then.
    pub consistent_rangemovement: bool,
    /// The data directories, whose free space a join must have for the ranges it takes.
    pub data_dirs: Vec<PathBuf>,
    /// Where a join records the ranges it has received (`None`: nowhere, a resumed join
    /// fetches them all again).
    pub received_file: Option<PathBuf>,
}

impl Settings {
    /// Consistent range movement, no disk check, nothing recorded.
    pub fn new(ring_delay: Duration) -> Settings {
        Settings {
            ring_delay,
            consistent_rangemovement: true,
            data_dirs: Vec::new(),
            received_file: None,
        }
    }
}

/// Where this node's bootstrap is, for `nodetool bootstrap resume`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Bootstrap {
    /// No join under way on this node.
    Idle,
    Streaming,
    /// The data movement failed; the node stays Joining until resumed.
    Failed(String),
}

/// The data a step of a change moves.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Move {
    /// This node fetches what it gains (`strict`: from the nodes giving it up).
    Fetch { strict: bool },
    /// This node sends what it loses.
    Send,
    /// The new replicas of the removed node's ranges fetch them from the survivors.
    Restore(IpAddr),
}

impl Move {
    pub(crate) fn purpose(self) -> Purpose {
        match self {
            Move::Fetch { .. } => Purpose::Bootstrap,
            Move::Send => Purpose::Unbootstrap,
            Move::Restore(_) => Purpose::RestoreReplicaCount,
        }
    }
}

pub struct NodeOps {
    pub(crate) metadata: Arc<MetadataService>,
    pub(crate) processor: Arc<QueryProcessor>,
    pub(crate) gossip: Option<Arc<dyn Membership>>,
    pub(crate) settings: Settings,
    pub(crate) mover: RwLock<Option<Arc<dyn RangeMover>>>,
    pub(crate) mode: watch::Sender<OperationMode>,
    pub(crate) bootstrap: watch::Sender<Bootstrap>,
    /// One operation started on this node at a time.
    pub(crate) busy: Mutex<()>,
}

impl NodeOps {
    pub fn new(
        metadata: Arc<MetadataService>,
        processor: Arc<QueryProcessor>,
        gossip: Option<Arc<dyn Membership>>,
        settings: Settings,
    ) -> Arc<NodeOps> {
        Arc::new(NodeOps {
            metadata,
            processor,
            gossip,
            settings,
            mover: RwLock::new(None),
            mode: watch::Sender::new(OperationMode::Starting),
            bootstrap: watch::Sender::new(Bootstrap::Idle),
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

    pub(crate) fn host_id(&self) -> HostId {
        self.processor.node().host_id
    }

    pub(crate) fn me(&self, meta: &ClusterMetadata) -> Option<NodeRecord> {
        meta.nodes.get(&self.host_id()).cloned()
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
            NodeState::Joining | NodeState::Replacing(_) => {
                // a join that stopped half-way: the node owned nothing yet, so it goes with
                // its pending ranges and nothing to restore
                tracing::info!(
                    "removing node {host_id} ({}), which had not finished joining the ring",
                    node.addr
                );
                let remove = Transformation::RemoveNode { host_id };
                return self.commit_retrying(remove).await;
            }
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

    /// Takes a node that has left out of the metadata group and the log's nodes. This node
    /// taking itself out has the leader's answer and does not wait to apply the change: out
    /// of the group, it may never see it.
    async fn forget(&self, host_id: HostId) {
        let remove = Transformation::RemoveNode { host_id };
        let removed = if host_id == self.host_id() {
            self.commit_leaving(remove).await
        } else {
            self.commit_retrying(remove).await
        };
        if let Err(e) = removed {
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
    pub(crate) async fn commit_retrying(&self, change: Transformation) -> Result<(), String> {
        loop {
            match self.metadata.commit(change.clone()).await {
                Ok(_) => return Ok(()),
                Err(e) => retry_or_fail(e).await?,
            }
        }
    }

    /// [`commit_retrying`](Self::commit_retrying) for this node's own removal.
    async fn commit_leaving(&self, change: Transformation) -> Result<(), String> {
        loop {
            match self.metadata.commit_leaving(change.clone()).await {
                Ok(_) => return Ok(()),
                Err(e) => retry_or_fail(e).await?,
            }
        }
    }

    /// Waits for the ring delay, so that every coordinator applies the step before the next.
    pub(crate) async fn settle(&self, doing: &str) {
        let delay = self.settings.ring_delay;
        tracing::info!(
            "this node is {doing}: waiting {delay:?} (ring delay) for every node to see it"
        );
        tokio::time::sleep(delay).await;
    }

    /// Moves the data of the ranges that change hands in the change under way, through the
    /// attached mover.
    pub(crate) async fn move_data(&self, step: Move) -> Result<(), String> {
        let Some(mover) = self.mover_or_warn(step) else {
            return Ok(());
        };
        let transfers = self
            .plan_when_sources_up(step, || self.metadata.current())
            .await?;
        log_transfers(step, &transfers);
        mover.transfer(step.purpose(), transfers).await?;
        tracing::info!("{}: every range has moved", step.purpose().name());
        Ok(())
    }

    /// The attached mover; without one, a warning that the step moves no data.
    pub(crate) fn mover_or_warn(&self, step: Move) -> Option<Arc<dyn RangeMover>> {
        let mover = self.mover.read().clone();
        if mover.is_none() {
            tracing::warn!(
                "no data streaming in this build: not moving data to {}; the ranges' new \
                 replicas get only the writes made from now on (run nodetool repair to fill them)",
                match step {
                    Move::Fetch { .. } => "fetch the ranges this node gains",
                    Move::Send => "send the ranges this node gives up",
                    Move::Restore(_) => "restore the replicas of the removed node's ranges",
                }
            );
        }
        mover
    }

    /// The plan over the metadata `meta` gives, once gossip sees every source it needs up (a
    /// node just started has not heard from every other yet): tried again for up to
    /// `SOURCES_WAIT`.
    pub(crate) async fn plan_when_sources_up(
        &self,
        step: Move,
        meta: impl Fn() -> Arc<ClusterMetadata>,
    ) -> Result<Vec<Transfer>, String> {
        let deadline = Instant::now() + SOURCES_WAIT;
        loop {
            match self.plan(&meta(), step) {
                Err(why) if Instant::now() < deadline => {
                    tracing::info!("waiting for the sources to be up: {why}");
                    tokio::time::sleep(RETRY).await;
                }
                planned => return planned,
            }
        }
    }

    /// The replicated keyspaces with tables, and their strategies.
    pub(crate) fn keyspaces(&self) -> Vec<(String, Arc<ReplicationStrategy>)> {
        let schema = self.processor.schema();
        schema
            .schema
            .keyspaces()
            .iter()
            .filter(|(_, keyspace)| !keyspace.tables.is_empty())
            .map(|(name, _)| (name.clone(), self.processor.strategy(name)))
            .filter(|(_, strategy)| !matches!(**strategy, ReplicationStrategy::Local))
            .collect()
    }

    /// The transfers of every replicated keyspace with tables, for the change under way in
    /// `meta`.
    fn plan(&self, meta: &ClusterMetadata, step: Move) -> Result<Vec<Transfer>, String> {
        let now: TokenMetadata = ring_of(meta);
        let Some(future) = future_ring_of(meta) else {
            return Ok(Vec::new());
        };
        let local = self.processor.node().listen_address;
        let alive = |addr: IpAddr| addr == local || self.is_alive(addr);
        let mut transfers = Vec::new();
        for (name, strategy) in self.keyspaces() {
            let rings = Rings {
                strategy: &strategy,
                now: &now,
                future: &future,
            };
            transfers.extend(match step {
                Move::Fetch { strict } => gained_ranges(&name, rings, local, &alive, strict)?,
                Move::Send => lost_ranges(&name, rings, local),
                Move::Restore(removed) => restored_ranges(&name, rings, removed, &alive)?,
            });
        }
        Ok(transfers)
    }
}

pub(crate) fn log_transfers(step: Move, transfers: &[Transfer]) {
    let ranges: usize = transfers.iter().map(|t| t.ranges.len()).sum();
    tracing::info!(
        "{}: streaming {ranges} ranges in {} transfers",
        step.purpose().name(),
        transfers.len()
    );
}

/// Waits a moment after a failure worth retrying (no majority, timeout, conflict); any other
/// failure is the answer.
pub(crate) async fn retry_or_fail(e: MetadataError) -> Result<(), String> {
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
