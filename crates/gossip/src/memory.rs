//! An in-process network for gossip tests and simulations: many nodes in one runtime (paused
//! tokio time makes them deterministic in their timing), with links that can be cut, nodes that
//! can be isolated or crashed, and messages dropped or delayed by one seeded generator.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;

use crate::{GossipConfig, GossipError, Gossiper, Wire, WireError};

/// The network shared by every node of a simulated cluster.
#[derive(Clone)]
pub struct MemoryNetwork {
    net: Arc<Mutex<Net>>,
}

struct Net {
    nodes: HashMap<SocketAddr, Weak<Gossiper>>,
    /// Bumped on every attach and crash: wires of an older incarnation are dead processes.
    incarnations: HashMap<SocketAddr, u64>,
    cut: HashSet<(SocketAddr, SocketAddr)>,
    isolated: HashSet<SocketAddr>,
    loss: f64,
    delay: (Duration, Duration),
    rng: SimRng,
    delivered: u64,
    dropped: u64,
}

/// Messages delivered and dropped so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    pub delivered: u64,
    pub dropped: u64,
}

impl MemoryNetwork {
    pub fn new(seed: u64) -> Self {
        MemoryNetwork {
            net: Arc::new(Mutex::new(Net {
                nodes: HashMap::new(),
                incarnations: HashMap::new(),
                cut: HashSet::new(),
                isolated: HashSet::new(),
                loss: 0.0,
                delay: (Duration::ZERO, Duration::ZERO),
                rng: SimRng::new(seed),
                delivered: 0,
                dropped: 0,
            })),
        }
    }

    /// Starts a node on this network at `config.listen` (a new incarnation of that address).
    pub async fn join(&self, config: GossipConfig) -> Result<Arc<Gossiper>, GossipError> {
        let addr = config.listen;
        let incarnation = self.net.lock().next_incarnation(addr);
        let wire = Arc::new(MemoryWire {
            local: addr,
            incarnation,
            net: self.net.clone(),
        });
        let gossiper = Gossiper::start(config, wire).await?;
        self.net
            .lock()
            .nodes
            .insert(addr, Arc::downgrade(&gossiper));
        Ok(gossiper)
    }

    /// The node at `addr` dies: nothing more leaves or reaches it. Drop its [`Gossiper`] too.
    pub fn crash(&self, addr: SocketAddr) {
        let mut net = self.net.lock();
        net.nodes.remove(&addr);
        net.next_incarnation(addr);
    }

    /// Cuts every link between the two sides, both ways.
    pub fn partition(&self, side_a: &[SocketAddr], side_b: &[SocketAddr]) {
        let mut net = self.net.lock();
        for a in side_a {
            for b in side_b {
                net.cut.insert((*a, *b));
                net.cut.insert((*b, *a));
            }
        }
    }

    /// No message leaves or reaches `addr` until [`MemoryNetwork::heal`] (a paused process).
    pub fn isolate(&self, addr: SocketAddr) {
        self.net.lock().isolated.insert(addr);
    }

    /// Restores every cut link and isolated node.
    pub fn heal(&self) {
        let mut net = self.net.lock();
        net.cut.clear();
        net.isolated.clear();
    }

    /// Each message is lost with this probability.
    pub fn set_loss(&self, rate: f64) {
        self.net.lock().loss = rate;
    }

    /// Each message takes a uniformly drawn time in `min..=max` to arrive.
    pub fn set_delay(&self, min: Duration, max: Duration) {
        self.net.lock().delay = (min, max.max(min));
    }

    pub fn traffic(&self) -> Traffic {
        let net = self.net.lock();
        Traffic {
            delivered: net.delivered,
            dropped: net.dropped,
        }
    }
}

impl Net {
    fn next_incarnation(&mut self, addr: SocketAddr) -> u64 {
        let incarnation = self.incarnations.entry(addr).or_default();
        *incarnation += 1;
        *incarnation
    }

