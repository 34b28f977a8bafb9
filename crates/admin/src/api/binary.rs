//! `GET /v1/binary`, `POST /v1/binary/enable` and `POST /v1/binary/disable`: the native
//! transport (the CQL listener and its connections), as `nodetool statusbinary`,
//! `enablebinary` and `disablebinary` see and drive it. The server follows the
//! [`Lifecycle`](crate::Lifecycle)'s wish; these handlers wait until it has.

use std::time::Duration;

use super::types::BinaryStatus;
use crate::error::{ApiError, ApiResult};
use crate::lifecycle::Mode;
use crate::node::AdminNode;

/// How long a start or stop may take (a stop lets requests in flight finish).
const SETTLE_LIMIT: Duration = Duration::from_secs(30);

pub fn status(node: &AdminNode) -> BinaryStatus {
    BinaryStatus {
        running: node.lifecycle.transport().running,
    }
}

/// Starts the native transport again; fails on a drained node or when the listener cannot
/// be bound.
pub async fn enable(node: &AdminNode) -> ApiResult<BinaryStatus> {
    if node.lifecycle.mode() != Mode::Normal {
        return Err(ApiError::unavailable(
            "Cannot start the native transport: the node is drained",
        ));
    }
    node.lifecycle.start_transport();
    let settled = settle(node).await?;
    match settled.error {
        Some(error) => Err(ApiError::internal(format!(
            "Error starting native transport: {error}"
        ))),
        None => Ok(status(node)),
    }
}

/// Stops the native transport: no new connections, the open ones closed once their requests
/// in flight finish.
pub async fn disable(node: &AdminNode) -> ApiResult<BinaryStatus> {
    node.lifecycle.stop_transport();
    settle(node).await?;
    Ok(status(node))
}

async fn settle(node: &AdminNode) -> ApiResult<crate::lifecycle::Transport> {
    tokio::time::timeout(SETTLE_LIMIT, node.lifecycle.transport_settled())
        .await
        .map_err(|_| ApiError::internal("the native transport did not settle in time"))
}
