//! The seam between the metadata group and the network: request/response calls by kind, and
//! handlers for the calls this node answers. `net_transport` maps it onto `net::Messaging`
//! (one verb per kind).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;

/// The calls the metadata group makes (each is one `net::Verb`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RpcKind {
    /// Raft RequestVote (Verb::RaftVote).
    Vote,
    /// Raft AppendEntries, heartbeats included (Verb::RaftAppend).
    Append,
    /// A whole snapshot for a follower too far behind (Verb::RaftSnapshot).
    Snapshot,
    /// A commit or a join, sent to the leader (Verb::MetadataForward).
    Forward,
    /// "Are you in a group, and who leads it?" (Verb::MetadataDiscover).
    Discover,
}

impl RpcKind {
    pub const ALL: [RpcKind; 5] = [
        RpcKind::Vote,
        RpcKind::Append,
        RpcKind::Snapshot,
        RpcKind::Forward,
        RpcKind::Discover,
    ];
}

/// Why a call got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    #[error("no response within {0:?}")]
    Timeout(Duration),
    #[error("unreachable: {0}")]
    Unreachable(String),
    #[error("the remote handler failed: {0}")]
    Remote(String),
    #[error("send queue full")]
    Overloaded,
    #[error("messaging is shut down")]
    Shutdown,
}

/// Answers one kind of call; an `Err` travels back to the caller as `TransportError::Remote`.
pub trait RpcHandler: Send + Sync + 'static {
    fn handle(&self, from: SocketAddr, payload: Bytes)
        -> BoxFuture<'static, Result<Bytes, String>>;
}

/// Request/response messaging between metadata group members.
pub trait Transport: Send + Sync + 'static {
    /// This node's internode address.
    fn local(&self) -> SocketAddr;

    /// Sends `payload` to `to` and waits at most `timeout` for the answer.
    fn call(
        &self,
        to: SocketAddr,
        kind: RpcKind,
        payload: Bytes,
        timeout: Duration,
    ) -> BoxFuture<'static, Result<Bytes, TransportError>>;

    /// Routes calls of `kind` made to this node to `handler` (replacing an earlier one).
    fn register(&self, kind: RpcKind, handler: Arc<dyn RpcHandler>);
}
