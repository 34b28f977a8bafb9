//! `/v1/hints/...`: hinted handoff as `nodetool statushandoff`, `enablehandoff`,
//! `disablehandoff`, `pausehandoff`, `resumehandoff`, `enablehintsfordc`, `disablehintsfordc`,
//! `listpendinghints` and `truncatehints` see and drive it. A node running alone keeps no
//! hints: every endpoint answers 503.
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use hints::{HintsService, PendingHints};
use metadata::ClusterMetadata;

use super::types::{DatacenterRequest, HintsStatus, PendingHintsRow, TruncateHintsRequest};
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

fn service(node: &AdminNode) -> ApiResult<&Arc<HintsService>> {
    node.coordinator.hints().ok_or_else(|| {
        ApiError::unavailable("this node runs alone (no seed_provider): it keeps no hints")
    })
}

pub fn status(node: &AdminNode) -> ApiResult<HintsStatus> {
    let status = service(node)?.status();
    Ok(HintsStatus {
        enabled: status.enabled,
        paused: status.paused,
        disabled_datacenters: status.disabled_datacenters,
    })
}

/// `enablehandoff` / `disablehandoff`: whether new hints are stored.
pub fn set_enabled(node: &AdminNode, enabled: bool) -> ApiResult<HintsStatus> {
    let hints = service(node)?;
    if enabled {
        hints.enable();
    } else {
        hints.disable();
    }
    status(node)
}

/// `pausehandoff` / `resumehandoff`: whether stored hints are delivered.
pub fn set_paused(node: &AdminNode, paused: bool) -> ApiResult<HintsStatus> {
    let hints = service(node)?;
    if paused {
        hints.pause_delivery();
    } else {
        hints.resume_delivery();
    }
    status(node)
}

/// `enablehintsfordc` / `disablehintsfordc`.
pub fn set_datacenter(
    node: &AdminNode,
    request: &DatacenterRequest,
    enabled: bool,
) -> ApiResult<HintsStatus> {
    let hints = service(node)?;
    let dc = request.datacenter.trim();
    if dc.is_empty() {
        return Err(ApiError::bad_request("the data center name is empty"));
    }
    if enabled {
        hints.enable_for_dc(dc);
    } else {
        hints.disable_for_dc(dc);
    }
    status(node)
}

/// The hosts with hints waiting, with where the cluster places them.
pub fn pending(node: &AdminNode) -> ApiResult<Vec<PendingHintsRow>> {
    let pending = service(node)?.pending();
    let meta = node.metadata.current();
    Ok(pending
        .iter()
        .map(|p| pending_row(node, &meta, p))
        .collect())
}

fn pending_row(
    node: &AdminNode,
    meta: &ClusterMetadata,
    pending: &PendingHints,
) -> PendingHintsRow {
    let record = meta.nodes.get(&pending.host_id);
    let address = record.map(|r| r.addr).or(pending.address);
    let status = match (address, &node.gossip) {
        (Some(addr), Some(gossip)) if gossip.is_alive(addr.ip()) => "UP",
        (Some(_), Some(_)) => "DOWN",
        _ => "Unknown",
    };
    PendingHintsRow {
        host_id: pending.host_id.to_string(),
        address: address.map(|a| a.to_string()),
        rack: record.map(|r| r.rack.clone()),
        datacenter: record.map(|r| r.dc.clone()),
        status: status.to_string(),
        files: pending.files,
        newest_ms: pending.newest_ms,
        oldest_ms: pending.oldest_ms,
        total_bytes: pending.total_bytes,
    }
}

/// `truncatehints [endpoint]`: deletes the hints of the node at `endpoint`, or every hint.
pub async fn truncate(node: &AdminNode, request: &TruncateHintsRequest) -> ApiResult<HintsStatus> {
    let hints = service(node)?;
    let host_id = match request.endpoint.as_deref() {
        Some(endpoint) => Some(host_at(node, endpoint)?),
        None => None,
    };
    hints
        .truncate(host_id)
        .await
        .map_err(|e| ApiError::internal(format!("cannot delete hints: {e}")))?;
    status(node)
}

/// The host id of the node at `endpoint` (an address, with or without the storage port).
fn host_at(node: &AdminNode, endpoint: &str) -> ApiResult<uuid::Uuid> {
    let port = node.config.storage_port;
    let addr = endpoint
        .parse::<SocketAddr>()
        .or_else(|_| {
            endpoint
                .parse::<IpAddr>()
                .map(|ip| SocketAddr::new(ip, port))
        })
        .map_err(|_| unknown_address(endpoint))?;
    let meta = node.metadata.current();
    let record = meta.nodes.values().find(|n| n.addr.ip() == addr.ip());
    record
        .map(|n| n.host_id)
        .ok_or_else(|| unknown_address(&format!("/{addr}")))
}

/// Cassandra's words for an address no node has.
fn unknown_address(endpoint: &str) -> ApiError {
    ApiError::bad_request(format!("Can't delete hints for unknown address {endpoint}"))
}

#[cfg(test)]
#[path = "hints_tests.rs"]
mod tests;
