//! A node takes its place in the ring: it waits until it is in the cluster metadata group, then
//! takes its tokens — the ones it held before, `initial_token`, or tokens allocated to balance
//! its data center (`allocate_tokens_for_local_replication_factor`) — and records them in
//! `system.local`. A new node that is not a seed, with `auto_bootstrap` (the default) and a
//! ring to join, bootstraps (`nodeops`: Joining, then Normal); with
//! `replace_address_first_boot` it replaces the dead node at that address, taking its tokens;
//! seeds, nodes with `auto_bootstrap: false` and the first nodes of a cluster register as
//! Normal at once. A restarted node keeps its host id and tokens, and goes on with a join it
//! had started.
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use config::Config;
use metadata::{
    ClusterMetadata, HostId, MetadataError, MetadataService, NodeRecord, NodeState, Transformation,
};
use nodeops::{endpoint_of, ring_of, NodeOps};
use query::{NodeInfo, QueryProcessor};
use ring::{allocate_tokens, random_tokens};

/// How often a node waiting for its seeds says so.
const WAIT_REPORT: Duration = Duration::from_secs(10);

/// A pause between attempts that found no majority.
const RETRY: Duration = Duration::from_millis(500);

/// Takes this node's place in the ring and returns its tokens.
pub async fn join(
    metadata: &MetadataService,
    processor: &QueryProcessor,
    config: &Config,
    ops: &NodeOps,
) -> Result<Vec<i64>, String> {
    wait_for_group(metadata, config).await;
    let node = processor.node();
    let meta = metadata.current();
    let known = meta.nodes.get(&node.host_id).map(|n| n.state);
    match known {
        Some(NodeState::Joining | NodeState::Replacing(_)) => ops.resume_join().await?,
        Some(NodeState::Left) => return Err(crate::decommissioned::REFUSAL.to_string()),
        Some(_) => return register(metadata, processor, config).await,
        None => match config.replace_address_first_boot {
            Some(dead) => {
                let replaces = replaced_node(&meta, dead, processor, ops)?;
                let mut record = node_record(node, &meta, config);
                record.tokens = meta.nodes[&replaces].tokens.clone();
                ops.replace(record, replaces).await?;
            }
            None if bootstraps(&meta, config) => {
                ops.bootstrap(node_record(node, &meta, config)).await?
            }
            None => return register(metadata, processor, config).await,
        },
    }
    let tokens = metadata
        .current()
        .nodes
        .get(&node.host_id)
        .map(|n| n.tokens.clone())
        .ok_or("this node is not in the ring after joining it")?;
    finish(processor, tokens).await
}

/// A new node bootstraps unless it is a seed, `auto_bootstrap` is off, or no node is in the
/// ring yet (a new cluster's first nodes).
fn bootstraps(meta: &ClusterMetadata, config: &Config) -> bool {
    let seed = config
        .seed_addresses()
        .iter()
        .any(|s| s.ip() == config.listen_address);
    let ring_exists = meta.nodes.values().any(|n| n.state == NodeState::Normal);
    config.auto_bootstrap && !seed && ring_exists
}

/// The host id of the Normal node at `dead`, which must be down (or this node's own address).
fn replaced_node(
    meta: &ClusterMetadata,
    dead: std::net::IpAddr,
    processor: &QueryProcessor,
    ops: &NodeOps,
) -> Result<HostId, String> {
    let node = meta
        .nodes
        .values()
        .find(|n| n.addr.ip() == dead && n.state != NodeState::Left)
        .ok_or_else(|| {
            format!("Cannot replace_address /{dead} because it doesn't exist in the ring")
        })?;
    let own = processor.node().listen_address == dead;
    if !own && ops.is_alive(dead) {
        return Err(format!(
            "Cannot replace a live node /{dead}. Make sure it is down before replacing it"
        ));
    }
    Ok(node.host_id)
}

/// Registers this node as Normal (or updates its record), retrying on conflict.
async fn register(
    metadata: &MetadataService,
    processor: &QueryProcessor,
    config: &Config,
) -> Result<Vec<i64>, String> {
    let node = processor.node();
    loop {
        let meta = metadata.current();
        let record = node_record(node, &meta, config);
        if meta.nodes.get(&node.host_id) == Some(&record) {
            return finish(processor, record.tokens).await;
        }
        let change = Transformation::RegisterNode {
            node: record.clone(),
            expect_topology: meta.topology_version,
        };
        match metadata.commit(change).await {
            Ok(_) => return finish(processor, record.tokens).await,
            Err(MetadataError::Conflict { .. }) => {}
            Err(e @ (MetadataError::NoQuorum(_) | MetadataError::Timeout)) => {
                tracing::warn!("cannot join the ring yet: {e}");
                tokio::time::sleep(RETRY).await;
            }
            Err(e) => return Err(format!("cannot join the ring: {e}")),
        }
    }
}

async fn finish(processor: &QueryProcessor, tokens: Vec<i64>) -> Result<Vec<i64>, String> {
    processor
        .set_local_tokens(&tokens)
        .await
        .map_err(|e| format!("cannot record this node's tokens: {e}"))?;
    Ok(tokens)
}

/// Waits until the node is in a metadata group (at once for a single node or a restart).
async fn wait_for_group(metadata: &MetadataService, config: &Config) {
    while metadata.await_epoch(1, WAIT_REPORT).await.is_err() {
        let seeds: Vec<String> = config
            .seed_addresses()
            .iter()
            .map(|s| s.to_string())
            .collect();
        tracing::info!(
            "waiting to join the cluster: no metadata group reached yet through the seeds {}",
            seeds.join(", ")
        );
    }
}

/// This node as the metadata log records it.
fn node_record(node: &NodeInfo, meta: &ClusterMetadata, config: &Config) -> NodeRecord {
    NodeRecord {
        host_id: node.host_id,
        addr: std::net::SocketAddr::new(node.listen_address, node.storage_port),
        native: std::net::SocketAddr::new(node.rpc_address, node.native_port),
        dc: node.data_center.clone(),
        rack: node.rack.clone(),
        tokens: tokens_for(node, meta, config),
        state: meta
            .nodes
            .get(&node.host_id)
            .map_or(NodeState::Normal, |known| known.state),
        release_version: node.release_version.clone(),
    }
}

/// The tokens this node has or takes: the log's record of it, then `initial_token` or the
/// saved ones, else newly chosen.
fn tokens_for(node: &NodeInfo, meta: &ClusterMetadata, config: &Config) -> Vec<i64> {
    if let Some(known) = meta.nodes.get(&node.host_id) {
        return known.tokens.clone();
    }
    if !node.tokens.is_empty() {
        return node.tokens.clone();
    }
    let count = config.num_tokens.max(1) as usize;
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let tokens = match config.allocate_tokens_for_local_replication_factor {
        Some(rf) => {
            let ring = ring_of(meta);
            let me = endpoint_of(
                node.host_id,
                node.listen_address,
                &node.data_center,
                &node.rack,
            );
            allocate_tokens(&ring, &me, count, rf as usize, seed)
        }
        None => random_tokens(count, seed),
    };
    tokens.into_iter().map(|t| t.0).collect()
}
