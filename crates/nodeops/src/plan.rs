//! Planning a topology change: which ranges a node gains or loses, from or to whom, and which
//! replication factors a leaving node must leave enough nodes for. Pure functions of the
//! rings (the current one, whose replicas serve reads, and the future one, once the change is
//! done) and a keyspace's replication.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use metadata::ReplicationCheck;
use ring::{ReplicationStrategy, Token, TokenMetadata};

use crate::mover::{TokenRange, Transfer};

/// The replication factors of the keyspaces replicated over the ring, as a node of `dc`
/// leaving must leave room for them (Cassandra's decommission check).
pub fn replication_checks(
    strategies: impl IntoIterator<Item = (String, Arc<ReplicationStrategy>)>,
    dc: &str,
) -> Vec<ReplicationCheck> {
    let mut checks = Vec::new();
    for (name, strategy) in strategies {
        let (rf, per_dc) = match &*strategy {
            ReplicationStrategy::Simple { rf } => (*rf, false),
            ReplicationStrategy::NetworkTopology { dc_rf } => {
                (dc_rf.get(dc).copied().unwrap_or(0), true)
            }
            ReplicationStrategy::Local | ReplicationStrategy::Everywhere => continue,
        };
        if rf > 0 {
            checks.push(ReplicationCheck {
                keyspace: name,
                rf: u32::try_from(rf).unwrap_or(u32::MAX),
                per_dc,
            });
        }
    }
    checks
}

/// The ranges of `ring` that `node` replicates under `strategy`, none of them wrapping.
pub fn owned_ranges(
    strategy: &ReplicationStrategy,
    ring: &TokenMetadata,
    node: IpAddr,
) -> Vec<TokenRange> {
    ring.ranges()
        .into_iter()
        .filter(|(_, end)| replicates(strategy, ring, *end, node))
        .flat_map(|(start, end)| unwrapped(start.0, end.0))
        .collect()
}

/// What `node` must fetch to replicate in `future` what it does not in `ring`: for each
/// range, from the replica that gives it up (strict consistent range movement), else from the
/// first current replica.
pub fn gained_ranges(
    keyspace: &str,
    strategy: &ReplicationStrategy,
    ring: &TokenMetadata,
    future: &TokenMetadata,
    node: IpAddr,
) -> Vec<Transfer> {
    let mut by_peer: BTreeMap<IpAddr, Vec<TokenRange>> = BTreeMap::new();
    for (start, end) in pieces(ring, future) {
        let now = addrs(strategy, ring, end);
        let then = addrs(strategy, future, end);
        if now.contains(&node) || !then.contains(&node) {
            continue;
        }
        let giver = now.iter().find(|a| !then.contains(a)).or(now.first());
        if let Some(peer) = giver {
            by_peer
                .entry(*peer)
                .or_default()
                .extend(unwrapped(start.0, end.0));
        }
    }
    transfers(keyspace, by_peer)
}

/// What `node` must send before `future` takes effect: each range it replicates now, to each
/// replica that `future` adds to it.
pub fn lost_ranges(
    keyspace: &str,
    strategy: &ReplicationStrategy,
    ring: &TokenMetadata,
    future: &TokenMetadata,
    node: IpAddr,
) -> Vec<Transfer> {
    let mut by_peer: BTreeMap<IpAddr, Vec<TokenRange>> = BTreeMap::new();
    for (start, end) in pieces(ring, future) {
        let now = addrs(strategy, ring, end);
        if !now.contains(&node) {
            continue;
        }
        for taker in addrs(strategy, future, end) {
            if !now.contains(&taker) {
                by_peer
                    .entry(taker)
                    .or_default()
                    .extend(unwrapped(start.0, end.0));
            }
        }
    }
    transfers(keyspace, by_peer)
}

fn transfers(keyspace: &str, by_peer: BTreeMap<IpAddr, Vec<TokenRange>>) -> Vec<Transfer> {
    by_peer
        .into_iter()
        .map(|(peer, ranges)| Transfer {
            keyspace: keyspace.to_string(),
            peer,
            ranges,
        })
        .collect()
}

/// The ring cut at the tokens of both rings, (left-exclusive, right-inclusive]: each piece has
/// one set of replicas in each ring, those of its right end.
fn pieces(ring: &TokenMetadata, future: &TokenMetadata) -> Vec<(Token, Token)> {
    let mut cuts = ring.tokens();
    cuts.extend(future.tokens());
    cuts.sort_unstable();
    cuts.dedup();
    let Some(last) = cuts.last().copied() else {
        return Vec::new();
    };
    let mut left = last;
    cuts.into_iter()
        .map(|right| {
            let piece = (left, right);
            left = right;
            piece
        })
        .collect()
}

