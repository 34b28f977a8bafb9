//! Whom each gossip round goes to, when a simulation's seed fixes it.
//!
//! chitchat 0.11 picks a round's partners itself (up to 3 live peers, at times a dead one and a
//! seed) with a generator seeded from the OS, out of `HashSet`s whose order differs in every
//! process, and offers no way to choose them. With [`GossipConfig::partner_seed`] set, our
//! socket takes that choice over: the SYNs chitchat sends at one instant (one round, or one
//! shutdown announcement) leave as one SYN to partners drawn by chitchat's own rules, from its
//! own live, dead and seed sets in address order, with a generator seeded by the node. Without
//! a seed (production) chitchat's choice is sent unchanged.
//!
//! [`GossipConfig::partner_seed`]: crate::GossipConfig::partner_seed
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use chitchat::Chitchat;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// Live peers one round gossips with, as chitchat's `GOSSIP_COUNT`.
const GOSSIP_COUNT: usize = 3;

/// The running chitchat instance, set once it is spawned (its socket is made before).
pub(crate) type ChitchatSlot = Arc<OnceLock<Arc<Mutex<Chitchat>>>>;

/// What chitchat knows of the other nodes, by address.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Peers {
    pub(crate) known: BTreeSet<SocketAddr>,
    pub(crate) live: BTreeSet<SocketAddr>,
    pub(crate) dead: BTreeSet<SocketAddr>,
    pub(crate) seeds: BTreeSet<SocketAddr>,
}

impl Peers {
    fn of(chitchat: &Chitchat, local: SocketAddr) -> Peers {
        let others = |addrs: &mut dyn Iterator<Item = SocketAddr>| -> BTreeSet<SocketAddr> {
            addrs.filter(|addr| *addr != local).collect()
        };
        let address = |id: &chitchat::ChitchatId| id.gossip_advertise_addr;
        Peers {
            known: others(&mut chitchat.node_states().keys().map(address)),
            live: others(&mut chitchat.live_nodes().map(address)),
            dead: others(&mut chitchat.dead_nodes().map(address)),
            seeds: others(&mut chitchat.seed_nodes().into_iter()),
        }
    }
}

/// The seeded choice of one node's gossip partners.
pub(crate) struct Partners {
    rng: u64,
    chitchat: ChitchatSlot,
    local: SocketAddr,
    /// When the last SYN was routed: later SYNs of that instant belong to the same round.
    round: Option<Instant>,
}

impl Partners {
    pub(crate) fn new(seed: u64, chitchat: ChitchatSlot, local: SocketAddr) -> Partners {
        Partners {
            rng: seed,
            chitchat,
            local,
            round: None,
        }
    }

    /// Where a SYN chitchat addressed to `to` goes: the round's partners for its first SYN,
    /// nowhere for the others of that instant; `to` before chitchat is known.
    pub(crate) async fn route(&mut self, to: SocketAddr) -> Vec<SocketAddr> {
        let Some(chitchat) = self.chitchat.get().cloned() else {
            return vec![to];
        };
        let now = Instant::now();
        if self.round.replace(now) == Some(now) {
            return Vec::new();
        }
        let peers = Peers::of(&*chitchat.lock().await, self.local);
        self.choose(&peers)
    }

    /// chitchat's rules: [`GOSSIP_COUNT`] live peers (any known ones while none is live), a
    /// dead peer with probability dead / (live + 1), and a seed when none was chosen or fewer
    /// peers are live than there are seeds, with probability seeds / (live + dead) (always
    /// while none is live).
    pub(crate) fn choose(&mut self, peers: &Peers) -> Vec<SocketAddr> {
        let pool = match peers.live.is_empty() {
            true => &peers.known,
            false => &peers.live,
        };
        let mut chosen = self.sample(pool, GOSSIP_COUNT);
        let with_seed = chosen.iter().any(|addr| peers.seeds.contains(addr));
        let (live, dead, seeds) = (peers.live.len(), peers.dead.len(), peers.seeds.len());
        if dead > 0 && self.below(live + 1) < dead {
            chosen.extend(self.sample(&peers.dead, 1));
        }
        let want_seed = !with_seed || live < seeds;
        if want_seed && seeds > 0 && (live == 0 || self.below(live + dead) < seeds) {
            chosen.extend(self.sample(&peers.seeds, 1));
        }
        chosen
    }

