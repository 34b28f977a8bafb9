//! The replica side of the storage verbs: what a node does with a mutation (and, as they come,
//! reads) another node's coordinator sends it. A replica that does not know the table yet
//! waits for its metadata to reach the sender's epoch before failing, as the schema change
//! that created the table may still be on its way through the metadata log.
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mutation::TableId;
use net::{handler_fn, Messaging, Peer, RemoteError, Verb};
use storage::{Storage, StorageError};

use crate::messages::{encode_scan, MutationRequest, RangeRequest, ReadReply, ReadRequest};
use crate::remote::{Attachments, EpochWaiter};
use crate::trace::{self, Trace};

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
    /// The trace sink, once the query layer has attached it.
    pub attached: Arc<Attachments>,
}

impl Replica {
    /// Ends the trace of a traced message with the response to `to`, and writes its events.
    fn respond(&self, trace: Option<Trace>, to: &Peer) {
        trace::respond(trace, self.attached.traces.get(), to.addr);
    }

    /// "Adding to <table> memtable", once per table written.
    fn trace_memtables(&self, trace: &Trace, tables: impl Iterator<Item = TableId>) {
        let names = tables.filter_map(|table| self.storage.table_name(table).ok());
        trace::memtables(trace, names.map(|(_, name)| name));
    }

    /// "Executing single-partition query on <table>".
    fn trace_query(&self, trace: Option<&Trace>, table: TableId) {
        trace::trace(trace, || {
            let name = self
                .storage
                .table_name(table)
                .map_or_else(|_| format!("{table:?}"), |n| n.1);
            format!("Executing single-partition query on {name}")
        });
        trace::trace(trace, || "Acquiring sstable references".into());
    }
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
    let r = &request;
    let trace = trace::received(r.session, Verb::RangeRead, from.addr);
    let known = known_tables(&replica, r.epoch, std::iter::once(r.table)).await;
    trace::trace(trace.as_ref(), || {
        let sstables = replica
            .storage
            .table_stats(r.table)
            .map_or(0, |s| s.sstables);
        let range = trace::range_text(&r.range);
        format!("Executing seq scan across {sstables} sstables for {range}")
    });
    let scan = known.and_then(|()| {
        replica
            .storage
            .scan_source(r.table, &r.range, &r.filter, r.partition_limit)
    });
    if let (Some(t), Ok(found)) = (&trace, &scan) {
        trace::data_read(t, found.partitions.iter().map(|(_, data)| data));
    }
    replica.respond(trace, &from);
    match scan {
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
    let r = &request;
    let trace = trace::received(r.session, Verb::Read, from.addr);
    let known = known_tables(&replica, r.epoch, std::iter::once(r.table)).await;
    replica.trace_query(trace.as_ref(), r.table);
    let data = known.and_then(|()| {
        replica
            .storage
            .read_source(r.table, &r.key, &r.filter, r.cap)
    });
    if let (Some(t), Ok(found)) = (&trace, &data) {
        trace::data_read(t, found.iter().map(|rows| &rows.data));
    }
    replica.respond(trace, &from);
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
    let trace = trace::received(request.session, Verb::Mutation, from.addr);
    let tables = request.mutations.iter().map(|m| m.table);
    // Only a traced write names its tables afterwards (an empty Vec does not allocate).
    let written: Vec<TableId> = match trace {
        Some(_) => tables.clone().collect(),
        None => Vec::new(),
    };
    let applied = match known_tables(&replica, request.epoch, tables).await {
        Ok(()) => {
            trace::trace(trace.as_ref(), || "Appending to commitlog".into());
            replica.storage.apply_batch(request.mutations).await
        }
        Err(e) => Err(e),
    };
    if let (Some(t), Ok(())) = (&trace, &applied) {
        replica.trace_memtables(t, written.into_iter());
    }
    replica.respond(trace, &from);
    match applied {
        Ok(()) => Ok(Bytes::new()),
        Err(e) => Err(write_failure(e)),
    }
}

/// Waits until storage knows every one of `tables`: when one is missing, first for the
/// metadata log to reach `epoch`, then for the schema it holds to reach storage, at most
/// [`SCHEMA_WAIT`] in all; `UnknownTable` if one is still missing then.
pub(crate) async fn known_tables(
    replica: &Replica,
    epoch: u64,
    tables: impl Iterator<Item = TableId> + Clone,
) -> storage::Result<()> {
    let missing = || tables.clone().find(|&t| !replica.storage.has_table(t));
    let Some(mut table) = missing() else {
        return Ok(());
    };
    let deadline = tokio::time::Instant::now() + SCHEMA_WAIT;
    (replica.await_epoch)(epoch, SCHEMA_WAIT).await;
    loop {
        tracing::debug!("waiting for table {table:?} at epoch {epoch}");
        match missing() {
            None => return Ok(()),
            Some(_) if tokio::time::Instant::now() >= deadline => {
                return Err(StorageError::UnknownTable(table))
            }
            Some(t) => table = t,
        }
        tokio::time::sleep(SCHEMA_POLL).await;
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
