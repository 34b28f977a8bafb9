//! Hands the virtual tables what other parts of the node know: the transport's live
//! connections (`system_views.clients`), the configuration (`settings`) and the admin API's
//! pools (`thread_pools`).
use std::sync::Arc;

use admin::AdminNode;
use query::virtual_tables::{ConnectedClient, NodeSources, ThreadPool};
use transport::ClientInfo;

/// Installs the sources into the node's query processor. The admin node is held weakly (it
/// holds the processor).
pub fn install(node: &Arc<AdminNode>) {
    let clients = Arc::clone(&node.clients);
    let config = Arc::clone(&node.config);
    let admin = Arc::downgrade(node);
    node.processor.virtual_tables().install(NodeSources {
        clients: Some(Box::new(move || {
            clients.snapshot().iter().map(connected).collect()
        })),
        settings: Some(Box::new(move || {
            config
                .settings()
                .into_iter()
                .map(|(name, value)| (name.to_string(), value))
                .collect()
        })),
        thread_pools: Some(Box::new(move || {
            admin
                .upgrade()
                .map(|node| admin::tpstats(&node).into_iter().map(pool).collect())
                .unwrap_or_default()
        })),
    });
}

fn connected(info: &ClientInfo) -> ConnectedClient {
    ConnectedClient {
        address: info.peer,
        protocol_version: (info.protocol_version > 0).then_some(info.protocol_version),
        driver_name: info.driver.driver_name.clone(),
        driver_version: info.driver.driver_version.clone(),
        keyspace: info.keyspace.clone(),
        request_count: info.request_count,
        options: info.driver.options.clone(),
    }
}

fn pool(stats: admin::types::PoolStats) -> ThreadPool {
    ThreadPool {
        name: stats.name,
        active: stats.active,
        pending: stats.pending,
        completed: stats.completed,
        blocked: stats.blocked,
        blocked_all_time: stats.all_time_blocked,
    }
}
