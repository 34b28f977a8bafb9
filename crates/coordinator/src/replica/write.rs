//! `Verb::Mutation` on a replica: the mutations applied as one commit-log record.
use bytes::Bytes;
use mutation::TableId;
use net::{Peer, RemoteError, Verb};

use super::context::Replica;
use crate::failures::{malformed, write_failure};
use crate::messages::MutationRequest;
use crate::trace::{self, Trace};

/// Applies the mutations of a `Verb::Mutation` as one commit-log record.
pub(super) async fn apply(
    replica: Replica,
    from: Peer,
    payload: Bytes,
) -> Result<Bytes, RemoteError> {
    let request = MutationRequest::decode(&payload).map_err(|e| malformed("mutation", &from, e))?;
    let trace = trace::received(request.session, Verb::Mutation, from.addr);
    let tables = request.mutations.iter().map(|m| m.table);
    // Only a traced write names its tables afterwards (an empty Vec does not allocate).
    let written: Vec<TableId> = match trace {
        Some(_) => tables.clone().collect(),
        None => Vec::new(),
    };
    let applied = match replica.known_tables(request.epoch, tables).await {
        Ok(()) => {
            trace::trace(trace.as_ref(), || "Appending to commitlog".into());
            replica.storage.apply_batch(request.mutations).await
        }
        Err(e) => Err(e),
    };
    if let (Some(t), Ok(())) = (&trace, &applied) {
        trace_memtables(&replica, t, written.into_iter());
    }
    replica.respond(trace, &from);
    match applied {
        Ok(()) => Ok(Bytes::new()),
        Err(e) => Err(write_failure(e)),
    }
}

/// "Adding to <table> memtable", once per table written.
fn trace_memtables(replica: &Replica, trace: &Trace, tables: impl Iterator<Item = TableId>) {
    let names = tables.filter_map(|table| replica.storage.table_name(table).ok());
    trace::memtables(trace, names.map(|(_, name)| name));
}
