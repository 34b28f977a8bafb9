//! Errors of the metadata service.

/// Why a metadata operation did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// No majority of the metadata group could be reached in time: the change was not
    /// committed (a change already handed to a leader that lost its majority is applied later
    /// only if that leader regains it before another is elected).
    #[error("no quorum in the cluster metadata group: {0}")]
    NoQuorum(String),
    /// The state moved on since the change was planned (compare-and-set failed); the local
    /// state has reached `current_epoch`, so re-planning sees what won.
    #[error(
        "conflicting cluster metadata change: the metadata moved on (now at epoch {current_epoch})"
    )]
    Conflict { current_epoch: u64 },
    /// The change can never apply to the current state (token clash, unknown node, ...).
    #[error("cluster metadata change rejected: {0}")]
    Rejected(String),
    /// The awaited epoch was not applied locally in time.
    #[error("timed out waiting for the cluster metadata log")]
    Timeout,
    /// The service has stopped.
    #[error("the cluster metadata service is shut down")]
    Shutdown,
    /// The metadata directory cannot be read or written (corrupt log, I/O error).
    #[error("cluster metadata storage: {0}")]
    Storage(String),
}
