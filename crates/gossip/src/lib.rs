//! Membership and failure detection: which nodes exist, which are up, and the facts they
//! advertise (addresses, data center, rack, load, versions, status).
//!
//! Built on chitchat (scuttlebutt gossip with a phi-accrual failure detector) behind the small
//! [`Membership`] trait. chitchat's messages travel over a [`Wire`]: the internode `net` crate
//! (`Verb::Gossip`, one-way, urgent class; feature `net`), on TCP in production and on turmoil's
//! simulated network (`net::TurmoilNetwork`) in tests.
//! Gossip never carries authoritative metadata: tokens and schema live in the `metadata` crate.
//!
//! Timing (why a stopped node is marked down within ~10 s with the defaults) is explained in
//! [`config`].

pub mod config;
pub mod keys;
#[cfg(feature = "net")]
pub mod net_wire;

mod gossiper;
mod partners;
mod view;
mod wire;

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

use tokio::sync::broadcast;

pub use config::{GossipConfig, GossipError};
pub use gossiper::Gossiper;
pub use wire::{GossipStats, Wire, WireError};

/// A node's identity, kept across restarts (the same type as `net::HostId`).
pub type HostId = uuid::Uuid;

/// A change in this node's view of a peer, sent once per transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MembershipEvent {
    /// The peer is up (first seen up, back after being down, or restarted).
    Alive(SocketAddr),
    /// The peer is down: convicted by the failure detector, announced `status=shutdown`, or its
    /// previous process was replaced by a restart.
    Dead(SocketAddr),
    /// The peer's advertised state changed (or it was first seen, or restarted).
    Changed(SocketAddr),
    /// The peer was forgotten (no node has heard of it for the dead-node grace period).
    Removed(SocketAddr),
}

/// One endpoint as this node sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointView {
    /// The endpoint's listen address (listen_address:storage_port).
    pub addr: SocketAddr,
    pub host_id: Option<HostId>,
    pub alive: bool,
    /// Start time of the endpoint's gossip, in milliseconds since the epoch (Cassandra counts
    /// seconds; milliseconds keep a quick restart distinct).
    pub generation: u64,
    pub heartbeat: u64,
    pub state: BTreeMap<String, String>,
}

impl EndpointView {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.state.get(key).map(String::as_str)
    }

    pub fn status(&self) -> Option<keys::Status> {
        self.get(keys::STATUS).and_then(keys::Status::parse)
    }
}

/// What the rest of the node needs from gossip.
pub trait Membership: Send + Sync + 'static {
    /// Sets one of this node's advertised keys ("schema_version", "load", "status", ...).
    fn set_local(&self, key: &str, value: String);
    /// Every known endpoint, this node included.
    fn endpoints(&self) -> Vec<EndpointView>;
    /// Every known endpoint by its IP address.
    fn endpoints_by_ip(&self) -> BTreeMap<IpAddr, EndpointView> {
        self.endpoints()
            .into_iter()
            .map(|v| (v.addr.ip(), v))
            .collect()
    }
    /// Whether the endpoint at this address is up; this node is up while gossip runs.
    fn is_alive(&self, addr: IpAddr) -> bool;
    fn subscribe(&self) -> broadcast::Receiver<MembershipEvent>;
    /// `nodetool disablegossip`: announce `status=shutdown` and stop gossiping.
    fn stop(&self);
    /// `nodetool enablegossip`: gossip again, under a new generation.
    fn start(&self);
    /// `nodetool statusgossip`.
    fn is_running(&self) -> bool;
}
