//! Internode links follow gossip: when a peer comes back up, links to it that failed while it
//! was down connect at once, rather than failing requests until their reconnect backoff (up to
//! 5 s) ends — a write at ALL right after the node returned would otherwise time out.

use std::sync::Arc;

use gossip::{Membership, MembershipEvent};
use net::Messaging;
use tokio::sync::broadcast::error::RecvError;

/// Follows gossip's events for as long as gossip runs.
pub fn start(messaging: Arc<Messaging>, gossip: Arc<dyn Membership>) {
    let mut events = gossip.subscribe();
    tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(MembershipEvent::Alive(addr)) => messaging.peer_up(addr.ip()),
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            }
        }
    });
}
