//! The concrete types the openraft group runs with.

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};

use serde::{Deserialize, Serialize};

use crate::model::HostId;
use crate::transform::{Command, Outcome};

/// A member of the group: the node's host id.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub(crate) struct NodeId(pub HostId);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Small numbers as host ids (openraft's storage test suite names nodes 0, 1, 2, ...).
#[cfg(test)]
impl From<u64> for NodeId {
    fn from(n: u64) -> Self {
        NodeId(HostId::from_u64_pair(0, n))
    }
}

/// What the group records about a member: where to reach it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PeerNode {
    pub addr: SocketAddr,
}

impl Default for PeerNode {
    fn default() -> Self {
        PeerNode {
            addr: SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
        }
    }
}

openraft::declare_raft_types!(
    /// The metadata group's openraft configuration.
    pub(crate) TypeConfig:
        D = Command,
        R = Outcome,
        NodeId = NodeId,
        Node = PeerNode,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = Vec<u8>,
        AsyncRuntime = crate::raft_runtime::Runtime,
);

pub(crate) type Raft = openraft::Raft<TypeConfig>;
pub(crate) type Entry = openraft::Entry<TypeConfig>;
pub(crate) type LogId = openraft::LogId<NodeId>;
pub(crate) type Vote = openraft::Vote<NodeId>;
pub(crate) type StorageError = openraft::StorageError<NodeId>;
pub(crate) type StoredMembership = openraft::StoredMembership<NodeId, PeerNode>;
pub(crate) type SnapshotMeta = openraft::SnapshotMeta<NodeId, PeerNode>;
pub(crate) type Snapshot = openraft::storage::Snapshot<TypeConfig>;
pub(crate) type Metrics = openraft::RaftMetrics<NodeId, PeerNode>;