fn addrs(strategy: &ReplicationStrategy, ring: &TokenMetadata, at: Token) -> Vec<IpAddr> {
    if ring.is_empty() {
        return Vec::new();
    }
    strategy.replicas(at, ring).iter().map(|e| e.addr).collect()
}

fn replicates(
    strategy: &ReplicationStrategy,
    ring: &TokenMetadata,
    at: Token,
    node: IpAddr,
) -> bool {
    addrs(strategy, ring, at).contains(&node)
}

/// `(start, end]` as ranges whose left is below their right (`i64::MIN` on the right: the end
/// of the ring); `start == end` is the whole ring.
fn unwrapped(start: i64, end: i64) -> Vec<TokenRange> {
    if start < end {
        vec![(start, end)]
    } else if end == i64::MIN {
        vec![(start, i64::MIN)]
    } else {
        vec![(start, i64::MIN), (i64::MIN, end)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::Endpoint;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    fn ring(nodes: &[(u8, i64)]) -> TokenMetadata {
        let mut ring = TokenMetadata::new();
        for (last, token) in nodes {
            let endpoint = Endpoint {
                addr: ip(*last),
                datacenter: "dc1".into(),
                rack: "rack1".into(),
                host_id: [*last; 16],
            };
            ring.add_endpoint(endpoint, vec![Token(*token)]);
        }
        ring
    }

    const RF1: ReplicationStrategy = ReplicationStrategy::Simple { rf: 1 };

    #[test]
    fn a_node_owns_its_primary_range_at_rf_one_and_more_at_rf_two() {
        let ring = ring(&[(1, -100), (2, 0), (3, 100)]);
        assert_eq!(owned_ranges(&RF1, &ring, ip(2)), vec![(-100, 0)]);
        // node 1's primary range wraps: it is cut at the end of the ring
        assert_eq!(
            owned_ranges(&RF1, &ring, ip(1)),
            vec![(100, i64::MIN), (i64::MIN, -100)]
        );
        let rf2 = ReplicationStrategy::Simple { rf: 2 };
        // at RF 2 a node also replicates the range before its own: node 1's, which wraps
        assert_eq!(
            owned_ranges(&rf2, &ring, ip(2)),
            vec![(100, i64::MIN), (i64::MIN, -100), (-100, 0)]
        );
        assert!(owned_ranges(&RF1, &ring, ip(9)).is_empty());
    }

    #[test]
    fn a_joining_node_fetches_each_range_from_the_node_giving_it_up() {
        let now = ring(&[(1, -100), (2, 0), (3, 100)]);
        let joining = ring(&[(1, -100), (2, 0), (4, 50), (3, 100)]);
        let fetch = gained_ranges("ks", &RF1, &now, &joining, ip(4));
        let expected = Transfer {
            keyspace: "ks".into(),
            peer: ip(3),
            ranges: vec![(0, 50)],
        };
        assert_eq!(fetch, vec![expected.clone()]);
        // node 3 sends the same range to node 4; the others send nothing
        let sent = lost_ranges("ks", &RF1, &now, &joining, ip(3));
        assert_eq!(sent.len(), 1);
        assert_eq!((sent[0].peer, &sent[0].ranges), (ip(4), &expected.ranges));
        for last in [1, 2] {
            assert!(lost_ranges("ks", &RF1, &now, &joining, ip(last)).is_empty());
            assert!(gained_ranges("ks", &RF1, &now, &joining, ip(last)).is_empty());
        }
    }

    #[test]
    fn a_leaving_node_sends_its_ranges_to_the_nodes_that_take_them() {
        let now = ring(&[(1, -100), (2, 0), (3, 100)]);
        let after = ring(&[(1, -100), (2, 0)]);
        let rf2 = ReplicationStrategy::Simple { rf: 2 };
        let sent = lost_ranges("ks", &rf2, &now, &after, ip(3));
        // with RF 2, (0, 100] was on 3 and 1, (-100, 0] on 2 and 3 and (100, -100] on 1 and 2:
        // (0, 100] now goes to 1 and 2 (2 gains it), (-100, 0] to 2 and 1 (1 gains it)
        let peers: Vec<(IpAddr, Vec<TokenRange>)> =
            sent.into_iter().map(|t| (t.peer, t.ranges)).collect();
        assert_eq!(
            peers,
            vec![(ip(1), vec![(-100, 0)]), (ip(2), vec![(0, 100)])]
        );
        assert!(gained_ranges("ks", &rf2, &now, &after, ip(1)).len() == 1);
    }

    #[test]
    fn whole_and_wrapping_ranges_are_split_at_the_end_of_the_ring() {
        assert_eq!(unwrapped(5, 5), vec![(5, i64::MIN), (i64::MIN, 5)]);
        assert_eq!(unwrapped(5, i64::MIN), vec![(5, i64::MIN)]);
        assert_eq!(unwrapped(-5, 5), vec![(-5, 5)]);
    }
}
