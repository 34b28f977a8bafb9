//! The cluster's metadata as every node holds it: one immutable value per epoch (Cassandra's
//! CEP-21 `ClusterMetadata`), and the transformations that move it from one epoch to the next.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::repair_lease::{RepairLease, RepairLedger};

/// A node's permanent identity (Cassandra's host id).
pub type HostId = uuid::Uuid;

/// Where a node is in its life in the ring. Joining and Replacing nodes are pending owners:
/// writes reach them, reads do not; a Leaving node still serves reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NodeState {
    Joining,
    Normal,
    Leaving,
    Left,
    /// Taking over the tokens of the node named (`replace_address_first_boot`), which keeps
    /// them until the replacement finishes.
    Replacing(HostId),
}

impl NodeState {
    /// Whether a node in this state is part of a topology change under way.
    pub fn is_moving(self) -> bool {
        matches!(
            self,
            NodeState::Joining | NodeState::Leaving | NodeState::Replacing(_)
        )
    }
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
    /// The repairs running and the scheduler's history (`repair_lease`).
    pub repair: RepairLedger,
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

    /// The node of a topology change under way (joining, leaving or replacing), if any.
    pub fn moving_node(&self) -> Option<&NodeRecord> {
        self.nodes.values().find(|node| node.state.is_moving())
    }

    /// Every token of the ring and its owner, in token order (nodes that left own none; the
    /// tokens of a node being replaced are its own until the replacement finishes).
    pub fn token_owners(&self) -> BTreeMap<i64, HostId> {
        self.nodes
            .values()
            .filter(|node| !matches!(node.state, NodeState::Left | NodeState::Replacing(_)))
            .flat_map(|node| node.tokens.iter().map(|token| (*token, node.host_id)))
            .collect()
    }
}

/// A keyspace's replication factor that a leaving node must leave enough nodes for (the
/// schema is opaque here: the planner of the change names them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicationCheck {
    pub keyspace: String,
    pub rf: u32,
    /// Counted in the leaving node's data center (NetworkTopologyStrategy), else the ring.
    pub per_dc: bool,
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
    /// A new node takes its tokens as a pending owner (Joining). Refused while another
    /// topology change runs (one at a time: two could overlap their ranges), for a node
    /// already in the ring, and for a token or address of another node.
    StartJoin {
        node: Box<NodeRecord>,
    },
    /// A Joining or Replacing node owns its ranges (Normal); the node it replaced goes.
    FinishJoin {
        host_id: HostId,
    },
    /// A Normal node starts leaving the ring (decommission, removenode). Refused while another
    /// topology change runs, when it is the only Normal node, or when a keyspace of `checks`
    /// would keep fewer nodes than its replication factor (none for `--force`).
    StartLeave {
        host_id: HostId,
        checks: Vec<ReplicationCheck>,
    },
    /// A Leaving node has handed its ranges over: it owns nothing (Left).
    FinishLeave {
        host_id: HostId,
    },
    /// A new node (`Replacing(replaces)`) takes the tokens of `replaces`, a Normal node, with
    /// the same address or another. Refused while another topology change runs.
    StartReplace {
        node: Box<NodeRecord>,
        replaces: HostId,
    },
    /// A repair claims its ranges (`repair_lease`): refused while a live lease overlaps it, or
    /// for a scheduled one while another scheduled one lives. `now_ms` is the proposer's clock.
    TakeRepairLease {
        lease: Box<RepairLease>,
        now_ms: u64,
    },
    /// The holder of a running repair extends its lease; rejected once the lease is gone.
    RenewRepairLease {
        id: uuid::Uuid,
        expires_ms: u64,
    },
    /// A repair ended; `repaired_ms` records its ranges in the scheduler's history.
    EndRepairLease {
        lease: Box<RepairLease>,
        repaired_ms: Option<u64>,
    },
    /// A restarted node drops the leases its repairs held before.
    DropRepairLeases {
        holder: HostId,
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
            Transformation::StartJoin { .. } => "StartJoin",
            Transformation::FinishJoin { .. } => "FinishJoin",
            Transformation::StartLeave { .. } => "StartLeave",
            Transformation::FinishLeave { .. } => "FinishLeave",
            Transformation::StartReplace { .. } => "StartReplace",
            Transformation::TakeRepairLease { .. } => "TakeRepairLease",
            Transformation::RenewRepairLease { .. } => "RenewRepairLease",
            Transformation::EndRepairLease { .. } => "EndRepairLease",
            Transformation::DropRepairLeases { .. } => "DropRepairLeases",
        }
    }
}
