//! Cluster metadata: the cluster's schema and topology held in a Raft group (openraft) as one
//! ordered log of epochs, as ScyllaDB's group 0 and Cassandra's cluster metadata service
//! (CEP-21) do. Every node applies the same transformations in the same order to the same
//! `ClusterMetadata` value; schema definitions are opaque bytes (the query layer owns them).
//!
//! - `model`: `ClusterMetadata`, `NodeRecord`, `Transformation`;
//! - `transform`: applying a transformation (compare-and-set, deterministic);
//! - `repair_lease`: the leases repairs take so that none overlaps another and the built-in
//!   scheduler repairs one range at a time across the cluster, and the scheduler's history
//!   (why the log: see the module);
//! - `service`: `MetadataService` (start, commit, current, watch, await_epoch, status);
//! - `core`, `leader`, `handlers`, `network`, `rpc`: committing through the leader, the Raft
//!   RPCs over a `Transport`;
//! - `discovery`, `founding`, `promote`: forming the group (the seeds choose its founder by
//!   Paxos), learners becoming voters;
//! - `storage`, `state_machine`: the log, vote and snapshots on disk;
//! - `transport`, `net_transport` (feature `net`): the network seam and its adapter to
//!   `net::Messaging` (on TCP in production, on turmoil's network in the tests).

mod codec;
mod config;
mod core;
mod discovery;
mod error;
mod founding;
mod handlers;
mod leader;
mod model;
#[cfg(feature = "net")]
mod net_transport;
mod network;
mod promote;
mod raft_log;
mod raft_runtime;
mod raft_types;
mod repair_lease;
mod rpc;
mod service;
mod state_machine;
mod status;
mod transform;
mod transport;

pub use config::{settled_voters, MetadataConfig, MAX_VOTERS};
pub use error::MetadataError;
pub use model::{
    ClusterMetadata, HostId, KeyspaceEntry, NodeRecord, NodeState, ReplicationCheck, Transformation,
};
#[cfg(feature = "net")]
pub use net_transport::NetTransport;
pub use raft_runtime::seed_election_timeouts;
pub use repair_lease::{RepairLease, RepairLedger};
pub use service::MetadataService;
pub use status::{RaftRole, RaftStatus};
pub use transport::{RpcHandler, RpcKind, Transport, TransportError};
