//! [`AdminNode`]: the handles the admin API works with, and [`NativeStats`], the native
//! transport's request counters (the `Native-Transport-Requests` pool of `tpstats`).

use gossip::Membership;
use metadata::MetadataService;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use config::Config;
use coordinator::Coordinator;
use query::QueryProcessor;
use storage::Storage;
use transport::{Clients, Limits};

use crate::api::logging::LogLevels;
use crate::lifecycle::Lifecycle;

/// Requests of the native transport: in flight and completed.
#[derive(Debug, Default)]
pub struct NativeStats {
    active: AtomicU64,
    completed: AtomicU64,
}

impl NativeStats {
    /// Counts a request in flight until the returned guard is dropped.
    pub fn start(self: &Arc<Self>) -> RequestGuard {
        self.active.fetch_add(1, Ordering::Relaxed);
        RequestGuard(self.clone())
    }

    pub fn active(&self) -> u64 {
        self.active.load(Ordering::Relaxed)
    }

    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::Relaxed)
    }
}

/// One native-transport request in flight.
pub struct RequestGuard(Arc<NativeStats>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::Relaxed);
        self.0.completed.fetch_add(1, Ordering::Relaxed);
    }
}

/// Everything the admin API reads and controls.
pub struct AdminNode {
    pub storage: Arc<Storage>,
    pub coordinator: Arc<Coordinator>,
    pub processor: Arc<QueryProcessor>,
    pub config: Arc<Config>,
    pub clients: Arc<Clients>,
    pub native: Arc<NativeStats>,
    /// The native transport's overload limits and their figures.
    pub native_limits: Arc<Limits>,
    pub lifecycle: Arc<Lifecycle>,
    /// The cluster metadata group (a one-member group on a node that runs alone).
    pub metadata: Arc<MetadataService>,
    /// This node's part in topology changes (decommission, removenode, the operation mode).
    pub nodeops: Arc<nodeops::NodeOps>,
    /// Gossip, on a node with seeds.
    pub gossip: Option<Arc<dyn Membership>>,
    /// Internode messaging, on a node with seeds (its dropped messages in `tpstats`).
    pub messaging: Option<Arc<net::Messaging>>,
    /// Streaming, on a node with seeds (`netstats`, `rebuild`, the stream throttles).
    pub streaming: Option<Arc<streaming::Streaming>>,
    /// Repair, on a node with seeds (`nodetool repair`).
    pub repair: Option<Arc<repair::Repair>>,
    /// The repair scheduler (`auto_repair`, `nodetool autorepairstatus`).
    pub auto_repair: crate::api::auto_repair::AutoRepair,
    /// The run-time log levels (`nodetool getlogginglevels`, `setlogginglevel`).
    pub logging: Arc<dyn LogLevels>,
    pub started: Instant,
    /// Seconds since the epoch at start (Cassandra's gossip generation number).
    pub generation: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_move_from_active_to_completed() {
        let stats = Arc::new(NativeStats::default());
        let guard = stats.start();
        assert_eq!((stats.active(), stats.completed()), (1, 0));
        drop(guard);
        assert_eq!((stats.active(), stats.completed()), (0, 1));
    }
}
