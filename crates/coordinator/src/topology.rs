//! What the coordinator knows of the cluster: the token map (from the cluster metadata log)
//! and which nodes are up (from gossip). A single node is a ring of itself, always up.
use std::net::IpAddr;
use std::sync::Arc;

use arc_swap::{ArcSwap, ArcSwapOption, Guard};
use parking_lot::RwLock;
use ring::{Endpoint, Token, TokenMetadata};

/// Tells whether the node at an address is up.
pub type Liveness = Arc<dyn Fn(IpAddr) -> bool + Send + Sync>;

/// The ring and liveness, replaced as the cluster changes. Every request reads the rings; an
/// `ArcSwap` load shares no written cache line between the cores doing so (a lock or a
/// reference count would).
pub struct Topology {
    local: Endpoint,
    ring: ArcSwap<TokenMetadata>,
    /// The ring once joining and leaving nodes are done; `None` when none is moving.
    future: ArcSwapOption<TokenMetadata>,
    liveness: RwLock<Option<Liveness>>,
}

impl Topology {
    /// A ring that so far holds only this node.
    pub fn new(local: Endpoint) -> Topology {
        let mut ring = TokenMetadata::new();
        ring.add_endpoint(local.clone(), Vec::new());
        ring.set_local(local.addr);
        Topology {
            local,
            ring: ArcSwap::from_pointee(ring),
            future: ArcSwapOption::empty(),
            liveness: RwLock::new(None),
        }
    }

    pub fn local(&self) -> &Endpoint {
        &self.local
    }

    /// The current token map (hold it for a request, not longer).
    pub fn ring(&self) -> Guard<Arc<TokenMetadata>> {
        self.ring.load()
    }

    /// Replaces the token map; this node stays the ring's local node.
    pub fn set_ring(&self, mut ring: TokenMetadata) {
        ring.set_local(self.local.addr);
        if ring.endpoint(self.local.addr).is_none() {
            ring.add_endpoint(self.local.clone(), Vec::new());
        }
        self.ring.store(Arc::new(ring));
    }

    /// Sets the ring as it will be once the joining and leaving nodes are done (`None`: no
    /// node is moving); writes also go to the replicas it adds.
    pub fn set_future_ring(&self, future: Option<TokenMetadata>) {
        self.future.store(future.map(Arc::new));
    }

    pub fn future_ring(&self) -> Guard<Option<Arc<TokenMetadata>>> {
        self.future.load()
    }

    /// Claims `tokens` for this node on the current ring.
    pub fn set_local_tokens(&self, tokens: Vec<i64>) {
        let mut ring = TokenMetadata::clone(&self.ring());
        ring.add_endpoint(self.local.clone(), tokens.into_iter().map(Token).collect());
        self.ring.store(Arc::new(ring));
    }

    /// Installs the source of liveness (gossip's failure detector).
    pub fn set_liveness(&self, liveness: Liveness) {
        *self.liveness.write() = Some(liveness);
    }

    /// Whether the node at `addr` is up: this node always is; others once a liveness source
    /// says so (none installed: only this node is known to be up).
    pub fn is_alive(&self, addr: IpAddr) -> bool {
        if addr == self.local.addr {
            return true;
        }
        self.liveness
            .read()
            .as_ref()
            .is_some_and(|alive| alive(addr))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(last: u8) -> Endpoint {
        Endpoint {
            addr: IpAddr::from([127, 0, 0, last]),
            datacenter: "dc1".into(),
            rack: "rack1".into(),
            host_id: [last; 16],
        }
    }

    #[test]
    fn the_local_node_stays_on_a_replaced_ring_and_is_always_alive() {
        let topology = Topology::new(endpoint(1));
        let mut ring = TokenMetadata::new();
        ring.add_endpoint(endpoint(2), vec![Token(5)]);
        topology.set_ring(ring);
        assert!(topology.ring().endpoint(endpoint(1).addr).is_some());
        assert_eq!(
            topology.ring().local().map(|e| e.addr),
            Some(endpoint(1).addr)
        );
        assert!(topology.is_alive(endpoint(1).addr));
        assert!(!topology.is_alive(endpoint(2).addr));
        topology.set_liveness(Arc::new(|addr| addr == IpAddr::from([127, 0, 0, 2])));
        assert!(topology.is_alive(endpoint(2).addr));
        assert!(!topology.is_alive(endpoint(3).addr));
    }

    #[test]
    fn local_tokens_are_claimed_on_the_current_ring() {
        let topology = Topology::new(endpoint(1));
        let mut ring = TokenMetadata::new();
        ring.add_endpoint(endpoint(2), vec![Token(5)]);
        topology.set_ring(ring);
        topology.set_local_tokens(vec![7, 9]);
        let ring = topology.ring();
        assert_eq!(ring.tokens_of(endpoint(1).addr), vec![Token(7), Token(9)]);
        assert_eq!(ring.tokens_of(endpoint(2).addr), vec![Token(5)]);
    }
}
