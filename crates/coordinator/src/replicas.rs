//! The replicas of a token for one request: Cassandra's ReplicaPlan. Natural replicas from the
//! strategy and the ring, split into live and dead by the failure detector, the live ones in
//! the order requests prefer them: this node first, then its datacenter and rack, then the
//! others in ring order.
use ring::{Endpoint, ReplicationStrategy, Token};

use crate::topology::Topology;

/// The replicas of one token.
#[derive(Clone, Debug)]
pub struct ReplicaPlan {
    /// Live replicas, closest first.
    pub live: Vec<Endpoint>,
    /// Replicas the failure detector holds down (or unreachable: no messaging attached).
    pub dead: Vec<Endpoint>,
}

impl ReplicaPlan {
    /// The replicas of `token` under `strategy`; `reachable` tells whether a remote node can
    /// be sent to at all (a node running alone reaches only itself).
    pub fn new(
        topology: &Topology,
        strategy: &ReplicationStrategy,
        token: i64,
        reachable: bool,
    ) -> ReplicaPlan {
        let local = topology.local();
        let replicas = strategy.replicas(Token(token), &topology.ring());
        let (mut live, dead): (Vec<Endpoint>, Vec<Endpoint>) = replicas
            .into_iter()
            .partition(|e| e.addr == local.addr || (reachable && topology.is_alive(e.addr)));
        live.sort_by_key(|e| proximity(local, e));
        ReplicaPlan { live, dead }
    }

    /// Whether the node at `addr` is a replica (live or not).
    pub fn includes(&self, addr: std::net::IpAddr) -> bool {
        self.live.iter().chain(&self.dead).any(|e| e.addr == addr)
    }

    /// Whether the only replica is this node: the request takes the single-node path.
    pub fn only_local(&self, local: &Endpoint) -> bool {
        self.dead.is_empty() && self.live.len() == 1 && self.live[0].addr == local.addr
    }
}

/// 0 for this node, 1 for its rack, 2 for its datacenter, 3 for the others (a stable sort
/// keeps ring order within each).
fn proximity(local: &Endpoint, other: &Endpoint) -> u8 {
    if other.addr == local.addr {
        0
    } else if other.datacenter != local.datacenter {
        3
    } else if other.rack != local.rack {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::TokenMetadata;
    use std::net::IpAddr;
    use std::sync::Arc;

    fn endpoint(last: u8, dc: &str, rack: &str) -> Endpoint {
        Endpoint {
            addr: IpAddr::from([127, 0, 0, last]),
            datacenter: dc.into(),
            rack: rack.into(),
            host_id: [last; 16],
        }
    }

    fn topology(nodes: &[Endpoint]) -> Topology {
        let topology = Topology::new(nodes[0].clone());
        let mut ring = TokenMetadata::new();
        for (i, node) in nodes.iter().enumerate() {
            ring.add_endpoint(node.clone(), vec![Token(i as i64 * 100)]);
        }
        topology.set_ring(ring);
        topology
    }

    #[test]
    fn live_replicas_come_local_first_then_by_rack_and_dead_ones_apart() {
        let nodes = [
            endpoint(1, "dc1", "r1"),
            endpoint(2, "dc1", "r2"),
            endpoint(3, "dc1", "r1"),
            endpoint(4, "dc1", "r1"),
        ];
        let topology = topology(&nodes);
        topology.set_liveness(Arc::new(|addr| addr != IpAddr::from([127, 0, 0, 4])));
        let rf3 = ReplicationStrategy::Simple { rf: 3 };
        // Token 150 → owners 200 (.3), 300 (.4), 0 (.1).
        let plan = ReplicaPlan::new(&topology, &rf3, 150, true);
        let live: Vec<u8> = plan.live.iter().map(|e| last(e.addr)).collect();
        assert_eq!(live, vec![1, 3]);
        assert_eq!(plan.dead.len(), 1);
        // Token 50 → owners .2, .3, .4: the same rack first.
        let plan = ReplicaPlan::new(&topology, &rf3, 50, true);
        let live: Vec<u8> = plan.live.iter().map(|e| last(e.addr)).collect();
        assert_eq!(live, vec![3, 2]);
    }

    #[test]
    fn without_messaging_only_this_node_is_live() {
        let nodes = [endpoint(1, "dc1", "r1"), endpoint(2, "dc1", "r1")];
        let topology = topology(&nodes);
        topology.set_liveness(Arc::new(|_| true));
        let plan = ReplicaPlan::new(&topology, &ReplicationStrategy::Simple { rf: 2 }, 0, false);
        assert_eq!(plan.live.len(), 1);
        assert_eq!(plan.dead.len(), 1);
        assert!(!plan.only_local(&nodes[0]));
        let plan = ReplicaPlan::new(&topology, &ReplicationStrategy::Simple { rf: 1 }, 0, false);
        assert!(plan.only_local(&nodes[0]));
    }

    fn last(addr: IpAddr) -> u8 {
        match addr {
            IpAddr::V4(v4) => v4.octets()[3],
            IpAddr::V6(_) => 0,
        }
    }
}
