//! Streaming: `nodetool netstats` (the sessions), `get/setstreamthroughput` and `rebuild`.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

use mutation::{TableId, TokenRange};
use streaming::{Direction, SessionInfo, State, StreamRequest, Streaming};

use net::Class;

use crate::api::types::{
    MessagePool, RebuildReport, RebuildRequest, StreamSession, StreamThroughput, Streams,
};
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

fn streaming(node: &AdminNode) -> ApiResult<&Streaming> {
    node.streaming.as_deref().ok_or_else(|| {
        ApiError::unavailable(
            "this node runs alone (no seed_provider): it has no peers to stream with",
        )
    })
}

pub fn sessions(node: &AdminNode) -> Streams {
    let sessions = node
        .streaming
        .as_ref()
        .map_or_else(Vec::new, |s| s.sessions());
    let proxy = node.coordinator.metrics().proxy();
    Streams {
        mode: mode(node),
        sessions: sessions.iter().map(session).collect(),
        read_repairs: proxy
            .digest_mismatches
            .load(std::sync::atomic::Ordering::Relaxed),
        messages: message_pools(node),
    }
}

/// The Mode line: draining or drained, else the node's part in the ring (JOINING, NORMAL,
/// LEAVING, DECOMMISSIONED), as Cassandra's operation mode.
fn mode(node: &AdminNode) -> String {
    let lifecycle = node.lifecycle.mode();
    if lifecycle == crate::Mode::Normal {
        node.nodeops.mode().name().to_string()
    } else {
        lifecycle.name().to_string()
    }
}

/// Messages per connection class as netstats names them, summed over the peers: queued,
/// sent, and expired before they could be sent.
fn message_pools(node: &AdminNode) -> Vec<MessagePool> {
    let links = node
        .messaging
        .as_ref()
        .map_or_else(Vec::new, |m| m.stats().links);
    let classes = [
        ("Large messages", Class::Large),
        ("Small messages", Class::Small),
        ("Gossip messages", Class::Urgent),
    ];
    classes
        .into_iter()
        .map(|(name, class)| {
            let of_class = links.iter().filter(|l| l.class == class);
            let (mut pending, mut completed, mut dropped) = (0, 0, 0);
            for link in of_class {
                pending += link.pending_messages;
                completed += link.sent_messages;
                dropped += link.expired;
            }
            MessagePool {
                name: name.to_string(),
                pending,
                completed,
                dropped,
            }
        })
        .collect()
}

fn session(info: &SessionInfo) -> StreamSession {
    let (state, failure) = match &info.state {
        State::Preparing => ("preparing", None),
        State::Streaming => ("streaming", None),
        State::Complete => ("complete", None),
        State::Failed(why) => ("failed", Some(why.clone())),
    };
    StreamSession {
        id: info.id.to_string(),
        description: info.description.clone(),
        peer: info.peer.to_string(),
        direction: match info.direction {
            Direction::Receiving => "Receiving",
            Direction::Sending => "Sending",
        }
        .to_string(),
        state: state.to_string(),
        failure,
        files_total: info.files_total,
        files_done: info.files_done,
        bytes_total: info.bytes_total,
        bytes_done: info.bytes_done,
        started_ms: info.started_ms,
        elapsed_ms: info.elapsed.as_millis() as u64,
    }
}

pub fn throughput(node: &AdminNode) -> ApiResult<StreamThroughput> {
    let streaming = streaming(node)?;
    Ok(StreamThroughput {
        bytes_per_second: Some(streaming.throttle().rate()),
        entire_sstable_bytes_per_second: Some(streaming.entire_sstable_throttle().rate()),
    })
}

pub fn set_throughput(node: &AdminNode, value: &StreamThroughput) -> ApiResult<StreamThroughput> {
    let streaming = streaming(node)?;
    if let Some(rate) = value.bytes_per_second {
        streaming.throttle().set_rate(rate);
    }
    if let Some(rate) = value.entire_sstable_bytes_per_second {
        streaming.entire_sstable_throttle().set_rate(rate);
    }
    throughput(node)
}

