//! The messages metadata group members exchange (encoded with `codec`).

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use crate::founding::{FoundingReply, FoundingStep};
use crate::model::HostId;
use crate::raft_log::snapshot_file::StoredSnapshot;
use crate::raft_types::{NodeId, Vote};
use crate::transform::{Command, Outcome};

/// A Raft RPC, addressed to one member: a node at the same address with another host id
/// (wiped and restarted) refuses it.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct RaftRequest<T> {
    pub to: NodeId,
    pub body: T,
}

/// A whole snapshot for a follower too far behind the log.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SnapshotRequest {
    pub vote: Vote,
    pub snapshot: StoredSnapshot,
}

/// A member of the group and where to reach it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Peer {
    pub host_id: HostId,
    pub addr: SocketAddr,
}

/// Work for the leader (Verb::MetadataForward).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum ForwardRequest {
    /// Commit a command; give up after `timeout_ms`.
    Commit { command: Command, timeout_ms: u64 },
    /// Add the sender to the group as a learner.
    Join {
        peer: Peer,
        cluster_name: String,
        timeout_ms: u64,
    },
}

/// The leader's answer.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum ForwardReply {
    Done(Outcome),
    /// Ask this one instead (None: no leader known).
    NotLeader(Option<Peer>),
    NoQuorum(String),
    Failed(String),
}

/// "Are you in a metadata group, and who leads it?" (Verb::MetadataDiscover), with a step of
/// choosing a founder when no group exists yet.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct DiscoverRequest {
    pub from: Peer,
    pub cluster_name: String,
    pub step: FoundingStep,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DiscoverReply {
    pub me: Peer,
    pub cluster_name: String,
    pub in_group: bool,
    pub leader: Option<Peer>,
    pub founding: FoundingReply,
}
