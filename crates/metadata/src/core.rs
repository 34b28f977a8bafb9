//! What the service, its handlers and its background tasks share: the Raft node, the
//! transport, the applied state; and the committer's side of a commit (find the leader, hand
//! it the command, wait for the outcome to be applied here).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use openraft::ServerState;
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::codec::{decode, encode};
use crate::config::MetadataConfig;
use crate::error::MetadataError;
use crate::founding::{Acceptor, FoundingReply};
use crate::leader;
use crate::model::ClusterMetadata;
use crate::raft_types::{Metrics, NodeId, Raft};
use crate::rpc::{DiscoverReply, ForwardReply, ForwardRequest, Peer};
use crate::transform::{Command, Outcome};
use crate::transport::{RpcKind, Transport};

/// Longest pause between two tries of a commit that found no leader.
const RETRY_PAUSE: Duration = Duration::from_millis(50);
const NO_LEADER: &str = "no leader of the metadata group is known";

pub(crate) struct Core {
    pub config: MetadataConfig,
    pub me: NodeId,
    pub raft: Raft,
    pub transport: Option<Arc<dyn Transport>>,
    pub state: watch::Receiver<Arc<ClusterMetadata>>,
    /// The state a group founded by this node starts from (the upgrade path), until used.
    pub initial: Mutex<Option<ClusterMetadata>>,
    /// This node's part in choosing the founder of a new group.
    pub founding: Acceptor,
}

/// Who leads the group, as this node sees it.
pub(crate) enum Leader {
    Me,
    Peer(Peer),
    Unknown,
}

impl Core {
    pub fn metrics(&self) -> Metrics {
        self.raft.metrics().borrow().clone()
    }

    pub fn me_peer(&self) -> Peer {
        Peer {
            host_id: self.me.0,
            addr: self.config.addr,
        }
    }

    /// The member `id` and its address, from the group's membership.
    pub fn peer(metrics: &Metrics, id: NodeId) -> Option<Peer> {
        let node = metrics.membership_config.membership().get_node(&id)?;
        Some(Peer {
            host_id: id.0,
            addr: node.addr,
        })
    }

    pub fn leader(&self) -> Leader {
        let metrics = self.metrics();
        match metrics.current_leader {
            Some(id) if id == self.me && metrics.state == ServerState::Leader => Leader::Me,
            Some(id) if id != self.me => {
                Core::peer(&metrics, id).map_or(Leader::Unknown, Leader::Peer)
            }
            _ => Leader::Unknown,
        }
    }

    /// What this node answers a discovery call, with `founding` as its founding answer.
    pub fn discover_reply(&self, founding: FoundingReply) -> DiscoverReply {
        let metrics = self.metrics();
        // A node that knows of a group (even one that removed it) says so: a joiner must not
        // found another group because of it.
        let knows_group = metrics
            .membership_config
            .membership()
            .nodes()
            .next()
            .is_some();
        DiscoverReply {
            me: self.me_peer(),
            cluster_name: self.config.cluster_name.clone(),
            in_group: knows_group,
            leader: metrics
                .current_leader
                .and_then(|id| Core::peer(&metrics, id)),
            founding,
        }
    }

    /// Whether this node is a member (voter or learner) of a group.
    pub fn in_group(&self) -> bool {
        let metrics = self.metrics();
        let membership = metrics.membership_config.membership();
        membership.get_node(&self.me).is_some()
    }

    pub fn is_shut_down(&self) -> bool {
        let metrics = self.metrics();
        metrics.running_state.is_err() || metrics.state == ServerState::Shutdown
    }

