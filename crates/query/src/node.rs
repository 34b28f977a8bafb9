//! What this node is, as `system.local` and DESCRIBE report it.
use std::net::IpAddr;

use uuid::Uuid;

/// What this node is, as `system.local` reports it.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    pub cluster_name: String,
    pub listen_address: IpAddr,
    pub rpc_address: IpAddr,
    pub native_port: u16,
    pub storage_port: u16,
    pub data_center: String,
    pub rack: String,
    pub release_version: String,
    /// This node's tokens: `initial_token`, else the ones saved in `system.local` by an
    /// earlier start; empty until the node takes its place in the ring.
    pub tokens: Vec<i64>,
    /// Set from `system.local` (or generated on first start).
    pub host_id: Uuid,
}

/// The Cassandra release whose behaviour Helenus reproduces (drivers read it).
pub const RELEASE_VERSION: &str = "5.0.4";
/// The CQL version `system.local` reports.
pub const CQL_VERSION: &str = "3.4.7";
