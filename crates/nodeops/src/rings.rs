//! The token maps of the metadata log's nodes: the ring that serves reads, and the future
//! ring that writes also reach while a topology change runs (its pending replicas).

use std::net::IpAddr;

use metadata::{ClusterMetadata, HostId, NodeRecord, NodeState};
use ring::{Endpoint, Token, TokenMetadata};

/// The token map of the nodes that own tokens (normal and leaving ones; a node being replaced
/// keeps its tokens until its replacement has its data).
pub fn ring_of(meta: &ClusterMetadata) -> TokenMetadata {
    ring_with(meta, |node| {
        matches!(node.state, NodeState::Normal | NodeState::Leaving)
    })
}

/// The token map once the topology change under way is done — joining and replacing nodes
/// in, leaving and replaced ones out; `None` when no change is under way.
pub fn future_ring_of(meta: &ClusterMetadata) -> Option<TokenMetadata> {
    let replaced: Vec<HostId> = meta
        .nodes
        .values()
        .filter_map(|n| match n.state {
            NodeState::Replacing(old) => Some(old),
            _ => None,
        })
        .collect();
    meta.moving_node().map(|_| {
        ring_with(meta, |node| {
            let future_owner = matches!(
                node.state,
                NodeState::Normal | NodeState::Joining | NodeState::Replacing(_)
            );
            future_owner && !replaced.contains(&node.host_id)
        })
    })
}

fn ring_with(meta: &ClusterMetadata, owns: impl Fn(&NodeRecord) -> bool) -> TokenMetadata {
    let mut ring = TokenMetadata::new();
    for node in meta.nodes.values().filter(|n| owns(n)) {
        let endpoint = endpoint_of(node.host_id, node.addr.ip(), &node.dc, &node.rack);
        ring.add_endpoint(endpoint, node.tokens.iter().copied().map(Token).collect());
    }
    ring
}

pub fn endpoint_of(host_id: HostId, addr: IpAddr, dc: &str, rack: &str) -> Endpoint {
    Endpoint {
        addr,
        datacenter: dc.into(),
        rack: rack.into(),
        host_id: *host_id.as_bytes(),
    }
}

/// Node records for tests here and in the node's membership tests.
#[doc(hidden)]
pub mod testing {
    use std::net::{IpAddr, SocketAddr};

    use metadata::{NodeRecord, NodeState};
    use uuid::Uuid;

    /// Node `last` at 127.0.0.`last` in dc1, rack r`last`.
    pub fn record(last: u8, tokens: Vec<i64>, state: NodeState) -> NodeRecord {
        let ip = IpAddr::from([127, 0, 0, last]);
        NodeRecord {
            host_id: Uuid::from_u128(last as u128),
            addr: SocketAddr::new(ip, 7000),
            native: SocketAddr::new(ip, 9042),
            dc: "dc1".into(),
            rack: format!("r{last}"),
            tokens,
            state,
            release_version: "5.0.4".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::record;
    use super::*;

    fn metadata(nodes: Vec<NodeRecord>) -> ClusterMetadata {
        let mut meta = ClusterMetadata::empty("c");
        for n in nodes {
            meta.nodes.insert(n.host_id, n);
        }
        meta
    }

    #[test]
    fn the_ring_holds_the_tokens_of_normal_and_leaving_nodes() {
        let mut meta = metadata(vec![
            record(1, vec![10, 20], NodeState::Normal),
            record(2, vec![30], NodeState::Leaving),
            record(3, vec![40], NodeState::Joining),
            record(4, vec![], NodeState::Left),
        ]);
        let ring = ring_of(&meta);
        assert_eq!(ring.tokens(), vec![Token(10), Token(20), Token(30)]);
        let owner = ring.primary_range_owner(Token(25)).map(|e| e.rack.clone());
        assert_eq!(owner.as_deref(), Some("r2"));
        let future = future_ring_of(&meta).expect("nodes are moving");
        assert_eq!(future.tokens(), vec![Token(10), Token(20), Token(40)]);
        meta.nodes.retain(|_, n| n.state == NodeState::Normal);
        assert!(future_ring_of(&meta).is_none());
    }

    #[test]
    fn a_replacement_owns_the_dead_nodes_tokens_only_in_the_future_ring() {
        let dead = record(2, vec![30], NodeState::Normal);
        let replacing = record(5, vec![30], NodeState::Replacing(dead.host_id));
        let meta = metadata(vec![
            record(1, vec![10], NodeState::Normal),
            dead,
            replacing,
        ]);
        let now = ring_of(&meta);
        let owner = |ring: &TokenMetadata| ring.primary_range_owner(Token(30)).map(|e| e.addr);
        assert_eq!(owner(&now), Some(IpAddr::from([127, 0, 0, 2])));
        let future = future_ring_of(&meta).expect("a replacement is under way");
        assert_eq!(owner(&future), Some(IpAddr::from([127, 0, 0, 5])));
        assert_eq!(future.tokens(), vec![Token(10), Token(30)]);
    }
}
