//! Every mapping of a failure, for both sides. A replica answers a request storage refused
//! with one of Cassandra's `RequestFailureReason` codes ([`write_failure`], [`read_failure`],
//! [`malformed`]); a coordinator counts each replica's answer as an [`Outcome`]
//! ([`local_outcome`], [`remote_outcome`]). A local read or write that threw is a failed
//! response (`RequestFailureReason.UNKNOWN`) as in Cassandra's coordinator, so a read that met
//! corrupt data or a failed disk answers ReadFailure and a write storage failed answers
//! WriteFailure — not a ServerError (a write the commit log cannot take times out instead, see
//! `coordinator::write::bounded`). Errors that are no replica failure (an unknown table, a
//! refused value) stay ServerErrors ([`Replica::read_error`], [`Replica::write_error`]).

use std::net::IpAddr;

use bytes::Bytes;
use mutation::codec::DecodeError;
use net::{NetError, Peer, RemoteError};
use storage::StorageError;
use types::{Consistency, CqlError};

/// Cassandra's `RequestFailureReason` codes a replica answers with.
pub mod reason {
    pub const UNKNOWN: u16 = 0x0000;
    /// The replica gave up waiting (its commit log refused the write): the coordinator counts
    /// it as no response, so the write times out there and is hinted.
    pub const TIMEOUT: u16 = 0x0002;
    pub const INCOMPATIBLE_SCHEMA: u16 = 0x0003;
}

use reason::UNKNOWN;

/// What one replica did with its share of a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Applied,
    /// It answered an error, with Cassandra's reason code.
    Failed(u16),
    /// No answer in time (timed out, unreachable, overloaded, or its commit log refused).
    Silent,
}

/// This node's own write counted as a replica's answer.
pub(crate) fn local_outcome(result: storage::Result<()>) -> Outcome {
    match result {
        Ok(()) => Outcome::Applied,
        Err(StorageError::CommitLogUnavailable(_)) => Outcome::Silent,
        Err(e) => {
            tracing::error!("local write failed: {e}");
            Outcome::Failed(UNKNOWN)
        }
    }
}

/// Another replica's answer to a write.
pub(crate) fn remote_outcome(result: Result<Bytes, NetError>) -> Outcome {
    match result {
        Ok(_) => Outcome::Applied,
        Err(NetError::Remote(e)) if e.code == reason::TIMEOUT => Outcome::Silent,
        Err(NetError::Remote(e)) => {
            tracing::debug!("a replica failed a write: {}", e.message);
            Outcome::Failed(e.code)
        }
        Err(_) => Outcome::Silent,
    }
}

/// The failure a replica answers for a write storage refused.
pub(crate) fn write_failure(error: StorageError) -> RemoteError {
    match error {
        StorageError::CommitLogUnavailable(why) => RemoteError::new(reason::TIMEOUT, why),
        other => refused("write", other),
    }
}

/// The failure a replica answers for a read storage refused.
pub(crate) fn read_failure(error: StorageError) -> RemoteError {
    refused("read", error)
}

/// A table the replica does not know is a schema mismatch; anything else is UNKNOWN.
fn refused(operation: &str, error: StorageError) -> RemoteError {
    match error {
        StorageError::UnknownTable(id) => {
            RemoteError::new(reason::INCOMPATIBLE_SCHEMA, format!("unknown table {id:?}"))
        }
        other => {
            tracing::error!("{operation} failed: {other}");
            RemoteError::new(UNKNOWN, other.to_string())
        }
    }
}

/// The failure a replica answers for a `what` (`mutation`, `read`, …) it cannot decode.
pub(crate) fn malformed(what: &str, from: &Peer, error: DecodeError) -> RemoteError {
    tracing::warn!("malformed {what} from {}: {}", from.addr, error.0);
    RemoteError::new(UNKNOWN, format!("malformed {what}: {}", error.0))
}

/// This node as failure messages name it: `/address:storage_port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replica {
    pub address: IpAddr,
    pub storage_port: u16,
}

