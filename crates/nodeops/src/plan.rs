//! Planning a topology change: which ranges a node gains or loses, from or to whom, and which
//! replication factors a leaving node must leave enough nodes for. Pure functions of the
//! rings (the current one, whose replicas serve reads, and the future one, once the change is
//! done) and a keyspace's replication.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use metadata::ReplicationCheck;
use ring::{ReplicationStrategy, Token, TokenMetadata};

use crate::mover::Transfer;
use mutation::TokenRange;

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

/// Whether gossip sees a node up.
pub type Alive<'a> = &'a dyn Fn(IpAddr) -> bool;

/// What `node` must fetch to replicate in `future` what it does not in `ring`: each range from
/// the replica that gives it up (Cassandra's strict consistent range movement: refused when
/// that replica is down), or, when none does or `strict` is off (a replacement, whose range
/// giver is the dead node), from a live current replica. A replacement skips, with a warning,
/// a range whose only replica was the dead node (RF 1), as Cassandra does.
pub fn gained_ranges(
    keyspace: &str,
    rings: Rings<'_>,
    node: IpAddr,
    alive: Alive<'_>,
    strict: bool,
) -> Result<Vec<Transfer>, String> {
    let mut by_pair = Pairs::new();
    for (start, end, now, then) in rings.pieces() {
        if now.contains(&node) || !then.contains(&node) {
            continue;
        }
        let giver = now.iter().copied().find(|a| !then.contains(a));
        let source = match giver {
            Some(giver) if alive(giver) => giver,
            Some(giver) if strict => {
                return Err(format!(
                    "A node required to move the data consistently is down (/{giver}): \
                     start it again before this node joins"
                ))
            }
            _ => match live_source(&now, &[node], alive, keyspace, (start, end)) {
                Ok(source) => source,
                // As Cassandra: a replacement goes on without a range whose one replica died.
                Err(why) if !strict && now.len() == 1 => {
                    tracing::warn!("{why} with RF=1. Keyspace might be missing data.");
                    continue;
                }
                Err(why) => return Err(why),
            },
        };
        add(&mut by_pair, source, node, start, end);
    }
    Ok(transfers(keyspace, by_pair))
}

/// Whether `node` replicates in `future` some range it does not in the current ring.
pub fn gains_ranges(rings: Rings<'_>, node: IpAddr) -> bool {
    rings
        .pieces()
        .any(|(_, _, now, then)| then.contains(&node) && !now.contains(&node))
}

/// What `node` must send before `future` takes effect: each range it replicates now, to each
/// replica that `future` adds to it.
pub fn lost_ranges(keyspace: &str, rings: Rings<'_>, node: IpAddr) -> Vec<Transfer> {
    let mut by_pair = Pairs::new();
    for (start, end, now, then) in rings.pieces() {
        if !now.contains(&node) {
            continue;
        }
        for taker in then.iter().filter(|a| !now.contains(a)) {
            add(&mut by_pair, node, *taker, start, end);
        }
    }
    transfers(keyspace, by_pair)
}

/// What the new replicas of `removed`'s ranges must fetch, each range from a live replica
/// that keeps it (Cassandra's removenode restoring the replica count); a range whose only
/// replica was the removed node (RF 1) is lost, with a warning.
pub fn restored_ranges(
    keyspace: &str,
    rings: Rings<'_>,
    removed: IpAddr,
    alive: Alive<'_>,
) -> Result<Vec<Transfer>, String> {
    let mut by_pair = Pairs::new();
    for (start, end, now, then) in rings.pieces() {
        if !now.contains(&removed) {
            continue;
        }
        if now.len() == 1 {
            tracing::warn!(
                "range ({},{}] of keyspace {keyspace} had its only replica (RF=1) on the \
                 removed node: it is lost",
                start.0,
                end.0
            );
            continue;
        }
        for taker in then.iter().filter(|a| !now.contains(a)) {
            let source = live_source(&now, &[removed, *taker], alive, keyspace, (start, end))?;
            add(&mut by_pair, source, *taker, start, end);
        }
    }
    Ok(transfers(keyspace, by_pair))
}

/// The first live replica of `replicas` outside `excluded`, or Cassandra's refusal.
fn live_source(
    replicas: &[IpAddr],
    excluded: &[IpAddr],
    alive: Alive<'_>,
    keyspace: &str,
    (start, end): (Token, Token),
) -> Result<IpAddr, String> {
    replicas
        .iter()
        .copied()
        .find(|a| !excluded.contains(a) && alive(*a))
        .ok_or_else(|| {
            format!(
                "unable to find sufficient sources for streaming range ({},{}] in keyspace {keyspace}",
                start.0, end.0
            )
        })
}

/// Ranges by (source, target).
type Pairs = BTreeMap<(IpAddr, IpAddr), Vec<TokenRange>>;

fn add(by_pair: &mut Pairs, source: IpAddr, target: IpAddr, start: Token, end: Token) {
    by_pair
        .entry((source, target))
        .or_default()
        .extend(unwrapped(start.0, end.0));
}

fn transfers(keyspace: &str, by_pair: Pairs) -> Vec<Transfer> {
    by_pair
        .into_iter()
        .map(|((source, target), ranges)| Transfer {
            keyspace: keyspace.to_string(),
            source,
            target,
            ranges,
        })
        .collect()
}

/// A keyspace's replication over the current ring and the future one.
#[derive(Clone, Copy)]
pub struct Rings<'a> {
    pub strategy: &'a ReplicationStrategy,
    pub now: &'a TokenMetadata,
    pub future: &'a TokenMetadata,
}

