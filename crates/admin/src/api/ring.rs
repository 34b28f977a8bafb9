//! `GET /v1/ring[/<keyspace>]`, `/v1/gossip` and `/v1/cms`: the cluster as this node sees it —
//! the nodes that own tokens with their liveness, load and ownership, each endpoint's gossip
//! state, and the cluster metadata group.

use std::collections::BTreeMap;
use std::net::IpAddr;

use gossip::{keys, EndpointView};
use metadata::{ClusterMetadata, NodeState, RaftRole, RaftStatus};
use ring::{effective_ownership, primary_ownership, Endpoint, TokenMetadata};

use super::cluster::reference_keyspace;
use super::types::{
    CmsInfo, EndpointsRequest, GossipEndpoint, GossipStatus, RangeInfo, RingInfo, RingNode,
    RingRanges,
};
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

pub fn ring(node: &AdminNode, keyspace: Option<&str>) -> ApiResult<RingInfo> {
    let ring = node.coordinator.topology().ring();
    let (owns, effective, ownership_note) = ownership(node, &ring, keyspace)?;
    let views = gossip_views(node);
    let meta = node.metadata.current();
    let mut nodes: Vec<RingNode> = ring
        .endpoints()
        .into_iter()
        .map(|endpoint| {
            let owned = owns.get(&endpoint.addr).copied().unwrap_or(0.0);
            let tokens = ring.tokens_of(endpoint.addr).iter().map(|t| t.0).collect();
            let view = views.get(&endpoint.addr);
            let state = state_name(&meta, endpoint.addr, view);
            ring_node(node, endpoint, view, (tokens, state), owned)
        })
        .collect();
    // pending owners (joining, replacing) own nothing yet but show, as UJ
    for pending in meta.nodes.values().filter(|n| n.state.is_moving()) {
        if pending.state == NodeState::Leaving {
            continue;
        }
        let endpoint = nodeops::endpoint_of(
            pending.host_id,
            pending.addr.ip(),
            &pending.dc,
            &pending.rack,
        );
        let view = views.get(&endpoint.addr);
        let tokens = pending.tokens.clone();
        nodes.push(ring_node(node, &endpoint, view, (tokens, "Joining"), 0.0));
    }
    Ok(RingInfo {
        nodes,
        effective,
        ownership_note,
    })
}

/// A ring node's state as `nodetool status` spells it: from the metadata log, else from
/// gossip.
fn state_name(meta: &ClusterMetadata, addr: IpAddr, view: Option<&EndpointView>) -> &'static str {
    let logged = meta
        .nodes
        .values()
        .find(|n| n.addr.ip() == addr && n.state != NodeState::Left)
        .map(|n| n.state);
    let gossiped = view.and_then(EndpointView::status);
    match logged {
        Some(NodeState::Leaving) => "Leaving",
        Some(NodeState::Joining | NodeState::Replacing(_)) => "Joining",
        _ if gossiped == Some(keys::Status::Leaving) => "Leaving",
        _ => "Normal",
    }
}

/// Ownership under `keyspace`'s replication, else under the one replication all user keyspaces
/// share; primary ownership, with Cassandra's note, when they differ.
fn ownership(
    node: &AdminNode,
    ring: &TokenMetadata,
    keyspace: Option<&str>,
) -> ApiResult<(BTreeMap<IpAddr, f64>, bool, Option<String>)> {
    let name = match keyspace {
        Some(name) if node.processor.schema().schema.keyspace(name).is_none() => {
            return Err(ApiError::not_found(format!(
                "The keyspace {name}, does not exist"
            )))
        }
        Some(name) => name.to_string(),
        None => match reference_keyspace(node) {
            Ok(name) => name,
            Err(note) => return Ok((primary_ownership(ring), false, Some(note))),
        },
    };
    let strategy = node.processor.strategy(&name);
    Ok((effective_ownership(&strategy, ring), true, None))
}

fn gossip_views(node: &AdminNode) -> BTreeMap<IpAddr, EndpointView> {
    node.gossip
        .as_ref()
        .map(|g| {
            g.endpoints()
                .into_iter()
                .map(|v| (v.addr.ip(), v))
                .collect()
        })
        .unwrap_or_default()
}