/// Streams every range this node replicates from a live replica of it, as Cassandra's
/// `nodetool rebuild`; answers once every session has ended. Refused, before any stream, when
/// the data directories have less room than the sources' estimate of the ranges.
pub async fn rebuild(node: &AdminNode, request: &RebuildRequest) -> ApiResult<RebuildReport> {
    let streaming = streaming(node)?;
    let plan = plan(node, request)?;
    let dirs = &node.config.data_file_directories;
    let needed = nodeops::room::estimate(streaming, plan.requests.clone());
    nodeops::room::ensure_room("rebuild", dirs, needed)
        .await
        .map_err(ApiError::bad_request)?;
    let ranges = plan.ranges;
    tracing::info!(
        "rebuild from {}: {ranges} ranges from {} nodes",
        request.source_dc.as_deref().unwrap_or("any data center"),
        plan.requests.len()
    );
    let sessions = plan.requests.len();
    let running = streaming.fetch("Rebuild", plan.requests);
    let plan_id = running.id;
    let ids = running.session_ids();
    running.finish().await.map_err(|failures| {
        let why: Vec<String> = failures
            .iter()
            .map(|(peer, e)| format!("{peer}: {e}"))
            .collect();
        ApiError::internal(format!(
            "Error while rebuilding node: Stream failed: {}",
            why.join("; ")
        ))
    })?;
    let done: Vec<SessionInfo> = streaming
        .sessions()
        .into_iter()
        .filter(|s| ids.contains(&s.id))
        .collect();
    Ok(RebuildReport {
        plan_id: plan_id.to_string(),
        sessions,
        ranges,
        files: done.iter().map(|s| s.files_done).sum(),
        bytes: done.iter().map(|s| s.bytes_done).sum(),
    })
}

struct Plan {
    requests: Vec<StreamRequest>,
    ranges: usize,
}

/// For each range of each user keyspace this node replicates, the live replica to stream it
/// from (the one given the fewest ranges so far, to spread the load), grouped by replica.
fn plan(node: &AdminNode, request: &RebuildRequest) -> ApiResult<Plan> {
    let topology = node.coordinator.topology();
    let local = topology.local().addr;
    if let Some(dc) = &request.source_dc {
        let known = topology.ring().datacenters();
        if !known.contains(dc) {
            let list: Vec<&str> = known.iter().map(String::as_str).collect();
            return Err(ApiError::bad_request(format!(
                "Provided datacenter '{dc}' is not a valid datacenter, available datacenters are: {}",
                list.join(",")
            )));
        }
    }
    let schema = node.processor.schema().schema.clone();
    if let Some(keyspace) = &request.keyspace {
        if schema.keyspace(keyspace).is_none() {
            return Err(ApiError::bad_request(format!(
                "Keyspace {keyspace} does not exist"
            )));
        }
    }
    let mut by_peer: BTreeMap<IpAddr, BTreeMap<TableId, Vec<TokenRange>>> = BTreeMap::new();
    let mut load: BTreeMap<IpAddr, usize> = BTreeMap::new();
    let mut ranges = 0;
    let keyspaces = schema.keyspaces().values().filter(|k| {
        !k.tables.is_empty()
            && !matches!(
                *node.processor.strategy(&k.name),
                ring::ReplicationStrategy::Local
            )
            && !schema::is_system_keyspace(&k.name)
            && !schema::is_virtual_keyspace(&k.name)
            && request.keyspace.as_ref().is_none_or(|name| *name == k.name)
    });
    for keyspace in keyspaces {
        let replicated = node
            .processor
            .ranges(&keyspace.name)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        for range in replicated
            .iter()
            .filter(|r| r.replicas.iter().any(|e| e.addr == local))
        {
            let source = range
                .replicas
                .iter()
                .filter(|e| e.addr != local && topology.is_alive(e.addr))
                .filter(|e| request.source_dc.as_ref().is_none_or(|dc| *dc == *e.datacenter))
                .min_by_key(|e| load.get(&e.addr).copied().unwrap_or(0))
                .ok_or_else(|| {
                    ApiError::unavailable(format!(
                        "unable to find sufficient sources for streaming range ({},{}] in keyspace {}",
                        range.start, range.end, keyspace.name
                    ))
                })?;
            *load.entry(source.addr).or_default() += 1;
            ranges += 1;
            let tables = by_peer.entry(source.addr).or_default();
            for table in keyspace.tables.values() {
                tables
                    .entry(TableId(table.id))
                    .or_default()
                    .push((range.start, range.end));
            }
        }
    }
    let port = node.config.storage_port;
    let requests = by_peer
        .into_iter()
        .map(|(addr, tables)| StreamRequest {
            peer: SocketAddr::new(addr, port),
            tables: tables.into_iter().collect(),
        })
        .collect();
    Ok(Plan { requests, ranges })
}
