//! Request timeouts (`gettimeout`/`settimeout`, `get/setwriterequesttimeout` and friends),
//! changed at run time in the coordinator.

use std::time::Duration;

use coordinator::TimeoutKind;

use super::types::Timeout;
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

fn kind(name: &str) -> ApiResult<TimeoutKind> {
    TimeoutKind::from_name(name).ok_or_else(|| {
        ApiError::not_found(format!(
            "unknown timeout type {name}: one of read, range, write, counterwrite"
        ))
    })
}

pub fn timeout(node: &AdminNode, name: &str) -> ApiResult<Timeout> {
    let millis = node.coordinator.timeouts().get(kind(name)?).as_millis();
    Ok(Timeout {
        millis: u64::try_from(millis).unwrap_or(u64::MAX),
    })
}

pub fn set_timeout(node: &AdminNode, name: &str, value: &Timeout) -> ApiResult<Timeout> {
    let kind = kind(name)?;
    node.coordinator
        .timeouts()
        .set(kind, Duration::from_millis(value.millis));
    timeout(node, name)
}
