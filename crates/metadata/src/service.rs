//! `MetadataService`: a node's handle on the cluster metadata group.

use std::sync::Arc;
use std::time::Duration;

use openraft::ServerState;
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::config::MetadataConfig;
use crate::core::Core;
use crate::discovery;
use crate::error::MetadataError;
use crate::founding::Acceptor;
use crate::handlers;
use crate::model::{ClusterMetadata, HostId, Transformation};
use crate::network::NetworkFactory;
use crate::promote;
use crate::raft_log::log_store::LogStore;
use crate::raft_types::{NodeId, Raft};
use crate::state_machine::StateMachineStore;
use crate::status::RaftStatus;
use crate::transform::{Command, Outcome};
use crate::transport::Transport;

/// The cluster's schema and topology as one replicated log of epochs.
pub struct MetadataService {
    core: Arc<Core>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl MetadataService {
    /// Opens the metadata directory and takes this node's place in the group:
    /// - a fresh node with no other seeds founds a one-voter group at once (seeded with
    ///   `initial`, the local schema of a node upgraded from before the cluster existed);
    /// - a fresh node with seeds returns at once and joins or founds a group in the background
    ///   (`await_epoch(1, ..)` waits for it);
    /// - a node with a log resumes; a sole voter elects itself without waiting.
    ///
    /// `transport` None runs without internode messaging (a single node).
    pub async fn start(
        config: MetadataConfig,
        transport: Option<Arc<dyn Transport>>,
        initial: Option<ClusterMetadata>,
    ) -> Result<Arc<MetadataService>, MetadataError> {
        let started = std::time::Instant::now();
        let storage = |e: std::io::Error| MetadataError::Storage(e.to_string());
        let log = LogStore::open(&config.dir).map_err(storage)?;
        let state_machine = StateMachineStore::open(&config.dir).map_err(storage)?;
        let pristine = log.is_pristine();
        let founding = Acceptor::open(&config.dir).map_err(storage)?;
        let state = state_machine.subscribe();
        let raft_config = config
            .raft_config()
            .map_err(|e| MetadataError::Rejected(format!("bad metadata group settings: {e}")))?;
        let me = NodeId(config.host_id);
        let network = NetworkFactory {
            transport: transport.clone(),
        };
        let raft = Raft::new(me, Arc::new(raft_config), network, log, state_machine)
            .await
            .map_err(|e| MetadataError::Storage(e.to_string()))?;
        let core = Arc::new(Core {
            config,
            me,
            raft,
            transport,
            state,
            initial: Mutex::new(initial),
            founding,
        });
        if let Some(transport) = &core.transport {
            handlers::register(&core, transport);
        }
        let service = Arc::new(MetadataService {
            core,
            tasks: Mutex::new(Vec::new()),
        });
        if let Err(e) = service.begin(pristine).await {
            service.shutdown().await;
            return Err(e);
        }
        tracing::info!(
            "metadata service started in {:?}: epoch {}, {} member(s)",
            started.elapsed(),
            service.current().epoch,
            service.status().members.len()
        );
        Ok(service)
    }

    async fn begin(&self, pristine: bool) -> Result<(), MetadataError> {
        let core = &self.core;
        if pristine && core.config.other_seeds().is_empty() {
            discovery::found(core).await?;
        } else if pristine {
            self.spawn(discovery::join_group(core.clone()));
        } else {
            resume(core).await?;
        }
        if core.transport.is_some() {
            self.spawn(promote::promote_learners(Arc::downgrade(core)));
        }
        Ok(())
    }

    fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) {
        self.tasks.lock().push(tokio::spawn(task));
    }

    /// Commits `transformation` through the group (forwarded to the leader when this node is
    /// not) and returns once it is applied here, with its epoch. Fails with `Conflict` (after
    /// the winning epoch is applied here) when a compare-and-set does not hold, `Rejected`
    /// when it can never apply, `NoQuorum` when no majority answers within the commit timeout.
    pub async fn commit(&self, transformation: Transformation) -> Result<u64, MetadataError> {
        self.commit_within(transformation, self.core.config.commit_timeout)
            .await
    }

    /// [`commit`](Self::commit) within `limit` instead of the commit timeout: a client
    /// request that must answer before its driver gives up.
    pub async fn commit_within(
        &self,
        transformation: Transformation,
        limit: Duration,
    ) -> Result<u64, MetadataError> {
        let deadline = Instant::now() + limit;
        let kind = transformation.kind();
        let outcome = self
            .core
            .propose(Command::Apply(transformation), deadline)
            .await?;
        let result = self.core.settle(outcome, deadline).await;
        tracing::debug!("metadata commit of {kind}: {result:?}");
        result
    }

    /// Commits a change that takes this node out of the metadata group (a decommissioned
    /// node's own `RemoveNode`): the leader's answer is the outcome, without waiting for this
    /// node to apply it, which a node no longer in the group may never do.
    pub async fn commit_leaving(
        &self,
        transformation: Transformation,
    ) -> Result<u64, MetadataError> {
        let deadline = Instant::now() + self.core.config.commit_timeout;
        match self
            .core
            .propose(Command::Apply(transformation), deadline)
            .await?
        {
            Outcome::Applied { epoch } => Ok(epoch),
            other => self.core.settle(other, deadline).await,
        }
    }

    /// The metadata as applied on this node.
    pub fn current(&self) -> Arc<ClusterMetadata> {
        self.core.state.borrow().clone()
    }

    /// Every new state as it is applied on this node.
    pub fn watch(&self) -> watch::Receiver<Arc<ClusterMetadata>> {
        self.core.state.clone()
    }

    /// Waits until this node has applied `epoch`.
    pub async fn await_epoch(&self, epoch: u64, timeout: Duration) -> Result<(), MetadataError> {
        self.core.await_epoch(epoch, Instant::now() + timeout).await
    }

    pub fn status(&self) -> RaftStatus {
        RaftStatus::from_metrics(&self.core.metrics(), self.current().epoch)
    }

    pub fn host_id(&self) -> HostId {
        self.core.me.0
    }

    /// Stops the background tasks and the Raft node; later calls fail with `Shutdown`.
    pub async fn shutdown(&self) {
        for task in self.tasks.lock().drain(..) {
            task.abort();
        }
        if let Err(e) = self.core.raft.shutdown().await {
            tracing::warn!("metadata group: Raft did not stop cleanly: {e}");
        }
    }
}

impl Drop for MetadataService {
    fn drop(&mut self) {
        for task in self.tasks.get_mut().drain(..) {
            task.abort();
        }
    }
}

/// A restarted sole voter elects itself at once and applies its whole log before start-up
/// returns; members of larger groups wait for the leader's heartbeat.
async fn resume(core: &Core) -> Result<(), MetadataError> {
    let metrics = core.metrics();
    let voters: Vec<NodeId> = metrics.membership_config.membership().voter_ids().collect();
    if voters != [core.me] {
        return Ok(());
    }
    if metrics.state != ServerState::Leader {
        core.raft
            .trigger()
            .elect()
            .await
            .map_err(|e| MetadataError::Storage(e.to_string()))?;
    }
    let wait = core.raft.wait(Some(core.config.commit_timeout));
    let metrics = wait
        .state(ServerState::Leader, "resume")
        .await
        .map_err(|e| MetadataError::NoQuorum(e.to_string()))?;
    wait.applied_index_at_least(metrics.last_log_index, "resume")
        .await
        .map_err(|e| MetadataError::Storage(e.to_string()))?;
    discovery::seed_if_pristine(core).await
}
