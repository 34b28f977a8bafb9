//! What the coordinator needs to reach other nodes, attached once the node's cluster services
//! have started: internode messaging, the hints service, and the metadata epoch messages carry.
//! A node running alone has none of it and keeps every request local.
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use hints::HintsService;
use net::Messaging;

use crate::trace::TraceSink;

/// The metadata epoch this node has applied.
pub type EpochSource = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Waits (at most the given time) until this node has applied a metadata epoch.
pub type EpochWaiter =
    Arc<dyn Fn(u64, Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// The cluster as the coordinator reaches it.
pub struct Remote {
    pub messaging: Arc<Messaging>,
    /// Every node's internode port (Cassandra's storage_port, the same on every node).
    pub storage_port: u16,
    pub epoch: EpochSource,
    pub await_epoch: EpochWaiter,
}

impl Remote {
    /// The internode address of the node at `addr`.
    pub fn peer(&self, addr: IpAddr) -> SocketAddr {
        SocketAddr::new(addr, self.storage_port)
    }
}

/// The optional services, each set at most once.
#[derive(Default)]
pub(crate) struct Attachments {
    pub remote: std::sync::OnceLock<Remote>,
    pub hints: std::sync::OnceLock<Arc<HintsService>>,
    /// Writes the events this node traces as a replica of other nodes' sessions.
    pub traces: std::sync::OnceLock<Arc<dyn TraceSink>>,
}
