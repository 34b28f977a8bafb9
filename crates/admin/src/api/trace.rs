//! Request tracing settings: `nodetool gettraceprobability` / `settraceprobability`, the
//! fraction of requests the node traces though the client did not ask.

use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

/// `GET`/`PUT /v1/settings/trace_probability`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct TraceProbability {
    pub probability: f64,
}

pub fn probability(node: &AdminNode) -> TraceProbability {
    TraceProbability {
        probability: node.processor.tracer().probability(),
    }
}

pub fn set_probability(node: &AdminNode, value: &TraceProbability) -> ApiResult<TraceProbability> {
    node.processor
        .tracer()
        .set_probability(value.probability)
        .map_err(ApiError::bad_request)?;
    Ok(probability(node))
}