/// One node of `nodetool status`: `tokens` and `state` come from the ring or the log.
fn ring_node(
    node: &AdminNode,
    endpoint: &Endpoint,
    view: Option<&EndpointView>,
    (tokens, state): (Vec<i64>, &str),
    owns: f64,
) -> RingNode {
    let info = node.processor.node();
    let local = endpoint.addr == info.listen_address;
    let gossiped = |key: &str| view.and_then(|v| v.get(key)).map(str::to_string);
    let (load_bytes, schema_version) = if local {
        let schema = node.processor.schema().schema.version().to_string();
        let load = system::load_bytes(&node.storage, &node.processor.schema().schema).0;
        (Some(load), Some(schema))
    } else {
        let load = gossiped(keys::LOAD).and_then(|l| l.parse().ok());
        (load, gossiped(keys::SCHEMA_VERSION))
    };
    RingNode {
        address: endpoint.addr.to_string(),
        storage_port: info.storage_port,
        host_id: uuid::Uuid::from_bytes(endpoint.host_id).to_string(),
        data_center: endpoint.datacenter.to_string(),
        rack: endpoint.rack.to_string(),
        up: local || node.coordinator.topology().is_alive(endpoint.addr),
        state: state.to_string(),
        load_bytes,
        tokens: tokens.iter().map(|t| t.to_string()).collect(),
        owns,
        schema_version,
        release_version: if local {
            Some(info.release_version.clone())
        } else {
            gossiped(keys::RELEASE_VERSION)
        },
    }
}

/// Each endpoint's gossip state; unavailable on a node that runs alone (no gossip).
pub fn gossip(node: &AdminNode) -> ApiResult<Vec<GossipEndpoint>> {
    let Some(gossip) = &node.gossip else {
        return Err(ApiError::unavailable(
            "this node runs alone (no seed_provider): it does not gossip",
        ));
    };
    Ok(gossip
        .endpoints()
        .into_iter()
        .map(|v| GossipEndpoint {
            address: v.addr.to_string(),
            alive: v.alive,
            generation: v.generation,
            heartbeat: v.heartbeat,
            state: v.state.into_iter().collect(),
        })
        .collect())
}

/// The replicas of a partition key, by address.
pub fn endpoints(node: &AdminNode, request: &EndpointsRequest) -> ApiResult<Vec<String>> {
    let found = node
        .processor
        .endpoints(&request.keyspace, &request.table, &request.key)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    Ok(found.iter().map(|addr| addr.to_string()).collect())
}

/// Every token range of the ring with its replicas under `keyspace`'s replication.
pub fn describe_ring(node: &AdminNode, keyspace: &str) -> ApiResult<RingRanges> {
    let mut ranges = node
        .processor
        .ranges(keyspace)
        .map_err(|e| ApiError::not_found(e.to_string()))?;
    ranges.sort_by_key(|r| r.start);
    Ok(RingRanges {
        schema_version: node.processor.schema().schema.version().to_string(),
        ranges: ranges
            .into_iter()
            .map(|r| RangeInfo {
                start_token: r.start.to_string(),
                end_token: r.end.to_string(),
                endpoints: r
                    .replicas
                    .iter()
                    .map(|e| {
                        (
                            e.addr.to_string(),
                            e.datacenter.to_string(),
                            e.rack.to_string(),
                        )
                    })
                    .collect(),
            })
            .collect(),
    })
}

pub fn gossip_status(node: &AdminNode) -> GossipStatus {
    GossipStatus {
        running: node.gossip.as_ref().is_some_and(|g| g.is_running()),
    }
}

/// Starts or stops gossip (`nodetool enablegossip` / `disablegossip`): a stopped node
/// announces its shutdown and the others mark it down.
pub fn set_gossip(node: &AdminNode, run: bool) -> ApiResult<GossipStatus> {
    let Some(gossip) = &node.gossip else {
        return Err(ApiError::unavailable(
            "this node runs alone (no seed_provider): it does not gossip",
        ));
    };
    match (run, gossip.is_running()) {
        (true, false) => gossip.start(),
        (false, true) => gossip.stop(),
        _ => {}
    }
    Ok(gossip_status(node))
}

pub fn cms(node: &AdminNode) -> CmsInfo {
    let status = node.metadata.status();
    let addr = |id: &uuid::Uuid| {
        status
            .members
            .get(id)
            .map_or_else(|| id.to_string(), |a| a.to_string())
    };
    CmsInfo {
        host_id: status.host_id.to_string(),
        role: role_name(&status).to_string(),
        leader: status.leader.as_ref().map(addr),
        term: status.term,
        epoch: status.epoch,
        voters: status.voters.iter().map(addr).collect(),
        learners: status.learners.iter().map(addr).collect(),
        last_log_index: status.last_log_index,
        applied_index: status.applied_index,
        snapshot_index: status.snapshot_index,
    }
}

fn role_name(status: &RaftStatus) -> &'static str {
    match status.role {
        RaftRole::Leader => "Leader",
        RaftRole::Follower => "Follower",
        RaftRole::Candidate => "Candidate",
        RaftRole::Learner => "Learner",
        RaftRole::Shutdown => "Shutdown",
    }
}
