//! `Verb::Counter` on a replica: this node leads a counter update another coordinator sent it
//! (see `coordinator::counters`).
use bytes::Bytes;
use net::{Peer, RemoteError};

use super::context::Replica;
use crate::failures::{malformed, reason, write_failure};
use crate::messages::{CounterReply, CounterRequest};

/// Leads the update and answers with its outcome at the level asked (a [`CounterReply`]).
pub(super) async fn lead(
    replica: Replica,
    from: Peer,
    payload: Bytes,
) -> Result<Bytes, RemoteError> {
    let request =
        CounterRequest::decode(&payload).map_err(|e| malformed("counter update", &from, e))?;
    let tables = std::iter::once(request.table);
    replica
        .known_tables(request.epoch, tables)
        .await
        .map_err(write_failure)?;
    let result = replica.leader.lead(&request).await;
    match CounterReply::of(&result) {
        Some(reply) => Ok(reply.encode()),
        None => Err(RemoteError::new(
            reason::UNKNOWN,
            result.err().map_or_else(String::new, |e| e.to_string()),
        )),
    }
}
