//! Errors returned by the storage layer.

use std::io;
use std::path::PathBuf;

use mutation::TableId;

/// Result alias used across the crate.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// Everything that can go wrong in storage.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// An I/O operation on `path` failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// On-disk data failed validation.
    #[error("corrupt data in {file} at offset {offset}: {reason}")]
    Corrupt {
        file: PathBuf,
        offset: u64,
        reason: String,
    },
    /// The table id is not registered.
    #[error("unknown table {0}")]
    UnknownTable(TableId),
    /// The storage (or its commit log) has been shut down or has failed.
    #[error("storage is closed")]
    Closed,
    /// A single commit-log record would exceed the allowed size.
    #[error("mutation of {size} bytes exceeds the maximum of {max} bytes")]
    TooLarge { size: usize, max: usize },
    /// A request was malformed (for example a counter column holding a non-counter value).
    #[error("invalid request: {0}")]
    Invalid(String),
    /// The commit log cannot take the write: it stopped after a failure
    /// (`commit_failure_policy` `stop` or `stop_commit`), or cannot create a segment yet
    /// (`ignore`).
    #[error("the commit log cannot take writes: {0}")]
    CommitLogUnavailable(String),
    /// Work on a table stopped because the table was dropped or truncated meanwhile (see
    /// [`Work`](crate::engine::Work)); no disk failed.
    #[error("cancelled: {0}")]
    Cancelled(String),
}

impl StorageError {
    /// Builds an [`StorageError::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        StorageError::Io {
            path: path.into(),
            source,
        }
    }

    /// A copy of this error, for reporting one failure to several waiters.
    pub fn duplicate(&self) -> Self {
        match self {
            StorageError::Io { path, source } => StorageError::io(
                path.clone(),
                io::Error::new(source.kind(), source.to_string()),
            ),
            StorageError::Corrupt {
                file,
                offset,
                reason,
            } => StorageError::Corrupt {
                file: file.clone(),
                offset: *offset,
                reason: reason.clone(),
            },
            StorageError::UnknownTable(id) => StorageError::UnknownTable(*id),
            StorageError::Closed => StorageError::Closed,
            StorageError::TooLarge { size, max } => StorageError::TooLarge {
                size: *size,
                max: *max,
            },
            StorageError::Invalid(reason) => StorageError::Invalid(reason.clone()),
            StorageError::CommitLogUnavailable(reason) => {
                StorageError::CommitLogUnavailable(reason.clone())
            }
            StorageError::Cancelled(reason) => StorageError::Cancelled(reason.clone()),
        }
    }
}
