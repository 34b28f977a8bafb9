//! The batchlog holder's side of `Verb::BatchStore` and `Verb::BatchRemove`: the batch is
//! written to this node's `system.batches` through the commit log (so it survives a crash of
//! this node too) or deleted from it. `system.batches` is a system table every node has, so
//! neither waits for the sender's metadata epoch.
use std::sync::Arc;

use bytes::Bytes;
use clock::{Clock, SharedClock};
use net::{handler_fn, Messaging, Peer, RemoteError, Verb};
use storage::Storage;

use crate::batches;
use crate::failures::{malformed, write_failure};
use crate::messages::batch::{RemoveRequest, StoreRequest};

/// Registers the batchlog verbs this node answers.
pub(super) fn register(messaging: &Messaging, storage: Arc<Storage>) {
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
    let request = StoreRequest::decode(&payload).map_err(|e| malformed("batch store", &from, e))?;
    match storage.apply(batches::store(&request.batch)).await {
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
    let request =
        RemoveRequest::decode(&payload).map_err(|e| malformed("batch remove", &from, e))?;
    batches::remove_locally(storage, request.id, clock.since_epoch()).await;
    Ok(Bytes::new())
}