    fn is_current(&self, addr: SocketAddr, incarnation: u64) -> bool {
        self.incarnations.get(&addr) == Some(&incarnation)
    }

    fn passes(&self, from: SocketAddr, to: SocketAddr) -> bool {
        !self.isolated.contains(&from)
            && !self.isolated.contains(&to)
            && !self.cut.contains(&(from, to))
    }

    /// Decides a message's fate at send time: `None` if it is lost, else its delay.
    fn route(&mut self, from: SocketAddr, to: SocketAddr) -> Option<Duration> {
        let lost = self.loss > 0.0 && self.rng.chance(self.loss);
        if lost || !self.passes(from, to) {
            self.dropped += 1;
            return None;
        }
        let (min, max) = self.delay;
        let spread = (max - min).as_nanos() as u64;
        Some(min + Duration::from_nanos(self.rng.below(spread + 1)))
    }

    /// The receiving node if the message may still arrive (links are checked again on arrival).
    fn receiver(&mut self, from: SocketAddr, to: SocketAddr) -> Option<Arc<Gossiper>> {
        let gossiper = self
            .nodes
            .get(&to)
            .filter(|_| self.passes(from, to))
            .and_then(Weak::upgrade);
        match gossiper {
            Some(_) => self.delivered += 1,
            None => self.dropped += 1,
        }
        gossiper
    }
}

struct MemoryWire {
    local: SocketAddr,
    incarnation: u64,
    net: Arc<Mutex<Net>>,
}

impl Wire for MemoryWire {
    fn send(&self, to: SocketAddr, payload: Bytes) -> Result<(), WireError> {
        let delay = {
            let mut net = self.net.lock();
            if !net.is_current(self.local, self.incarnation) {
                return Err(WireError::Shutdown);
            }
            net.route(self.local, to)
        };
        let Some(delay) = delay else {
            return Ok(());
        };
        let net = self.net.clone();
        let from = self.local;
        let arrive = move || {
            let receiver = net.lock().receiver(from, to);
            if let Some(gossiper) = receiver {
                gossiper.receive(from, payload);
            }
        };
        if delay.is_zero() {
            arrive();
        } else {
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                arrive();
            });
        }
        Ok(())
    }
}

/// A small seeded generator (SplitMix64) for reproducible simulations.
#[derive(Clone, Debug)]
pub struct SimRng(u64);

impl SimRng {
    pub fn new(seed: u64) -> Self {
        SimRng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (0 when `bound` is 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 {
            0
        } else {
            self.next_u64() % bound
        }
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_reproducible_and_spread() {
        let mut a = SimRng::new(7);
        let mut b = SimRng::new(7);
        let draws: Vec<u64> = (0..100).map(|_| a.below(10)).collect();
        assert_eq!(draws, (0..100).map(|_| b.below(10)).collect::<Vec<_>>());
        assert!((0..10).all(|digit| draws.contains(&digit)));
        let hits = (0..10_000).filter(|_| a.chance(0.25)).count();
        assert!((2_200..2_800).contains(&hits), "{hits}");
    }

    #[test]
    fn cut_links_and_isolated_nodes_drop_messages_until_healed() {
        let network = MemoryNetwork::new(1);
        let (a, b, c) = (
            SocketAddr::from(([127, 0, 9, 1], 7000)),
            SocketAddr::from(([127, 0, 9, 2], 7000)),
            SocketAddr::from(([127, 0, 9, 3], 7000)),
        );
        network.partition(&[a], &[b]);
        network.isolate(c);
        let mut net = network.net.lock();
        assert!(net.route(a, b).is_none() && net.route(b, a).is_none());
        assert!(net.route(a, c).is_none() && net.route(c, b).is_none());
        drop(net);
        network.heal();
        assert_eq!(network.net.lock().route(a, b), Some(Duration::ZERO));
        assert_eq!(network.traffic().dropped, 4);
    }
}
