//! The seam through which hints reach their replica: `net::Messaging` in a node (see
//! `MessagingDeliver`), an in-memory recorder in tests.
use std::net::SocketAddr;

use bytes::Bytes;
pub use net::BoxFuture;

/// Why a hint was not acknowledged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    #[error("timed out")]
    Timeout,
    #[error("{0}")]
    Failed(String),
}

pub trait Deliver: Send + Sync + 'static {
    /// Sends one hint (a payload `decode_hint` reads) to the node at `addr` and resolves once
    /// that node has applied it.
    fn deliver(
        &self,
        addr: SocketAddr,
        hint: Bytes,
    ) -> BoxFuture<'static, Result<(), DeliveryError>>;
}