    /// Commits `command` through the leader before `deadline`; the outcome as applied there.
    pub async fn propose(
        &self,
        command: Command,
        deadline: Instant,
    ) -> Result<Outcome, MetadataError> {
        let mut metrics = self.raft.metrics();
        let mut problem = NO_LEADER.to_string();
        let mut hint: Option<Peer> = None;
        loop {
            if self.is_shut_down() {
                return Err(MetadataError::Shutdown);
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(self.no_quorum(&problem));
            }
            metrics.borrow_and_update();
            match self.attempt(hint.take(), &command, remaining).await {
                ForwardReply::Done(outcome) => return Ok(outcome),
                ForwardReply::NoQuorum(message) => return Err(MetadataError::NoQuorum(message)),
                ForwardReply::NotLeader(Some(peer)) => {
                    problem = format!("the leader moved (now {} at {})", peer.host_id, peer.addr);
                    hint = Some(peer);
                }
                ForwardReply::NotLeader(None) => problem = NO_LEADER.to_string(),
                ForwardReply::Failed(message) => problem = message,
            }
            // Try again after a pause, or as soon as this node learns of a new leader.
            let pause = RETRY_PAUSE.min(deadline.saturating_duration_since(Instant::now()));
            let _ = tokio::time::timeout(pause, metrics.changed()).await;
        }
    }

    /// One try: hand `command` to the leader (`hint`, or the one this node knows).
    async fn attempt(
        &self,
        hint: Option<Peer>,
        command: &Command,
        remaining: Duration,
    ) -> ForwardReply {
        let target = match hint {
            Some(peer) if peer.host_id != self.me.0 => Leader::Peer(peer),
            _ => self.leader(),
        };
        match target {
            Leader::Me => leader::execute(self, command.clone(), remaining).await,
            Leader::Peer(peer) => self.forward(peer, command, remaining).await,
            Leader::Unknown => ForwardReply::NotLeader(None),
        }
    }

    /// Hands `command` to the leader at `peer`.
    async fn forward(&self, peer: Peer, command: &Command, remaining: Duration) -> ForwardReply {
        let Some(transport) = &self.transport else {
            return ForwardReply::Failed("this node runs without internode messaging".to_string());
        };
        let request = ForwardRequest::Commit {
            command: command.clone(),
            timeout_ms: remaining.as_millis() as u64,
        };
        let payload = match encode(&request) {
            Ok(payload) => Bytes::from(payload),
            Err(e) => return ForwardReply::Failed(format!("cannot encode the change: {e}")),
        };
        match transport
            .call(peer.addr, RpcKind::Forward, payload, remaining)
            .await
        {
            Ok(answer) => decode(&answer).unwrap_or_else(|e| {
                ForwardReply::Failed(format!("bad answer from the leader at {}: {e}", peer.addr))
            }),
            Err(e) => {
                ForwardReply::Failed(format!("leader {} at {}: {e}", peer.host_id, peer.addr))
            }
        }
    }

    /// Waits until the outcome's epoch is applied here, then reports it.
    pub async fn settle(&self, outcome: Outcome, deadline: Instant) -> Result<u64, MetadataError> {
        match outcome {
            Outcome::Applied { epoch } => {
                self.await_epoch(epoch, deadline).await?;
                Ok(epoch)
            }
            Outcome::Conflict { current_epoch } => {
                self.await_epoch(current_epoch, deadline).await?;
                Err(MetadataError::Conflict { current_epoch })
            }
            Outcome::Rejected(reason) => Err(MetadataError::Rejected(reason)),
            Outcome::Nothing => Err(MetadataError::Rejected(
                "the change produced no outcome".to_string(),
            )),
        }
    }

    pub async fn await_epoch(&self, epoch: u64, deadline: Instant) -> Result<(), MetadataError> {
        let mut state = self.state.clone();
        let reached = state.wait_for(|metadata| metadata.epoch >= epoch);
        let result = tokio::time::timeout_at(deadline, reached)
            .await
            .map(|waited| waited.is_ok());
        match result {
            Ok(true) => Ok(()),
            Ok(false) => Err(MetadataError::Shutdown),
            Err(_) => Err(MetadataError::Timeout),
        }
    }

    fn no_quorum(&self, problem: &str) -> MetadataError {
        let metrics = self.metrics();
        let voters: Vec<String> = metrics
            .membership_config
            .membership()
            .voter_ids()
            .map(|id| Core::peer(&metrics, id).map_or(id.to_string(), |p| p.addr.to_string()))
            .collect();
        MetadataError::NoQuorum(format!(
            "could not commit: {problem}; a majority of the {} voters ({}) must be reachable",
            voters.len(),
            voters.join(", ")
        ))
    }
}
