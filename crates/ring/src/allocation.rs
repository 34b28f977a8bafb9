//! Balanced token allocation (`allocate_tokens_for_local_replication_factor`): a joining node
//! takes tokens that even out how much each node of its datacenter replicates, instead of
//! random ones. The first node of a datacenter takes evenly spaced tokens; every later one
//! picks, token by token, the split of a large range that leaves the datacenter's effective
//! ownership (under NetworkTopologyStrategy with the given factor, so racks count) most even,
//! then moves each of its tokens in turn to its best place given the others. Cassandra's own
//! allocator optimises the same quantity with a different search; the tokens differ, the
//! balance is comparable (see the tests).
//!
//! Only the datacenter's own tokens matter: walking the ring from anywhere between two of them
//! meets the datacenter's endpoints in the same order, so the search runs on a compact copy of
//! them ([`Layout`]).
use std::collections::BTreeMap;

use crate::ownership::range_fraction;
use crate::{Endpoint, Token, TokenMetadata};

/// How many of the largest ranges are tried as split points for each new token.
const CANDIDATE_RANGES: usize = 128;

/// Where in a candidate range a new token may go (fractions of its width).
const SPLITS: [f64; 3] = [0.25, 0.5, 0.75];

/// Passes that move each new token, in turn, to its best place given the others.
const REFINE_PASSES: usize = 2;

/// The weight of the primary ranges' spread, which decides alone while the datacenter has no
/// more nodes than replicas (every node then replicates everything).
const TIE_BREAK: f64 = 1e-3;

/// `num_tokens` tokens for `node` joining `ring`, balanced for `rf` replicas in its datacenter.
/// `seed` only places the first node's evenly spaced tokens.
pub fn allocate_tokens(
    ring: &TokenMetadata,
    node: &Endpoint,
    num_tokens: usize,
    rf: usize,
    seed: u64,
) -> Vec<Token> {
    let num_tokens = num_tokens.max(1);
    let layout = Layout::of(ring, node);
    if layout.tokens.is_empty() {
        return evenly_spaced(ring, num_tokens, seed);
    }
    let rf = rf.max(1);
    let mut tokens = Vec::with_capacity(num_tokens);
    for _ in 0..num_tokens {
        match layout.best_split(&tokens, rf) {
            Some(token) => tokens.push(token),
            None => break,
        }
    }
    for _ in 0..REFINE_PASSES {
        for i in 0..tokens.len() {
            let moved = tokens.remove(i);
            let token = layout.best_split(&tokens, rf).unwrap_or(moved);
            tokens.insert(i, token);
        }
    }
    tokens.sort();
    tokens
}

/// `n` tokens a ring's n-th apart, rotated by `seed`, skipping any already taken.
fn evenly_spaced(ring: &TokenMetadata, n: usize, seed: u64) -> Vec<Token> {
    let step = u64::MAX / n as u64;
    let taken = ring.tokens();
    let mut tokens: Vec<Token> = (0..n as u64)
        .map(|i| Token(seed.wrapping_add(i.wrapping_mul(step)) as i64))
        .map(|t| if t == Token::MIN { Token(t.0 + 1) } else { t })
        .filter(|t| !taken.contains(t))
        .collect();
    tokens.sort();
    tokens
}

/// The joining node's datacenter as the search sees it: its sorted tokens with their owners
/// (node 0 is the joining node) and each node's rack.
struct Layout {
    tokens: Vec<(Token, usize)>,
    racks: Vec<usize>,
    rack_count: usize,
}

impl Layout {
    fn of(ring: &TokenMetadata, node: &Endpoint) -> Layout {
        let mut ids = BTreeMap::from([(node.addr, 0)]);
        let mut rack_ids = BTreeMap::from([(node.rack.clone(), 0)]);
        let mut racks = vec![0];
        for e in ring.endpoints() {
            if e.datacenter != node.datacenter || e.addr == node.addr {
                continue;
            }
            let next_rack = rack_ids.len();
            let rack = *rack_ids.entry(e.rack.clone()).or_insert(next_rack);
            ids.insert(e.addr, racks.len());
            racks.push(rack);
        }
        let tokens = ring
            .tokens()
            .into_iter()
            .filter_map(|t| {
                let owner = ring.primary_range_owner(t)?;
                let id = *ids.get(&owner.addr)?;
                (id != 0).then_some((t, id))
            })
            .collect();
        Layout {
            tokens,
            racks,
            rack_count: rack_ids.len(),
        }
    }

