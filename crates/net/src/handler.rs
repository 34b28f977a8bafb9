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

/// A handler for a service that may be dropped before messaging is: `f` runs with the service
/// while it lives; afterwards the verb answers SERVER_ERROR "`name` is shut down".
pub fn weak_handler<T, F, Fut>(service: &Arc<T>, name: &'static str, f: F) -> Arc<dyn Handler>
where
    T: Send + Sync + 'static,
    F: Fn(Arc<T>, Peer, Bytes) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Bytes, RemoteError>> + Send + 'static,
{
    let weak = Arc::downgrade(service);
    handler_fn(move |from, payload| {
        let call = weak.upgrade().map(|service| f(service, from, payload));
        async move {
            match call {
                Some(call) => call.await,
                None => Err(RemoteError::new(
                    RemoteError::SERVER_ERROR,
                    format!("{name} is shut down"),
                )),
            }
        }
    })
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
