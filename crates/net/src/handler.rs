//! What a node runs for the messages it receives.
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;

use crate::config::Peer;
use crate::error::RemoteError;

pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<Bytes, RemoteError>> + Send + 'static>>;

/// Runs one verb's messages. For a one-way message the result is discarded.
pub trait Handler: Send + Sync + 'static {
    fn handle(&self, from: Peer, payload: Bytes) -> HandlerFuture;
}

/// A handler from an async closure.
pub fn handler_fn<F, Fut>(f: F) -> Arc<dyn Handler>
where
    F: Fn(Peer, Bytes) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Bytes, RemoteError>> + Send + 'static,
{
    Arc::new(FnHandler(f))
}

struct FnHandler<F>(F);

impl<F, Fut> Handler for FnHandler<F>
where
    F: Fn(Peer, Bytes) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Bytes, RemoteError>> + Send + 'static,
{
    fn handle(&self, from: Peer, payload: Bytes) -> HandlerFuture {
        Box::pin((self.0)(from, payload))
    }
}