    /// A split point of one of the largest ranges that, given to the joining node along with
    /// `held`, leaves the spread of ownership smallest.
    fn best_split(&self, held: &[Token], rf: usize) -> Option<Token> {
        let base = self.with(held);
        let mut best: Option<(f64, Token)> = None;
        for token in candidates(&base) {
            let trial = insert(&base, token);
            let score = self.spread(&trial, rf) + self.spread(&trial, 1) * TIE_BREAK;
            if best.is_none_or(|(s, _)| score < s) {
                best = Some((score, token));
            }
        }
        best.map(|(_, token)| token)
    }

    /// The datacenter's tokens with the joining node holding `held`.
    fn with(&self, held: &[Token]) -> Vec<(Token, usize)> {
        held.iter()
            .fold(self.tokens.clone(), |all, &t| insert(&all, t))
    }

    /// The sum of squared deviations of the nodes' effective ownership from their mean.
    fn spread(&self, tokens: &[(Token, usize)], rf: usize) -> f64 {
        let owned = self.ownership(tokens, rf);
        let mean = owned.iter().sum::<f64>() / owned.len() as f64;
        owned.iter().map(|f| (f - mean).powi(2)).sum()
    }

    /// Each node's effective ownership: every range counts for each of its replicas.
    fn ownership(&self, tokens: &[(Token, usize)], rf: usize) -> Vec<f64> {
        let mut owned = vec![0.0; self.racks.len()];
        let wanted = rf.min(self.owners(tokens));
        for (i, &(right, _)) in tokens.iter().enumerate() {
            let left = tokens[(i + tokens.len() - 1) % tokens.len()].0;
            let fraction = range_fraction(left, right);
            for node in self.replicas(tokens, i, rf, wanted) {
                owned[node] += fraction;
            }
        }
        owned
    }

    /// NetworkTopologyStrategy's placement in one datacenter (see `strategy.rs`), walking
    /// from token `start` until `wanted` replicas: each rack's first node, repeats only while
    /// racks run short.
    fn replicas(
        &self,
        tokens: &[(Token, usize)],
        start: usize,
        rf: usize,
        wanted: usize,
    ) -> Vec<usize> {
        let mut repeats = rf as isize - self.rack_count as isize;
        let mut chosen: Vec<usize> = Vec::with_capacity(wanted);
        let mut racks_used = vec![false; self.rack_count];
        for step in 0..tokens.len() {
            if chosen.len() == wanted {
                break;
            }
            let node = tokens[(start + step) % tokens.len()].1;
            if chosen.contains(&node) {
                continue;
            }
            let rack = self.racks[node];
            if racks_used[rack] {
                if repeats <= 0 {
                    continue;
                }
                repeats -= 1;
            }
            racks_used[rack] = true;
            chosen.push(node);
        }
        chosen
    }

    /// How many nodes hold tokens (the joining node only once it has one).
    fn owners(&self, tokens: &[(Token, usize)]) -> usize {
        let joined = tokens.iter().any(|&(_, node)| node == 0);
        self.racks.len() - usize::from(!joined)
    }
}

/// `tokens` with `token` owned by the joining node, in order.
fn insert(tokens: &[(Token, usize)], token: Token) -> Vec<(Token, usize)> {
    let at = tokens.partition_point(|&(t, _)| t < token);
    let mut all = Vec::with_capacity(tokens.len() + 1);
    all.extend_from_slice(&tokens[..at]);
    all.push((token, 0));
    all.extend_from_slice(&tokens[at..]);
    all
}