impl<'a> Rings<'a> {
    /// Each piece of the ring cut at both rings' tokens, with its replicas now and then.
    fn pieces(self) -> impl Iterator<Item = (Token, Token, Vec<IpAddr>, Vec<IpAddr>)> + 'a {
        pieces(self.now, self.future)
            .into_iter()
            .map(move |(start, end)| {
                let now = addrs(self.strategy, self.now, end);
                let then = addrs(self.strategy, self.future, end);
                (start, end, now, then)
            })
    }
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

    fn rings<'a>(
        strategy: &'a ReplicationStrategy,
        now: &'a TokenMetadata,
        future: &'a TokenMetadata,
    ) -> Rings<'a> {
        Rings {
            strategy,
            now,
            future,
        }
    }

    fn transfer(source: u8, target: u8, ranges: Vec<TokenRange>) -> Transfer {
        Transfer {
            keyspace: "ks".into(),
            source: ip(source),
            target: ip(target),
            ranges,
        }
    }

    fn all_up(_: IpAddr) -> bool {
        true
    }

    #[test]
    fn a_joining_node_fetches_each_range_from_the_node_giving_it_up() {
        let now = ring(&[(1, -100), (2, 0), (3, 100)]);
        let joining = ring(&[(1, -100), (2, 0), (4, 50), (3, 100)]);
        let r = rings(&RF1, &now, &joining);
        let fetch = gained_ranges("ks", r, ip(4), &all_up, true).unwrap();
        assert_eq!(fetch, vec![transfer(3, 4, vec![(0, 50)])]);
        // node 3 sends the same range to node 4; the others send nothing
        assert_eq!(lost_ranges("ks", r, ip(3)), fetch);
        for last in [1, 2] {
            assert!(lost_ranges("ks", r, ip(last)).is_empty());
            assert!(gained_ranges("ks", r, ip(last), &all_up, true)
                .unwrap()
                .is_empty());
        }
        // the node giving the range up is down: refused, unless not strict (another replica)
        let three_down = |a: IpAddr| a != ip(3);
        let refused = gained_ranges("ks", r, ip(4), &three_down, true).unwrap_err();
        assert!(refused.contains("/127.0.0.3"), "{refused}");
        let rf2 = ReplicationStrategy::Simple { rf: 2 };
        let r2 = rings(&rf2, &now, &joining);
        // at RF 2, (0, 50] is on 3 and 1 now, on 4 and 3 then: 1 gives it up
        let one_down = |a: IpAddr| a != ip(1);
        let fetch = gained_ranges("ks", r2, ip(4), &one_down, false).unwrap();
        assert!(fetch.iter().all(|t| t.source != ip(1)), "{fetch:?}");
        // replacing node 3 at RF 1: its range had no other replica and is skipped
        let replaced = ring(&[(1, -100), (2, 0), (4, 100)]);
        let r = rings(&RF1, &now, &replaced);
        assert!(gained_ranges("ks", r, ip(4), &three_down, false)
            .unwrap()
            .is_empty());
        assert!(gained_ranges("ks", r, ip(4), &three_down, true).is_err());
    }

    #[test]
    fn a_leaving_node_sends_its_ranges_to_the_nodes_that_take_them() {
        let now = ring(&[(1, -100), (2, 0), (3, 100)]);
        let after = ring(&[(1, -100), (2, 0)]);
        let rf2 = ReplicationStrategy::Simple { rf: 2 };
        let r = rings(&rf2, &now, &after);
        // with RF 2, (0, 100] was on 3 and 1, (-100, 0] on 2 and 3 and (100, -100] on 1 and 2:
        // (0, 100] now goes to 1 and 2 (2 gains it), (-100, 0] to 2 and 1 (1 gains it)
        assert_eq!(
            lost_ranges("ks", r, ip(3)),
            vec![
                transfer(3, 1, vec![(-100, 0)]),
                transfer(3, 2, vec![(0, 100)])
            ]
        );
        assert_eq!(
            gained_ranges("ks", r, ip(1), &all_up, true).unwrap().len(),
            1
        );
    }

    #[test]
    fn a_removed_nodes_new_replicas_fetch_from_a_live_survivor() {
        let now = ring(&[(1, -100), (2, 0), (3, 100)]);
        let after = ring(&[(1, -100), (2, 0)]);
        let rf2 = ReplicationStrategy::Simple { rf: 2 };
        let r = rings(&rf2, &now, &after);
        let three_dead = |a: IpAddr| a != ip(3);
        // (0, 100] survives on 1, which 2 fetches it from; (-100, 0] on 2, for 1
        assert_eq!(
            restored_ranges("ks", r, ip(3), &three_dead).unwrap(),
            vec![
                transfer(1, 2, vec![(0, 100)]),
                transfer(2, 1, vec![(-100, 0)])
            ]
        );
        // with the only survivor of a range down too, there is no source
        let only_one = |a: IpAddr| a == ip(1);
        let refused = restored_ranges("ks", r, ip(3), &only_one).unwrap_err();
        assert!(
            refused.contains("unable to find sufficient sources"),
            "{refused}"
        );
        // at RF 1 nothing survives to fetch from
        assert!(
            restored_ranges("ks", rings(&RF1, &now, &after), ip(3), &three_dead)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn whole_and_wrapping_ranges_are_split_at_the_end_of_the_ring() {
        assert_eq!(unwrapped(5, 5), vec![(5, i64::MIN), (i64::MIN, 5)]);
        assert_eq!(unwrapped(5, i64::MIN), vec![(5, i64::MIN)]);
        assert_eq!(unwrapped(-5, 5), vec![(-5, 5)]);
    }
}
