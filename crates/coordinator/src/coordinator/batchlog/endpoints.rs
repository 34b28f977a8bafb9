//! Which nodes hold a logged batch's batchlog: Cassandra's `ReplicaPlans.forBatchlogWrite` with
//! its default `random_remote` strategy. Up to two live nodes of this datacenter other than this
//! one, from two racks other than this node's when there are enough of them; a datacenter of at
//! most two nodes uses all of them (this one included, live or not, as Cassandra does).
use std::collections::BTreeMap;
use std::net::IpAddr;

use ring::Endpoint;

/// How many nodes hold a batchlog (Cassandra's REQUIRED_BATCHLOG_REPLICA_COUNT).
pub(crate) const REPLICAS: usize = 2;

/// Picks a random index below its argument (never called with 0).
pub(crate) type Picker<'a> = &'a mut dyn FnMut(usize) -> usize;

/// The batchlog holders among `datacenter` (every node of this node's datacenter, `local`
/// included); empty when no other node is alive (the caller decides what that means).
pub(crate) fn choose(
    local: &Endpoint,
    datacenter: &[Endpoint],
    is_alive: impl Fn(IpAddr) -> bool,
    pick: Picker,
) -> Vec<Endpoint> {
    if datacenter.len() <= REPLICAS {
        return datacenter.to_vec();
    }
    let mut by_rack: BTreeMap<&str, Vec<&Endpoint>> = BTreeMap::new();
    for node in datacenter {
        if node.addr != local.addr && is_alive(node.addr) {
            by_rack.entry(node.rack.as_ref()).or_default().push(node);
        }
    }
    let candidates: usize = by_rack.values().map(Vec::len).sum();
    if candidates <= REPLICAS {
        return by_rack.into_values().flatten().cloned().collect();
    }
    let in_local_rack = by_rack.get(local.rack.as_str()).map_or(0, Vec::len);
    if candidates - in_local_rack >= REPLICAS {
        by_rack.remove(local.rack.as_str());
    }
    if by_rack.len() == 1 {
        let mut rack: Vec<&Endpoint> = by_rack.into_values().flatten().collect();
        shuffle(&mut rack, pick);
        return rack.into_iter().take(REPLICAS).cloned().collect();
    }
    let mut racks: Vec<Vec<&Endpoint>> = by_rack.into_values().collect();
    if racks.len() > REPLICAS {
        shuffle(&mut racks, pick);
    }
    racks
        .iter()
        .take(REPLICAS)
        .map(|members| members[pick(members.len())].clone())
        .collect()
}

/// Fisher-Yates with `pick` as the source of randomness.
fn shuffle<T>(items: &mut [T], pick: Picker) {
    for i in (1..items.len()).rev() {
        items.swap(i, pick(i + 1));
    }
}

/// A random index below `n` (`n` > 0).
pub(crate) fn random_index(n: usize) -> usize {
    (uuid::Uuid::new_v4().as_u128() % n.max(1) as u128) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(last: u8, rack: &str) -> Endpoint {
        Endpoint {
            addr: IpAddr::from([127, 0, 0, last]),
            datacenter: "dc1".into(),
            rack: rack.into(),
            host_id: [last; 16],
        }
    }

    fn lasts(chosen: &[Endpoint]) -> Vec<u8> {
        let mut lasts: Vec<u8> = chosen
            .iter()
            .map(|e| match e.addr {
                IpAddr::V4(v4) => v4.octets()[3],
                IpAddr::V6(_) => 0,
            })
            .collect();
        lasts.sort();
        lasts
    }

    fn choose_all_alive(local: &Endpoint, dc: &[Endpoint], seed: usize) -> Vec<u8> {
        let mut next = seed;
        let mut pick = |n: usize| {
            next = next.wrapping_mul(31).wrapping_add(7);
            next % n
        };
        lasts(&choose(local, dc, |_| true, &mut pick))
    }

    #[test]
    fn small_datacenters_use_every_node_this_one_included() {
        let one = [node(1, "r1")];
        assert_eq!(choose_all_alive(&one[0], &one, 0), vec![1]);
        let two = [node(1, "r1"), node(2, "r1")];
        let chosen = choose(&two[0], &two, |_| false, &mut |_| 0);
        assert_eq!(lasts(&chosen), vec![1, 2]);
    }

    #[test]
    fn other_live_nodes_only_and_none_when_all_others_are_down() {
        let dc = [node(1, "r1"), node(2, "r1"), node(3, "r1"), node(4, "r1")];
        let only_3 = |addr: IpAddr| addr == IpAddr::from([127, 0, 0, 3]);
        assert_eq!(lasts(&choose(&dc[0], &dc, only_3, &mut |_| 0)), vec![3]);
        assert!(choose(&dc[0], &dc, |_| false, &mut |_| 0).is_empty());
        let local_alive = |addr: IpAddr| addr == IpAddr::from([127, 0, 0, 1]);
        assert!(choose(&dc[0], &dc, local_alive, &mut |_| 0).is_empty());
    }

    #[test]
    fn two_other_racks_are_preferred_to_this_nodes_rack() {
        let dc = [
            node(1, "r1"),
            node(2, "r1"),
            node(3, "r1"),
            node(4, "r2"),
            node(5, "r3"),
        ];
        for seed in 0..20 {
            assert_eq!(
                choose_all_alive(&dc[0], &dc, seed),
                vec![4, 5],
                "seed {seed}"
            );
        }
    }

    #[test]
    fn one_other_rack_with_two_nodes_gives_both_and_else_racks_differ() {
        let dc = [node(1, "r1"), node(2, "r1"), node(3, "r2"), node(4, "r2")];
        assert_eq!(choose_all_alive(&dc[0], &dc, 3), vec![3, 4]);
        // Only one node in another rack: one from this rack, one from the other.
        let dc = [node(1, "r1"), node(2, "r1"), node(3, "r1"), node(4, "r2")];
        for seed in 0..20 {
            let chosen = choose_all_alive(&dc[0], &dc, seed);
            assert_eq!(chosen.len(), 2);
            assert!(chosen.contains(&4), "seed {seed}: {chosen:?}");
        }
    }

    #[test]
    fn many_racks_give_two_nodes_of_two_different_racks() {
        let dc: Vec<Endpoint> = (1..=9).map(|i| node(i, &format!("r{}", i % 4))).collect();
        for seed in 0usize..50 {
            let mut next = seed;
            let mut pick = |n: usize| {
                next = next.wrapping_mul(17).wrapping_add(5);
                next % n
            };
            let chosen = choose(&dc[0], &dc, |_| true, &mut pick);
            assert_eq!(chosen.len(), 2);
            assert_ne!(chosen[0].rack, chosen[1].rack);
            assert!(chosen
                .iter()
                .all(|e| e.addr != dc[0].addr && e.rack != dc[0].rack));
        }
    }
}
