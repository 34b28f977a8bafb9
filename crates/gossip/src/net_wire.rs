//! Gossip over the internode `net` crate: chitchat's messages travel as one-way `Verb::Gossip`
//! messages (urgent connection class), so a node has one internode port and one handshake, and
//! the handshake already refuses nodes of another cluster.

use std::sync::{Arc, OnceLock, Weak};

use bytes::Bytes;
use net::{Handler, HandlerFuture, Messaging, NetError, Peer, Verb};

use crate::{GossipConfig, GossipError, Gossiper, Wire, WireError};

/// Starts gossip on `messaging` and registers its `Verb::Gossip` handler.
pub async fn start_over_net(
    config: GossipConfig,
    messaging: Arc<Messaging>,
) -> Result<Arc<Gossiper>, GossipError> {
    if config.listen != messaging.local() {
        return Err(GossipError::Config(format!(
            "gossip listens on {} but internode messaging on {}",
            config.listen,
            messaging.local()
        )));
    }
    // Registered first so that no early answer from a peer finds the verb without a handler.
    let handler = Arc::new(GossipHandler::default());
    messaging.register(Verb::Gossip, handler.clone());
    let wire = Arc::new(NetWire { messaging });
    let gossiper = Gossiper::start(config, wire).await?;
    let _ = handler.gossiper.set(Arc::downgrade(&gossiper));
    Ok(gossiper)
}

struct NetWire {
    messaging: Arc<Messaging>,
}

impl Wire for NetWire {
    fn send(&self, to: std::net::SocketAddr, payload: Bytes) -> Result<(), WireError> {
        self.messaging
            .send(to, Verb::Gossip, payload)
            .map_err(|error| match error {
                NetError::Shutdown => WireError::Shutdown,
                other => WireError::Unreachable(other.to_string()),
            })
    }
}

#[derive(Default)]
struct GossipHandler {
    gossiper: OnceLock<Weak<Gossiper>>,
}

impl Handler for GossipHandler {
    fn handle(&self, from: Peer, payload: Bytes) -> HandlerFuture {
        if let Some(gossiper) = self.gossiper.get().and_then(Weak::upgrade) {
            gossiper.receive(from.addr, payload);
        }
        Box::pin(async { Ok(Bytes::new()) })
    }
}
