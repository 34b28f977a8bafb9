//! How much of the ring each endpoint owns: as primary owner of its ranges, and effectively,
//! as a replica under a keyspace's strategy (what `nodetool status` prints as "Owns").
use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::{ReplicationStrategy, Token, TokenMetadata};

/// The number of tokens on the Murmur3 ring, as a float.
const RING_SIZE: f64 = 18_446_744_073_709_551_616.0;

/// The fraction of the ring in the range (left, right]; a range from a token to itself is the
/// whole ring (a ring of one token).
pub fn range_fraction(left: Token, right: Token) -> f64 {
    if left == right {
        return 1.0;
    }
    let width = (right.0 as u64).wrapping_sub(left.0 as u64);
    width as f64 / RING_SIZE
}

/// The fraction of the ring each endpoint is the primary owner of.
pub fn primary_ownership(ring: &TokenMetadata) -> BTreeMap<IpAddr, f64> {
    let mut owned = BTreeMap::new();
    for endpoint in ring.endpoints() {
        let fraction = ring
            .ranges_of(endpoint.addr)
            .into_iter()
            .map(|(left, right)| range_fraction(left, right))
            .sum();
        owned.insert(endpoint.addr, fraction);
    }
    owned
}

/// The fraction of the ring each endpoint holds a replica of under `strategy` (Cassandra's
/// effective ownership): every primary range counts for each of its replicas. With a
/// replication factor of 3 the fractions sum to 3.
pub fn effective_ownership(
    strategy: &ReplicationStrategy,
    ring: &TokenMetadata,
) -> BTreeMap<IpAddr, f64> {
    let mut owned: BTreeMap<IpAddr, f64> = ring.endpoints().iter().map(|e| (e.addr, 0.0)).collect();
    for (left, right) in ring.ranges() {
        let fraction = range_fraction(left, right);
        for replica in strategy.replicas(right, ring) {
            *owned.entry(replica.addr).or_default() += fraction;
        }
    }
    owned
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token_metadata::tests::node;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn range_fractions_wrap_and_a_lone_token_owns_everything() {
        assert!(close(range_fraction(Token(0), Token(0)), 1.0));
        assert!(close(range_fraction(Token(i64::MIN), Token(0)), 0.5));
        assert!(close(range_fraction(Token(0), Token(i64::MIN)), 0.5));
        assert!(close(
            range_fraction(Token(10), Token(-10)),
            1.0 - 20.0 / RING_SIZE
        ));
    }

    #[test]
    fn ownership_sums_to_one_primary_and_rf_effective() {
        let mut ring = TokenMetadata::new();
        ring.add_endpoint(node(1, "dc1", "r1"), vec![Token(i64::MIN / 2)]);
        ring.add_endpoint(node(2, "dc1", "r1"), vec![Token(0)]);
        ring.add_endpoint(node(3, "dc1", "r1"), vec![Token(i64::MAX / 2)]);
        let primary = primary_ownership(&ring);
        assert!(close(primary.values().sum(), 1.0));
        assert!(close(primary[&node(1, "dc1", "r1").addr], 0.5));
        assert!(close(primary[&node(2, "dc1", "r1").addr], 0.25));
        let rf2 = ReplicationStrategy::Simple { rf: 2 };
        let effective = effective_ownership(&rf2, &ring);
        assert!(close(effective.values().sum(), 2.0));
        // node 2 replicates its own range and node 1's (the one before it).
        assert!(close(effective[&node(2, "dc1", "r1").addr], 0.75));
        let rf3 = ReplicationStrategy::Simple { rf: 3 };
        assert!(effective_ownership(&rf3, &ring)
            .values()
            .all(|&f| close(f, 1.0)));
    }
}
