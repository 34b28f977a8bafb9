//! A simulated cluster for the gossip tests: nodes 127.0.9.i:7000 on one [`MemoryNetwork`], in
//! paused tokio time, with every node's events recorded.
// Each test file uses part of this module.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use gossip::memory::MemoryNetwork;
use gossip::{keys, EndpointView, GossipConfig, Gossiper, HostId, Membership, MembershipEvent};
use parking_lot::Mutex;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

pub const CLUSTER: &str = "Test Cluster";

pub fn addr(node: u8) -> SocketAddr {
    SocketAddr::from(([127, 0, 9, node], 7000))
}

pub fn config(node: u8) -> GossipConfig {
    let mut config = GossipConfig::new(CLUSTER, HostId::from_u128(node as u128), addr(node));
    config.seeds = vec![addr(1)];
    config.initial_state = BTreeMap::from([
        (keys::DC.to_string(), "dc1".to_string()),
        (keys::RACK.to_string(), format!("rack{node}")),
        (keys::RELEASE_VERSION.to_string(), "5.0.4".to_string()),
        (keys::STATUS.to_string(), "NORMAL".to_string()),
    ]);
    config
}

/// Every event a node sent, with the (paused) time it was received.
#[derive(Clone, Default)]
pub struct Recorded(Arc<Mutex<Vec<(Instant, MembershipEvent)>>>);

impl Recorded {
    fn follow(gossiper: &Gossiper) -> Recorded {
        let recorded = Recorded::default();
        let sink = recorded.clone();
        let mut events = gossiper.subscribe();
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(event) => sink.0.lock().push((Instant::now(), event)),
                    Err(RecvError::Lagged(missed)) => panic!("missed {missed} events"),
                    Err(RecvError::Closed) => return,
                }
            }
        });
        recorded
    }

    pub fn all(&self) -> Vec<MembershipEvent> {
        self.0.lock().iter().map(|(_, event)| *event).collect()
    }

    /// The Alive/Dead events about `peer`, in order.
    pub fn liveness_of(&self, peer: SocketAddr) -> Vec<MembershipEvent> {
        self.all()
            .into_iter()
            .filter(|event| {
                matches!(event, MembershipEvent::Alive(a) | MembershipEvent::Dead(a) if *a == peer)
            })
            .collect()
    }

    pub fn count(&self, wanted: MembershipEvent) -> usize {
        self.all().iter().filter(|event| **event == wanted).count()
    }
}

pub struct Cluster {
    pub network: MemoryNetwork,
    pub nodes: BTreeMap<u8, Arc<Gossiper>>,
    pub events: BTreeMap<u8, Recorded>,
}

impl Cluster {
    pub async fn start(size: u8, seed: u64) -> Cluster {
        let mut cluster = Cluster {
            network: MemoryNetwork::new(seed),
            nodes: BTreeMap::new(),
            events: BTreeMap::new(),
        };
        for node in 1..=size {
            cluster.join(config(node)).await;
        }
        cluster
    }

    pub async fn join(&mut self, config: GossipConfig) {
        let node = match config.listen.ip() {
            std::net::IpAddr::V4(ip) => ip.octets()[3],
            std::net::IpAddr::V6(_) => unreachable!("the tests use 127.0.9.x"),
        };
        let gossiper = self.network.join(config).await.unwrap();
        self.events.insert(node, Recorded::follow(&gossiper));
        self.nodes.insert(node, gossiper);
    }

    pub fn node(&self, node: u8) -> &Arc<Gossiper> {
        &self.nodes[&node]
    }

    /// Kills a node: it is cut off and its gossip stops without a word.
    pub fn crash(&mut self, node: u8) {
        self.network.crash(addr(node));
        self.nodes.remove(&node);
    }

    pub fn others(&self, node: u8) -> Vec<u8> {
        self.nodes.keys().copied().filter(|n| *n != node).collect()
    }

    /// `peer` as `observer` sees it.
    pub fn endpoint(&self, observer: u8, peer: u8) -> EndpointView {
        let endpoints = self.node(observer).endpoints();
        let found = endpoints.into_iter().find(|e| e.addr == addr(peer));
        found.unwrap_or_else(|| panic!("node {observer} does not know node {peer}"))
    }

    /// Whether `observer` currently sees `peer` up.
    pub fn sees_alive(&self, observer: u8, peer: u8) -> bool {
        self.node(observer).is_alive(addr(peer).ip())
    }

    /// Waits (in paused time) until every running node sees every other running node up.
    pub async fn converged(&self, limit: Duration) -> Duration {
        wait_until(limit, "every node to see every other node up", || {
            self.nodes.keys().all(|observer| {
                self.others(*observer)
                    .iter()
                    .all(|peer| self.sees_alive(*observer, *peer))
            })
        })
        .await
    }

    /// Waits until each of `observers` sees `peer` in the `alive` state; returns the time taken.
    pub async fn seen(&self, observers: &[u8], peer: u8, alive: bool, limit: Duration) -> Duration {
        let state = if alive { "up" } else { "down" };
        let what = format!("{observers:?} to see node {peer} {state}");
        wait_until(limit, &what, || {
            observers
                .iter()
                .all(|observer| self.sees_alive(*observer, peer) == alive)
        })
        .await
    }
}

impl Cluster {
    /// Each observer recorded exactly these Alive/Dead events about `peer`.
    pub fn expect_liveness(&self, observers: &[u8], peer: u8, expected: &[MembershipEvent]) {
        for observer in observers {
            let liveness = self.events[observer].liveness_of(addr(peer));
            assert_eq!(liveness, expected, "node {observer} about node {peer}");
        }
    }

    /// No node ever saw a peer go down.
    pub fn expect_no_node_down(&self) {
        for (node, events) in &self.events {
            let all = events.all();
            let down = all.iter().filter(|e| matches!(e, MembershipEvent::Dead(_)));
            assert_eq!(down.count(), 0, "node {node} saw a peer down: {all:?}");
        }
    }
}

/// Polls `done` every 50 ms of (paused) time; panics after `limit`. Returns the time it took.
pub async fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    loop {
        if done() {
            return start.elapsed();
        }
        assert!(start.elapsed() <= limit, "waited {limit:?} for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Lets simulated time pass.
pub async fn run_for(duration: Duration) {
    tokio::time::sleep(duration).await;
}

/// Log lines written while a test runs (a current-thread runtime runs every task on the test's
/// thread, so a thread-local subscriber sees them all).
#[derive(Clone, Default)]
pub struct CapturedLog(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for CapturedLog {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl CapturedLog {
    pub fn subscriber(&self) -> impl tracing::Subscriber + Send + Sync + use<> {
        let log = self.clone();
        tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || log.clone())
            .finish()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock()).into_owned()
    }
}