    /// `count` distinct members of `pool` (all of them when it has no more), in address order.
    fn sample(&mut self, pool: &BTreeSet<SocketAddr>, count: usize) -> Vec<SocketAddr> {
        let mut left: Vec<SocketAddr> = pool.iter().copied().collect();
        let mut chosen = Vec::new();
        while chosen.len() < count && !left.is_empty() {
            let at = self.below(left.len());
            chosen.push(left.remove(at));
        }
        chosen.sort();
        chosen
    }

    /// A number below `n` (> 0), from the seeded generator (splitmix64).
    fn below(&mut self, n: usize) -> usize {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(last: u8) -> SocketAddr {
        SocketAddr::from(([127, 0, 9, last], 7000))
    }

    fn set(lasts: &[u8]) -> BTreeSet<SocketAddr> {
        lasts.iter().map(|last| addr(*last)).collect()
    }

    fn partners(seed: u64) -> Partners {
        Partners::new(seed, ChitchatSlot::default(), addr(1))
    }

    fn rounds(seed: u64, peers: &Peers) -> Vec<Vec<SocketAddr>> {
        let mut partners = partners(seed);
        (0..50).map(|_| partners.choose(peers)).collect()
    }

    fn five_live_one_dead() -> Peers {
        Peers {
            known: set(&[2, 3, 4, 5, 6, 7]),
            live: set(&[2, 3, 4, 5, 6]),
            dead: set(&[7]),
            seeds: set(&[2, 3]),
        }
    }

    #[test]
    fn the_same_seed_chooses_the_same_partners_and_another_seed_others() {
        let peers = five_live_one_dead();
        assert_eq!(rounds(5, &peers), rounds(5, &peers));
        assert_ne!(rounds(5, &peers), rounds(6, &peers));
    }

    #[test]
    fn a_round_takes_three_live_peers_and_at_times_the_dead_one() {
        let peers = five_live_one_dead();
        let all = rounds(5, &peers);
        for round in &all {
            // three live peers, then perhaps the dead one, then perhaps a seed
            let first: BTreeSet<SocketAddr> = round[..3].iter().copied().collect();
            assert!(
                first.len() == 3 && first.is_subset(&peers.live),
                "{round:?}"
            );
        }
        let with_dead = all.iter().filter(|round| round.contains(&addr(7))).count();
        // probability 1 / 6 in each of 50 rounds
        assert!((1..25).contains(&with_dead), "{with_dead}");
        let seed_added = |round: &&Vec<SocketAddr>| peers.seeds.contains(&round[round.len() - 1]);
        let no_seed_among_live =
            |round: &&Vec<SocketAddr>| round[..3] == [addr(4), addr(5), addr(6)];
        let lacking = all.iter().filter(no_seed_among_live);
        // probability 2 / 6 for each round whose live peers hold no seed
        assert!(lacking.clone().any(|r| seed_added(&r)), "{all:?}");
        assert!(!lacking.clone().all(|r| seed_added(&r)), "{all:?}");
    }

    #[test]
    fn with_no_live_peer_a_round_tries_every_known_node_and_a_seed() {
        let peers = Peers {
            known: set(&[2, 3]),
            seeds: set(&[2, 4]),
            ..Peers::default()
        };
        for round in rounds(9, &peers) {
            assert_eq!(&round[..2], &[addr(2), addr(3)]);
            assert_eq!(round.len(), 3);
            assert!(peers.seeds.contains(&round[2]), "{round:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_syns_of_one_instant_are_one_round() {
        let gossip = crate::GossipConfig::new("c", uuid::Uuid::from_u128(1), addr(1));
        let config = crate::gossiper::chitchat_config(&gossip, 1);
        let (_, seeds) = tokio::sync::watch::channel(set(&[2, 3]).into_iter().collect());
        let chitchat = Chitchat::with_chitchat_id_and_seeds(config, seeds, Vec::new());
        let slot = ChitchatSlot::default();
        let mut partners = Partners::new(3, slot.clone(), addr(1));
        assert_eq!(
            partners.route(addr(9)).await,
            vec![addr(9)],
            "before chitchat runs"
        );
        assert!(slot.set(Arc::new(Mutex::new(chitchat))).is_ok());
        let first = partners.route(addr(9)).await;
        assert_eq!(first.len(), 1);
        assert!(set(&[2, 3]).contains(&first[0]), "{first:?}");
        assert!(partners.route(addr(9)).await.is_empty());
        tokio::time::advance(std::time::Duration::from_millis(400)).await;
        assert_eq!(partners.route(addr(9)).await.len(), 1);
    }
}
