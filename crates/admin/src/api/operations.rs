//! This node's part in topology changes: `POST /v1/decommission` (`nodetool decommission
//! [--force]`, answered once the node has left the ring), `POST /v1/removenode` and
//! `GET /v1/removenode` (`nodetool removenode <host id> | status | force`),
//! `POST /v1/bootstrap/resume` (`nodetool bootstrap resume`), `POST /v1/move`
//! (refused as Cassandra refuses it with vnodes) and `GET /v1/operation_mode` (the Mode line of
//! `nodetool netstats`: STARTING, JOINING, NORMAL, LEAVING, DECOMMISSIONED).

use uuid::Uuid;

use super::types::{
    BootstrapResumed, DecommissionRequest, OperationModeInfo, RemovalStatus, RemoveNodeRequest,
};
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

/// Cassandra's refusal of `nodetool move` on a node with vnodes.
pub const MOVE_WITH_VNODES: &str = "This node has more than one token and cannot be moved thusly.";

pub async fn decommission(
    node: &AdminNode,
    request: &DecommissionRequest,
) -> ApiResult<OperationModeInfo> {
    node.nodeops
        .decommission(request.force)
        .await
        .map_err(ApiError::bad_request)?;
    Ok(mode(node))
}

/// `nodetool bootstrap resume`: answers once the resumed bootstrap has ended.
pub async fn resume_bootstrap(node: &AdminNode) -> ApiResult<BootstrapResumed> {
    let resumed = node
        .nodeops
        .resume_bootstrap()
        .await
        .map_err(ApiError::internal)?;
    Ok(BootstrapResumed { resumed })
}

pub async fn removenode(node: &AdminNode, request: &RemoveNodeRequest) -> ApiResult<RemovalStatus> {
    match request.host_id.as_str() {
        "status" => {}
        "force" => node
            .nodeops
            .force_removal()
            .await
            .map_err(ApiError::bad_request)?,
        id => {
            let host_id = Uuid::parse_str(id)
                .map_err(|_| ApiError::bad_request(format!("Invalid host id: {id}")))?;
            node.nodeops
                .removenode(host_id)
                .await
                .map_err(ApiError::bad_request)?;
        }
    }
    Ok(removal_status(node))
}

pub fn removal_status(node: &AdminNode) -> RemovalStatus {
    RemovalStatus {
        status: node.nodeops.removal_status(),
    }
}

/// `nodetool move`: vnodes cannot move; a node of one token neither, in Helenus.
pub fn move_token(node: &AdminNode) -> ApiResult<OperationModeInfo> {
    let tokens = node.processor.node().tokens.len();
    if tokens > 1
        || node
            .coordinator
            .topology()
            .ring()
            .tokens_of(node.processor.node().listen_address)
            .len()
            > 1
    {
        return Err(ApiError::bad_request(MOVE_WITH_VNODES));
    }
    Err(ApiError::bad_request(
        "nodetool move is not supported by Helenus: decommission the node and add it with the new initial_token",
    ))
}

pub fn mode(node: &AdminNode) -> OperationModeInfo {
    OperationModeInfo {
        mode: node.nodeops.mode().name().to_string(),
    }
}
