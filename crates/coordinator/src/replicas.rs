//! The replicas of a token for one request: Cassandra's ReplicaPlan. Natural replicas from the
//! strategy and the ring, split into live and dead by the failure detector, the live ones in
//! the order requests prefer them: this node first, then its datacenter and rack, then the
//! others in ring order — reads move a replica answering much slower than another of the same
//! closeness behind it (the dynamic snitch). Writes also go to pending replicas: nodes that
//! will own the token once the ring's joining and leaving nodes are done.
use ring::{Endpoint, ReplicationStrategy, Token};

use crate::topology::Topology;

/// The replicas of one token.
#[derive(Clone, Debug)]
pub struct ReplicaPlan {
    /// Live replicas, closest first.
    pub live: Vec<Endpoint>,
    /// Replicas the failure detector holds down (or unreachable: no messaging attached).
    pub dead: Vec<Endpoint>,
    /// Pending replicas (live or dead), for writes; they are also in `live` or `dead`.
    pub pending: Vec<Endpoint>,
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
        let replicas = strategy.replicas(Token(token), &topology.ring());
        Self::of(topology, replicas, Vec::new(), reachable)
    }

    /// The replicas a write of `token` goes to: the natural ones and the pending ones.
    pub fn for_write(
        topology: &Topology,
        strategy: &ReplicationStrategy,
        token: i64,
        reachable: bool,
    ) -> ReplicaPlan {
        let natural = strategy.replicas(Token(token), &topology.ring());
        let future = topology.future_ring();
        let Some(future) = future.as_deref() else {
            return Self::of(topology, natural, Vec::new(), reachable);
        };
        let pending: Vec<Endpoint> = strategy
            .replicas(Token(token), future)
            .into_iter()
            .filter(|e| natural.iter().all(|n| n.addr != e.addr))
            .collect();
        let all = natural.into_iter().chain(pending.iter().cloned()).collect();
        Self::of(topology, all, pending, reachable)
    }

    fn of(
        topology: &Topology,
        replicas: Vec<Endpoint>,
        pending: Vec<Endpoint>,
        reachable: bool,
    ) -> ReplicaPlan {
        let local = topology.local();
        let up = |e: &Endpoint| e.addr == local.addr || (reachable && topology.is_alive(e.addr));
        let (mut live, mut dead) = (replicas, Vec::new());
        if !live.iter().all(up) {
            (live, dead) = live.into_iter().partition(up);
        }
        live.sort_by_key(|e| proximity(local, e));
        ReplicaPlan {
            live,
            dead,
            pending,
        }
    }

    /// Moves replicas answering much slower than others of the same closeness behind them
    /// (`class`: a replica's latency class, see `ReplicaStats::score_class`).
    pub fn prefer_fast(&mut self, local: &Endpoint, class: impl Fn(std::net::IpAddr) -> u32) {
        self.live
            .sort_by_cached_key(|e| (proximity(local, e), class(e.addr)));
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

    #[test]
    fn writes_also_go_to_the_pending_owner_of_a_token() {
        let nodes = [
            endpoint(1, "dc1", "r1"),
            endpoint(2, "dc1", "r1"),
            endpoint(3, "dc1", "r1"),
        ];
        let topology = topology(&nodes[..2]);
        topology.set_liveness(Arc::new(|_| true));
        let mut future = TokenMetadata::clone(&topology.ring());
        future.add_endpoint(nodes[2].clone(), vec![Token(50)]);
        topology.set_future_ring(Some(future));
        let rf1 = ReplicationStrategy::Simple { rf: 1 };
        // Token 40: owned by the node at token 100 (.2); once .3 joins at 50, by .3.
        let write = ReplicaPlan::for_write(&topology, &rf1, 40, true);
        let addrs: Vec<u8> = write.live.iter().map(|e| last(e.addr)).collect();
        assert_eq!(addrs, vec![2, 3]);
        assert_eq!(write.pending.len(), 1);
        let read = ReplicaPlan::new(&topology, &rf1, 40, true);
        assert_eq!(read.live.len(), 1);
        assert!(read.pending.is_empty());
    }

    #[test]
    fn a_much_slower_replica_of_the_same_closeness_goes_behind() {
        let nodes = [
            endpoint(1, "dc1", "r1"),
            endpoint(2, "dc1", "r1"),
            endpoint(3, "dc1", "r1"),
        ];
        let topology = topology(&nodes);
        topology.set_liveness(Arc::new(|_| true));
        let rf3 = ReplicationStrategy::Simple { rf: 3 };
        let mut plan = ReplicaPlan::new(&topology, &rf3, 50, true);
        let before: Vec<u8> = plan.live.iter().map(|e| last(e.addr)).collect();
        assert_eq!(before, vec![1, 2, 3]);
        plan.prefer_fast(&nodes[0], |addr| if last(addr) == 2 { 5 } else { 0 });
        let after: Vec<u8> = plan.live.iter().map(|e| last(e.addr)).collect();
        assert_eq!(after, vec![1, 3, 2]);
    }

    fn last(addr: IpAddr) -> u8 {
        match addr {
            IpAddr::V4(v4) => v4.octets()[3],
            IpAddr::V6(_) => 0,
        }
    }
}
