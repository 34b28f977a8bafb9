//! The batchlog holder's side of `Verb::BatchStore` and `Verb::BatchRemove`: the batch is
//! written to this node's `system.batches` through the commit log (so it survives a crash of
//! this node too) or deleted from it. `system.batches` is a system table every node has, so
//! neither waits for the sender's metadata epoch.
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use clock::{Clock, SharedClock};
use mutation::codec::DecodeError;
use net::{handler_fn, Messaging, Peer, RemoteError, Verb};
use storage::Storage;
use uuid::Uuid;

use super::codec::{RemoveRequest, StoreRequest};
use super::table;
use crate::verbs::{reason, write_failure};

/// Registers the batchlog verbs this node answers.
pub(crate) fn register(messaging: &Messaging, storage: Arc<Storage>) {
    let storing = storage.clone();
    let clock = messaging.clock().clone();
    messaging.register(
        Verb::BatchStore,
        handler_fn(move |from, payload| store(storing.clone(), from, payload)),
    );
    messaging.register(
        Verb::BatchRemove,
        handler_fn(move |from, payload| remove(storage.clone(), clock.clone(), from, payload)),
    );
}

async fn store(storage: Arc<Storage>, from: Peer, payload: Bytes) -> Result<Bytes, RemoteError> {
    let request = StoreRequest::decode(&payload).map_err(|e| malformed("store", &from, e))?;
    match storage.apply(table::store(&request.batch)).await {
        Ok(()) => Ok(Bytes::new()),
        Err(e) => Err(write_failure(e)),
    }
}

async fn remove(
    storage: Arc<Storage>,
    clock: SharedClock,
    from: Peer,
    payload: Bytes,
) -> Result<Bytes, RemoteError> {
    let request = RemoveRequest::decode(&payload).map_err(|e| malformed("remove", &from, e))?;
    remove_locally(storage, request.id, clock.since_epoch()).await;
    Ok(Bytes::new())
}

fn malformed(what: &str, from: &Peer, e: DecodeError) -> RemoteError {
    tracing::warn!("malformed batch {what} from {}: {}", from.addr, e.0);
    RemoteError::new(reason::UNKNOWN, format!("malformed batch {what}: {}", e.0))
}

/// Deletes batch `id` from this node's batchlog at `now` since the epoch (a failure is
/// logged: replay retries it).
pub(crate) async fn remove_locally(storage: Arc<Storage>, id: Uuid, now: Duration) {
    let removal = table::remove(&id, now.as_micros() as i64, now.as_secs() as i32);
    if let Err(e) = storage.apply(removal).await {
        tracing::warn!("batch {id} not removed from the batchlog: {e}");
    }
}
