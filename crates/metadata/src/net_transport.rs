//! The metadata group's `Transport` on `net::Messaging`: one verb per kind of call.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use net::{HandlerFuture, Messaging, NetError, Peer, RemoteError, Verb};

use crate::transport::{RpcHandler, RpcKind, Transport, TransportError};

/// `Transport` over internode messaging.
pub struct NetTransport {
    messaging: Arc<Messaging>,
}

impl NetTransport {
    pub fn new(messaging: Arc<Messaging>) -> Arc<NetTransport> {
        Arc::new(NetTransport { messaging })
    }
}

fn verb(kind: RpcKind) -> Verb {
    match kind {
        RpcKind::Vote => Verb::RaftVote,
        RpcKind::Append => Verb::RaftAppend,
        RpcKind::Snapshot => Verb::RaftSnapshot,
        RpcKind::Forward => Verb::MetadataForward,
        RpcKind::Discover => Verb::MetadataDiscover,
    }
}

fn transport_error(e: NetError, timeout: Duration) -> TransportError {
    match e {
        NetError::Timeout => TransportError::Timeout(timeout),
        NetError::Remote(remote) => TransportError::Remote(remote.message),
        NetError::Overloaded => TransportError::Overloaded,
        NetError::Shutdown => TransportError::Shutdown,
        other => TransportError::Unreachable(other.to_string()),
    }
}

impl Transport for NetTransport {
    fn local(&self) -> SocketAddr {
        self.messaging.local()
    }

    fn call(
        &self,
        to: SocketAddr,
        kind: RpcKind,
        payload: Bytes,
        timeout: Duration,
    ) -> BoxFuture<'static, Result<Bytes, TransportError>> {
        let messaging = self.messaging.clone();
        Box::pin(async move {
            messaging
                .request(to, verb(kind), payload, timeout)
                .await
                .map_err(|e| transport_error(e, timeout))
        })
    }

    fn register(&self, kind: RpcKind, handler: Arc<dyn RpcHandler>) {
        self.messaging
            .register(verb(kind), Arc::new(NetHandler(handler)));
    }
}

struct NetHandler(Arc<dyn RpcHandler>);

impl net::Handler for NetHandler {
    fn handle(&self, from: Peer, payload: Bytes) -> HandlerFuture {
        let answer = self.0.handle(from.addr, payload);
        Box::pin(async move {
            answer
                .await
                .map_err(|message| RemoteError::new(RemoteError::SERVER_ERROR, message))
        })
    }
}
