//! The replica side of the storage verbs: what a node does with a mutation (and, as they come,
//! reads) another node's coordinator sends it. A replica that does not know the table yet
//! waits for its metadata to reach the sender's epoch before failing, as the schema change
//! that created the table may still be on its way through the metadata log.
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use net::{handler_fn, Messaging, Peer, RemoteError, Verb};
use storage::{Storage, StorageError};

use crate::messages::{encode_scan, MutationRequest, RangeRequest, ReadReply, ReadRequest};
use crate::remote::EpochWaiter;

/// Cassandra's `RequestFailureReason` codes a replica answers with.
pub mod reason {
    pub const UNKNOWN: u16 = 0x0000;
    /// The replica gave up waiting (its commit log refused the write): the coordinator counts
    /// it as no response, so the write times out there and is hinted.
    pub const TIMEOUT: u16 = 0x0002;
    pub const INCOMPATIBLE_SCHEMA: u16 = 0x0003;
}

/// How long a replica waits for a table it does not know to arrive through the metadata log.
const SCHEMA_WAIT: Duration = Duration::from_secs(2);

/// How often a replica looks again for a table its metadata log has but storage has not yet.
const SCHEMA_POLL: Duration = Duration::from_millis(20);

/// What the handlers need from the node.
#[derive(Clone)]
pub(crate) struct Replica {
    pub storage: Arc<Storage>,
    pub await_epoch: EpochWaiter,
    /// Leads counter updates other coordinators send this node.
    pub leader: crate::counters::Leader,
}

/// Registers the replica side of every storage verb this node answers.
pub(crate) fn register(messaging: &Messaging, replica: Replica) {
    crate::batchlog::register(messaging, replica.storage.clone());
    let reader = replica.clone();
    let scanner = replica.clone();
    let leader = replica.clone();
    messaging.register(
        Verb::Mutation,
        handler_fn(move |from, payload| apply(replica.clone(), from, payload)),
    );
    messaging.register(
        Verb::Read,
        handler_fn(move |from, payload| read(reader.clone(), from, payload)),
    );
    messaging.register(
        Verb::RangeRead,
        handler_fn(move |from, payload| scan(scanner.clone(), from, payload)),
    );
    messaging.register(
        Verb::Counter,
        handler_fn(move |from, payload| crate::counters::handle(leader.clone(), from, payload)),
    );
}

/// `Verb::RangeRead`: this node's unresolved partitions of a key range.
async fn scan(replica: Replica, from: Peer, payload: Bytes) -> Result<Bytes, RemoteError> {
    let request = RangeRequest::decode(&payload).map_err(|e| {
        tracing::warn!("malformed range read from {}: {}", from.addr, e.0);
        RemoteError::new(reason::UNKNOWN, format!("malformed range read: {}", e.0))
    })?;
    let storage = replica.storage.clone();
    let r = &request;
    let scan = || async { storage.scan_source(r.table, &r.range, &r.filter, r.partition_limit) };
    match with_schema(&replica, request.epoch, scan).await {
        Ok(found) => Ok(encode_scan(&found)),
        Err(e) => Err(read_failure(e)),
    }
}

/// `Verb::Read`: this node's unresolved data for one round of a read, or its digest.
async fn read(replica: Replica, from: Peer, payload: Bytes) -> Result<Bytes, RemoteError> {
    let request = ReadRequest::decode(&payload).map_err(|e| {
        tracing::warn!("malformed read from {}: {}", from.addr, e.0);
        RemoteError::new(reason::UNKNOWN, format!("malformed read: {}", e.0))
    })?;
    let storage = replica.storage.clone();
    let read = |r: &ReadRequest| storage.read_source(r.table, &r.key, &r.filter, r.cap);
    let data = with_schema(&replica, request.epoch, || async { read(&request) }).await;
    match data {
        Ok(data) => Ok(ReadReply::new(data, request.digest).encode()),
        Err(e) => Err(read_failure(e)),
    }
}

/// The failure a replica answers for a read storage refused.
fn read_failure(error: StorageError) -> RemoteError {
    match error {
        StorageError::UnknownTable(id) => {
            RemoteError::new(reason::INCOMPATIBLE_SCHEMA, format!("unknown table {id:?}"))
        }
        other => {
            tracing::error!("read failed: {other}");
            RemoteError::new(reason::UNKNOWN, other.to_string())
        }
    }
}

/// `Verb::Mutation`: applies the mutations as one commit-log record.
async fn apply(replica: Replica, from: Peer, payload: Bytes) -> Result<Bytes, RemoteError> {
    let request = MutationRequest::decode(&payload).map_err(|e| {
        tracing::warn!("malformed mutation from {}: {}", from.addr, e.0);
        RemoteError::new(reason::UNKNOWN, format!("malformed mutation: {}", e.0))
    })?;
    let epoch = request.epoch;
    let storage = replica.storage.clone();
    let write = move || {
        let (storage, mutations) = (storage.clone(), request.mutations.clone());
        async move { storage.apply_batch(mutations).await }
    };
    match with_schema(&replica, epoch, write).await {
        Ok(()) => Ok(Bytes::new()),
        Err(e) => Err(write_failure(e)),
    }
}

/// Runs `op`, and when it fails on a table this node does not know, waits (at most
/// [`SCHEMA_WAIT`]) for the metadata log to reach `epoch` and the table to appear, then runs
/// it again.
pub(crate) async fn with_schema<T, F, Fut>(
    replica: &Replica,
    epoch: u64,
    op: F,
) -> storage::Result<T>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = storage::Result<T>>,
{
    let deadline = tokio::time::Instant::now() + SCHEMA_WAIT;
    let mut waited_for_epoch = false;
    loop {
        match op().await {
            Err(StorageError::UnknownTable(id)) if tokio::time::Instant::now() < deadline => {
                if !waited_for_epoch {
                    (replica.await_epoch)(epoch, SCHEMA_WAIT).await;
                    waited_for_epoch = true;
                } else {
                    tokio::time::sleep(SCHEMA_POLL).await;
                }
                tracing::debug!("waiting for table {id:?} at epoch {epoch}");
            }
            result => return result,
        }
    }
}

/// The failure a replica answers for a write storage refused.
pub(crate) fn write_failure(error: StorageError) -> RemoteError {
    match error {
        StorageError::CommitLogUnavailable(why) => RemoteError::new(reason::TIMEOUT, why),
        StorageError::UnknownTable(id) => {
            RemoteError::new(reason::INCOMPATIBLE_SCHEMA, format!("unknown table {id:?}"))
        }
        other => {
            tracing::error!("write failed: {other}");
            RemoteError::new(reason::UNKNOWN, other.to_string())
        }
    }
}
