//! `GET /v1/node`, `/v1/cluster` and `/v1/version`: who this node is and what it holds.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use query::RELEASE_VERSION;
use ring::effective_ownership;

use storage::CacheStats;

use super::types::{CacheFigures, ClusterInfo, KeyspaceReplication, NodeInfo, Version};
use crate::node::AdminNode;

/// Keyspaces whose replication `status` ignores (Cassandra's local system keyspaces).
const LOCAL_KEYSPACES: [&str; 4] = [
    "system",
    "system_schema",
    "system_views",
    "system_virtual_schema",
];
/// Replicated system keyspaces, also left out of effective ownership.
const SYSTEM_KEYSPACES: [&str; 3] = ["system_auth", "system_distributed", "system_traces"];
const NOT_ALIKE: &str = "Non-system keyspaces don't have the same replication settings, \
                         effective ownership information is meaningless";

pub fn node(node: &AdminNode) -> NodeInfo {
    let info = node.processor.node();
    let (load, uncompressed) = system::load_bytes(&node.storage, &node.processor.schema().schema);
    let mut tokens: Vec<i64> = node
        .coordinator
        .local_tokens()
        .iter()
        .map(|t| t.0)
        .collect();
    tokens.sort_unstable();
    let (effective_ownership, ownership_note) = match ownership(node) {
        Ok(owns) => (Some(owns), None),
        Err(note) => (None, Some(note)),
    };
    NodeInfo {
        host_id: info.host_id.to_string(),
        address: info.listen_address.to_string(),
        storage_port: info.storage_port,
        data_center: info.data_center.clone(),
        rack: info.rack.clone(),
        mode: node.lifecycle.mode().name().to_string(),
        gossip_active: node.gossip.as_ref().is_some_and(|g| g.is_running()),
        native_transport_active: node.lifecycle.transport().running,
        load_bytes: load,
        uncompressed_load_bytes: uncompressed,
        generation: node.generation,
        uptime_seconds: node.started.elapsed().as_secs(),
        memory_used_bytes: resident_bytes(),
        memory_total_bytes: machine_bytes(),
        tokens: tokens.iter().map(i64::to_string).collect(),
        effective_ownership,
        ownership_note,
        key_cache: cache_figures(&node.storage.key_cache_stats()),
        chunk_cache: Some(node.storage.chunk_cache_stats())
            .filter(|stats| stats.capacity_bytes > 0)
            .map(|stats| cache_figures(&stats)),
    }
}

fn cache_figures(stats: &CacheStats) -> CacheFigures {
    let measured = stats.misses > 0 && stats.miss_nanos > 0;
    CacheFigures {
        entries: stats.entries,
        size_bytes: stats.size_bytes,
        capacity_bytes: stats.capacity_bytes,
        hits: stats.hits,
        misses: stats.misses,
        miss_latency_micros: measured
            .then(|| stats.miss_nanos as f64 / stats.misses as f64 / 1_000.0),
    }
}

/// This node's effective ownership under the replication all user keyspaces share. Fails when
/// user keyspaces replicate differently.
fn ownership(node: &AdminNode) -> Result<f64, String> {
    let name = reference_keyspace(node)?;
    let strategy = node.processor.strategy(&name);
    let ring = node.coordinator.topology().ring();
    let local = node.processor.node().listen_address;
    Ok(effective_ownership(&strategy, &ring)
        .get(&local)
        .copied()
        .unwrap_or(0.0))
}

/// The keyspace whose replication effective ownership is computed under: the first user
/// keyspace when all user keyspaces replicate alike (`system_traces` when there are none).
pub(crate) fn reference_keyspace(node: &AdminNode) -> Result<String, String> {
    let schema = node.processor.schema().schema.clone();
    let user: Vec<(&String, &BTreeMap<String, String>)> = schema
        .keyspaces()
        .iter()
        .filter(|(name, _)| !is_system(name))
        .map(|(name, ks)| (name, &ks.replication))
        .collect();
    match user.first() {
        None => Ok("system_traces".to_string()),
        Some((_, first)) if user.iter().any(|(_, r)| r != first) => Err(NOT_ALIKE.to_string()),
        Some((name, _)) => Ok(name.to_string()),
    }
}

fn is_system(keyspace: &str) -> bool {
    LOCAL_KEYSPACES.contains(&keyspace) || SYSTEM_KEYSPACES.contains(&keyspace)
}

pub fn cluster(node: &AdminNode) -> ClusterInfo {
    let info = node.processor.node();
    let schema = node.processor.schema().schema.clone();
    let keyspaces = schema
        .keyspaces()
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "system_views" | "system_virtual_schema"))
        .map(|(name, ks)| replication(name, &ks.replication))
        .collect();
    ClusterInfo {
        name: info.cluster_name.clone(),
        snitch: format!(
            "org.apache.cassandra.locator.{}",
            node.config.endpoint_snitch
        ),
        partitioner: "org.apache.cassandra.dht.Murmur3Partitioner".into(),
        schema_version: schema.version().to_string(),
        address: info.listen_address.to_string(),
        storage_port: info.storage_port,
        data_center: info.data_center.clone(),
        release_version: info.release_version.clone(),
        keyspaces,
    }
}

fn replication(name: &str, replication: &BTreeMap<String, String>) -> KeyspaceReplication {
    let class = replication
        .get("class")
        .map_or("LocalStrategy", String::as_str);
    KeyspaceReplication {
        name: name.to_string(),
        class: class.rsplit('.').next().unwrap_or(class).to_string(),
        options: replication
            .iter()
            .filter(|(k, _)| k.as_str() != "class")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

pub fn version() -> Version {
    Version {
        release_version: RELEASE_VERSION.to_string(),
    }
}

/// Resident memory of this process (`/proc/self/statm`), 0 where unknown.
fn resident_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok());
    pages.map_or(0, |p| p * 4096)
}

/// Memory of the machine (`/proc/meminfo`), 0 where unknown.
fn machine_bytes() -> u64 {
    config::physical_memory().unwrap_or(0)
}

/// Seconds since the epoch now (the generation number of a node starting now).
pub fn generation_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn replication_uses_short_class_names() {
        let r = replication(
            "ks",
            &map(&[
                ("class", "org.apache.cassandra.locator.SimpleStrategy"),
                ("replication_factor", "1"),
            ]),
        );
        assert_eq!(r.class, "SimpleStrategy");
        assert_eq!(
            r.options,
            vec![("replication_factor".to_string(), "1".to_string())]
        );
    }
}
