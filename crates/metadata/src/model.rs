//! The cluster's metadata as every node holds it: one immutable value per epoch (Cassandra's
//! CEP-21 `ClusterMetadata`), and the transformations that move it from one epoch to the next.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// A node's permanent identity (Cassandra's host id).
pub type HostId = uuid::Uuid;

/// Where a node is in its life in the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NodeState {
    Joining,
    Normal,
    Leaving,
    Left,
}

/// One node of the ring as the metadata log records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRecord {
    pub host_id: HostId,
    /// listen_address:storage_port (internode messaging).
    pub addr: SocketAddr,
    /// The native protocol (CQL) address drivers connect to.
    pub native: SocketAddr,
    pub dc: String,
    pub rack: String,
    pub tokens: Vec<i64>,
    pub state: NodeState,
    pub release_version: String,
}

/// A keyspace's definition (opaque bytes: the query layer owns the encoding) and the epoch of
/// its last change, which a later change names as its `expect`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyspaceEntry {
    pub version: u64,
    pub definition: Bytes,
}

/// Schema and topology at one epoch. Epoch 0 is the state before the group was founded; every
/// applied transformation adds one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterMetadata {
    pub epoch: u64,
    pub cluster_name: String,
    pub schema: BTreeMap<String, KeyspaceEntry>,
    pub nodes: BTreeMap<HostId, NodeRecord>,
    /// The epoch of the last topology change (0: none yet); `RegisterNode` names it.
    pub topology_version: u64,
}

impl ClusterMetadata {
    /// The state of a new cluster with nothing in it.
    pub fn empty(cluster_name: &str) -> Self {
        ClusterMetadata {
            cluster_name: cluster_name.to_string(),
            ..ClusterMetadata::default()
        }
    }

    /// The node registered with this internode address, if any.
    pub fn node_at(&self, addr: SocketAddr) -> Option<&NodeRecord> {
        self.nodes.values().find(|node| node.addr == addr)
    }

    /// Every token of the ring and its owner, in token order (nodes that left own none).
    pub fn token_owners(&self) -> BTreeMap<i64, HostId> {
        self.nodes
            .values()
            .filter(|node| node.state != NodeState::Left)
            .flat_map(|node| node.tokens.iter().map(|token| (*token, node.host_id)))
            .collect()
    }
}

/// One change of the cluster's metadata. Each one is checked against the state it is applied
/// to (compare-and-set), so two nodes planning the same change at once see one succeed and the
/// other fail with a `Conflict`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Transformation {
    /// Create (`expect: None`: the keyspace must not exist) or replace (`expect: Some(version)`:
    /// its version must be that) a keyspace definition.
    SaveKeyspace {
        name: String,
        definition: Bytes,
        expect: Option<u64>,
    },
    /// Drop a keyspace whose version is `expect`.
    DropKeyspace {
        name: String,
        expect: u64,
    },
    /// Add or update a node; rejected when one of its tokens or its address belongs to another
    /// node, a conflict when `expect_topology` is not the current topology version.
    RegisterNode {
        node: NodeRecord,
        expect_topology: u64,
    },
    SetNodeState {
        host_id: HostId,
        state: NodeState,
    },
    /// Forget a node; it also leaves the metadata group.
    RemoveNode {
        host_id: HostId,
    },
}

impl Transformation {
    /// A short name for logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Transformation::SaveKeyspace { .. } => "SaveKeyspace",
            Transformation::DropKeyspace { .. } => "DropKeyspace",
            Transformation::RegisterNode { .. } => "RegisterNode",
            Transformation::SetNodeState { .. } => "SetNodeState",
            Transformation::RemoveNode { .. } => "RemoveNode",
        }
    }
}