/// Split points of the largest ranges.
fn candidates(tokens: &[(Token, usize)]) -> Vec<Token> {
    let mut ranges: Vec<(Token, Token)> = (0..tokens.len())
        .map(|i| (tokens[(i + tokens.len() - 1) % tokens.len()].0, tokens[i].0))
        .collect();
    ranges.sort_by(|a, b| range_fraction(b.0, b.1).total_cmp(&range_fraction(a.0, a.1)));
    ranges.truncate(CANDIDATE_RANGES);
    ranges
        .into_iter()
        .flat_map(|(left, right)| SPLITS.iter().filter_map(move |&at| split(left, right, at)))
        .filter(|t| tokens.binary_search_by(|&(x, _)| x.cmp(t)).is_err())
        .collect()
}

/// The token at fraction `at` along (left, right], if the range has room for a new token.
fn split(left: Token, right: Token, at: f64) -> Option<Token> {
    let width = (right.0 as u64).wrapping_sub(left.0 as u64);
    let width = if width == 0 { u64::MAX } else { width };
    let offset = (width as f64 * at) as u64;
    if offset == 0 || offset >= width {
        return None;
    }
    let token = Token((left.0 as u64).wrapping_add(offset) as i64);
    (token != Token::MIN).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token_metadata::tests::node;
    use crate::{effective_ownership, random_tokens, ReplicationStrategy};

    /// Adds `count` nodes one by one (racks round-robin), each allocating its tokens.
    fn grow(
        count: u8,
        racks: u8,
        allocate: impl Fn(&TokenMetadata, &Endpoint) -> Vec<Token>,
    ) -> TokenMetadata {
        let mut ring = TokenMetadata::new();
        for i in 1..=count {
            let endpoint = node(i, "dc1", &format!("r{}", i % racks));
            let tokens = allocate(&ring, &endpoint);
            assert_eq!(tokens.len(), 16);
            ring.add_endpoint(endpoint, tokens);
        }
        ring
    }

    fn max_over_min(ring: &TokenMetadata, rf: usize) -> f64 {
        let strategy = ReplicationStrategy::NetworkTopology {
            dc_rf: BTreeMap::from([("dc1".to_string(), rf)]),
        };
        let owned = effective_ownership(&strategy, ring);
        let max = owned.values().copied().fold(0.0, f64::max);
        let min = owned.values().copied().fold(f64::MAX, f64::min);
        max / min
    }

    #[test]
    fn the_first_node_takes_evenly_spaced_distinct_tokens() {
        let tokens = allocate_tokens(&TokenMetadata::new(), &node(1, "dc1", "r1"), 16, 3, 99);
        assert_eq!(tokens.len(), 16);
        let ring = {
            let mut r = TokenMetadata::new();
            r.add_endpoint(node(1, "dc1", "r1"), tokens.clone());
            r
        };
        for (left, right) in ring.ranges() {
            assert!((range_fraction(left, right) - 1.0 / 16.0).abs() < 1e-6);
        }
    }

    #[test]
    fn allocated_rings_are_far_more_even_than_random_ones() {
        let allocated = grow(5, 1, |ring, e| allocate_tokens(ring, e, 16, 3, 7));
        let random = grow(5, 1, |_, e| random_tokens(16, e.host_id[0] as u64 * 7919));
        let balanced = max_over_min(&allocated, 3);
        assert!(balanced < 1.15, "allocated max/min ownership {balanced}");
        assert!(balanced < max_over_min(&random, 3));
    }

    #[test]
    fn tokens_never_collide_with_the_ring() {
        let ring = grow(4, 1, |ring, e| allocate_tokens(ring, e, 16, 3, 1));
        assert_eq!(ring.tokens().len(), 64);
        assert!(!ring.tokens().contains(&Token::MIN));
    }

    #[test]
    fn racks_are_balanced_under_network_topology() {
        let ring = grow(6, 3, |ring, e| allocate_tokens(ring, e, 16, 3, 3));
        let balanced = max_over_min(&ring, 3);
        assert!(balanced < 1.15, "allocated max/min ownership {balanced}");
    }
}
