//! `GET|PUT /v1/logging` — `nodetool getlogginglevels` and `setlogginglevel`: the node's log
//! levels, changed at run time through [`LogLevels`], which the server implements.

use super::types::{LogLevel, LogLevelRequest, LogLevelsBody};
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

/// The node's run-time log levels (the server's logging set-up).
pub trait LogLevels: Send + Sync {
    /// `ROOT` first, then every logger with a level of its own.
    fn levels(&self) -> Vec<(String, String)>;

    /// Sets `logger` to `level`; no level clears the logger's own level; neither resets every
    /// level to the start-up configuration. Errors are the reason, for a 400.
    fn set(&self, logger: Option<&str>, level: Option<&str>) -> Result<(), String>;
}

/// `GET /v1/logging`.
pub fn levels(node: &AdminNode) -> LogLevelsBody {
    LogLevelsBody {
        levels: node
            .logging
            .levels()
            .into_iter()
            .map(|(logger, level)| LogLevel { logger, level })
            .collect(),
    }
}

/// `PUT /v1/logging`: applies the request and answers the levels now in force.
pub fn set(node: &AdminNode, request: &LogLevelRequest) -> ApiResult<LogLevelsBody> {
    node.logging
        .set(request.logger.as_deref(), request.level.as_deref())
        .map_err(ApiError::bad_request)?;
    Ok(levels(node))
}