/// The consistency a request asked for and the responses it needed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needed {
    pub consistency: Consistency,
    pub block_for: i32,
}

impl Needed {
    pub fn new(consistency: Consistency, block_for: i32) -> Needed {
        Needed {
            consistency,
            block_for,
        }
    }
}

impl Replica {
    /// What the client gets for a failed local read.
    pub fn read_error(&self, error: StorageError, needed: Needed) -> CqlError {
        self.failure("read", error, |message| CqlError::ReadFailure {
            message,
            consistency: needed.consistency,
            received: 0,
            block_for: needed.block_for,
            failures: 1,
            data_present: false,
            reasons: vec![(self.address, UNKNOWN)],
        })
    }

    /// What the client gets for a failed local write.
    pub fn write_error(&self, error: StorageError, needed: Needed, write_type: &str) -> CqlError {
        self.failure("write", error, |message| CqlError::WriteFailure {
            message,
            consistency: needed.consistency,
            received: 0,
            block_for: needed.block_for,
            failures: 1,
            write_type: write_type.to_string(),
            reasons: vec![(self.address, UNKNOWN)],
        })
    }

    /// The error `failed` builds from Cassandra's message for a replica failure; a
    /// ServerError for any other storage error.
    fn failure(
        &self,
        operation: &str,
        error: StorageError,
        failed: impl FnOnce(String) -> CqlError,
    ) -> CqlError {
        tracing::error!("{operation} failed: {error}");
        match is_replica_failure(&error) {
            true => failed(self.message()),
            false => CqlError::Server(format!("{operation} failed: {error}")),
        }
    }

    /// Cassandra's `RequestFailureException` message for one failure from this node.
    fn message(&self) -> String {
        format!(
            "Operation failed - received 0 responses and 1 failures: UNKNOWN from /{}:{}",
            self.address, self.storage_port
        )
    }
}

/// Whether `error` is the replica failing (its disks, its data, its commit log) rather than
/// the request being wrong.
fn is_replica_failure(error: &StorageError) -> bool {
    matches!(
        error,
        StorageError::Io { .. } | StorageError::Corrupt { .. } | StorageError::Closed
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const REPLICA: Replica = Replica {
        address: IpAddr::V4(Ipv4Addr::LOCALHOST),
        storage_port: 7000,
    };
    const ONE: Needed = Needed {
        consistency: Consistency::One,
        block_for: 1,
    };

    fn corrupt() -> StorageError {
        StorageError::Corrupt {
            file: "/d/ha-1-Data.db".into(),
            offset: 10,
            reason: "chunk 0 checksum mismatch".into(),
        }
    }

    #[test]
    fn corrupt_data_fails_the_read_with_one_unknown_failure() {
        match REPLICA.read_error(corrupt(), ONE) {
            CqlError::ReadFailure {
                message,
                failures,
                reasons,
                block_for,
                data_present,
                ..
            } => {
                assert_eq!(
                    message,
                    "Operation failed - received 0 responses and 1 failures: UNKNOWN from /127.0.0.1:7000"
                );
                assert_eq!((failures, block_for, data_present), (1, 1, false));
                assert_eq!(reasons, vec![(REPLICA.address, UNKNOWN)]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_failed_disk_fails_the_write() {
        let error = StorageError::io("/cl", std::io::Error::from(std::io::ErrorKind::NotFound));
        match REPLICA.write_error(error, ONE, "BATCH") {
            CqlError::WriteFailure {
                failures,
                write_type,
                reasons,
                ..
            } => {
                assert_eq!((failures, write_type.as_str()), (1, "BATCH"));
                assert_eq!(reasons, vec![(REPLICA.address, UNKNOWN)]);
            }
            other => panic!("{other:?}"),
        }
        let refused = StorageError::Invalid("not a counter".into());
        assert!(matches!(
            REPLICA.write_error(refused, ONE, "SIMPLE"),
            CqlError::Server(_)
        ));
    }
}
