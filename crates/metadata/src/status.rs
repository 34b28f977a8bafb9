//! What the group looks like from this node (for nodetool and the admin API).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use openraft::ServerState;

use crate::model::HostId;
use crate::raft_types::Metrics;

/// This node's role in the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaftRole {
    Leader,
    Follower,
    Candidate,
    Learner,
    Shutdown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaftStatus {
    pub host_id: HostId,
    pub role: RaftRole,
    pub leader: Option<HostId>,
    pub term: u64,
    pub voters: Vec<HostId>,
    pub learners: Vec<HostId>,
    /// Every member and its internode address.
    pub members: BTreeMap<HostId, SocketAddr>,
    /// Index of the last entry in the local log (the first entry has index 0).
    pub last_log_index: Option<u64>,
    pub applied_index: Option<u64>,
    /// Last entry covered by the local snapshot.
    pub snapshot_index: Option<u64>,
    /// Entries up to here are gone from the local log (covered by the snapshot).
    pub purged_index: Option<u64>,
    /// The epoch of the locally applied metadata.
    pub epoch: u64,
}

impl RaftStatus {
    pub(crate) fn from_metrics(metrics: &Metrics, epoch: u64) -> RaftStatus {
        let membership = metrics.membership_config.membership();
        let role = match metrics.state {
            ServerState::Leader => RaftRole::Leader,
            ServerState::Follower => RaftRole::Follower,
            ServerState::Candidate => RaftRole::Candidate,
            ServerState::Learner => RaftRole::Learner,
            ServerState::Shutdown => RaftRole::Shutdown,
        };
        RaftStatus {
            host_id: metrics.id.0,
            role,
            leader: metrics.current_leader.map(|id| id.0),
            term: metrics.current_term,
            voters: membership.voter_ids().map(|id| id.0).collect(),
            learners: membership.learner_ids().map(|id| id.0).collect(),
            members: membership
                .nodes()
                .map(|(id, node)| (id.0, node.addr))
                .collect(),
            last_log_index: metrics.last_log_index,
            applied_index: metrics.last_applied.map(|id| id.index),
            snapshot_index: metrics.snapshot.map(|id| id.index),
            purged_index: metrics.purged.map(|id| id.index),
            epoch,
        }
    }
}
