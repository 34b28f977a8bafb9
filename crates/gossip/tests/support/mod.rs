//! A simulated cluster for the gossip tests: nodes 192.168.9.i:7000 on turmoil's network, each a
//! turmoil host running the production stack (internode messaging over `TurmoilNetwork`,
//! gossip over `net`), with every node's events recorded. The test drives the simulation step
//! by step; turmoil's seed fixes the network's latencies and losses (chitchat picks its gossip
//! partners with its own unseeded generator, so the bounds below are asserted, not exact traces).
// Each test file uses part of this module.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use gossip::net_wire::start_over_net;
use gossip::{keys, EndpointView, GossipConfig, Gossiper, HostId, Membership, MembershipEvent};
use net::{Messaging, NetConfig, Tuning, TurmoilNetwork};
use parking_lot::Mutex;
use tokio::sync::broadcast::error::TryRecvError;
use tokio::sync::{broadcast, mpsc};
use turmoil::Sim;

pub const CLUSTER: &str = "Test Cluster";
const PORT: u16 = 7000;
/// How often `wait_until` checks its condition, in simulated time.
const POLL: Duration = Duration::from_millis(50);

pub fn addr(node: u8) -> SocketAddr {
    SocketAddr::new(ip(node), PORT)
}

fn ip(node: u8) -> IpAddr {
    IpAddr::from([192, 168, 9, node])
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

/// Messaging timings for a simulation: a stalled or cut connection is noticed in about a
/// second and redialled within half a second, so a healed link carries gossip again within
/// the bounds the tests assert (production waits 20 s and backs off up to 5 s).
fn tuning() -> Tuning {
    Tuning {
        keepalive: Duration::from_millis(300),
        dead_after: Duration::from_secs(1),
        reconnect_min: Duration::from_millis(50),
        reconnect_max: Duration::from_millis(400),
        ..Tuning::default()
    }
}

/// Every event a node sent, in order.
pub struct Recorded {
    events: Mutex<broadcast::Receiver<MembershipEvent>>,
    seen: Mutex<Vec<MembershipEvent>>,
}

impl Recorded {
    fn follow(gossiper: &Gossiper) -> Recorded {
        Recorded {
            events: Mutex::new(gossiper.subscribe()),
            seen: Mutex::new(Vec::new()),
        }
    }

    /// Moves the events sent so far into `seen`.
    fn drain(&self) {
        let mut events = self.events.lock();
        loop {
            match events.try_recv() {
                Ok(event) => self.seen.lock().push(event),
                Err(TryRecvError::Lagged(missed)) => panic!("missed {missed} events"),
                Err(TryRecvError::Empty | TryRecvError::Closed) => return,
            }
        }
    }

    pub fn all(&self) -> Vec<MembershipEvent> {
        self.drain();
        self.seen.lock().clone()
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

type Command = Box<dyn FnOnce(Arc<Gossiper>) -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// A node's software as its host started it.
#[derive(Clone)]
struct Running {
    gossiper: Arc<Gossiper>,
    messaging: Arc<Messaging>,
    commands: mpsc::UnboundedSender<Command>,
}

/// What the hosts share with the test: the configuration each starts with, and what it runs.
#[derive(Clone, Default)]
struct Hosts {
    configs: Arc<Mutex<BTreeMap<u8, GossipConfig>>>,
    running: Arc<Mutex<BTreeMap<u8, Running>>>,
}

impl Hosts {
    /// The software of host `node`: messaging and gossip, then the test's commands.
    async fn run(self, node: u8) -> turmoil::Result {
        let config = self.configs.lock()[&node].clone();
        // Messaging always speaks for the test cluster, so that a node given another gossip
        // cluster name reaches gossip's own check (the handshake's is net's test).
        let mut net_config = NetConfig::new(CLUSTER, config.host_id, config.listen);
        net_config.connect_timeout = Duration::from_millis(500);
        let network = Arc::new(TurmoilNetwork);
        let messaging = Messaging::start_tuned(net_config, tuning(), network).await?;
        let gossiper = start_over_net(config, messaging.clone()).await?;
        let (commands, mut received) = mpsc::unbounded_channel::<Command>();
        let running = Running {
            gossiper: gossiper.clone(),
            messaging,
            commands,
        };
        self.running.lock().insert(node, running);
        while let Some(command) = received.recv().await {
            command(gossiper.clone()).await;
        }
        Ok(())
    }
}

pub struct Cluster {
    pub sim: Sim<'static>,
    hosts: Hosts,
    registered: BTreeSet<u8>,
    pub nodes: BTreeMap<u8, Arc<Gossiper>>,
    pub events: BTreeMap<u8, Recorded>,
}

impl Cluster {
    pub fn start(size: u8, seed: u64) -> Cluster {
        let sim = turmoil::Builder::new()
            .simulation_duration(Duration::from_secs(24 * 60 * 60))
            .min_message_latency(Duration::from_micros(100))
            .max_message_latency(Duration::from_millis(2))
            .rng_seed(seed)
            // Connections redialled into a held link arrive together when it is released.
            .tcp_capacity(4096)
            .build();
        let mut cluster = Cluster {
            sim,
            hosts: Hosts::default(),
            registered: BTreeSet::new(),
            nodes: BTreeMap::new(),
            events: BTreeMap::new(),
        };
        for node in 1..=size {
            cluster.join(config(node));
        }
        cluster
    }

    /// Starts (or restarts) the node of `config.listen` and waits until its gossip runs.
    pub fn join(&mut self, config: GossipConfig) {
        let IpAddr::V4(v4) = config.listen.ip() else {
            unreachable!("the tests use 192.168.9.x")
        };
        let node = v4.octets()[3];
        self.hosts.configs.lock().insert(node, config);
        self.hosts.running.lock().remove(&node);
        if self.registered.insert(node) {
            let hosts = self.hosts.clone();
            self.sim.host(ip(node), move || hosts.clone().run(node));
        } else {
            self.sim.bounce(ip(node));
        }
        while !self.hosts.running.lock().contains_key(&node) {
            self.step();
        }
        let gossiper = self.hosts.running.lock()[&node].gossiper.clone();
        self.events.insert(node, Recorded::follow(&gossiper));
        self.nodes.insert(node, gossiper);
    }

    pub fn node(&self, node: u8) -> &Arc<Gossiper> {
        &self.nodes[&node]
    }

    /// The node's internode messaging.
    pub fn messaging(&self, node: u8) -> Arc<Messaging> {
        self.hosts.running.lock()[&node].messaging.clone()
    }

    /// Kills a node: its host's software stops without a word, its connections reset.
    pub fn crash(&mut self, node: u8) {
        self.sim.crash(ip(node));
        self.hosts.running.lock().remove(&node);
        self.nodes.remove(&node);
    }

    /// Runs `command` on each node's host at once, and the simulation until all have finished.
    pub fn run_on_each<F>(
        &mut self,
        nodes: &[u8],
        command: impl Fn(Arc<Gossiper>) -> F + Clone + Send + 'static,
    ) where
        F: Future<Output = ()> + 'static,
    {
        let done: Vec<Arc<AtomicBool>> = nodes.iter().map(|_| Arc::default()).collect();
        for (node, finished) in nodes.iter().zip(&done) {
            let (command, finished) = (command.clone(), finished.clone());
            let boxed: Command = Box::new(move |gossiper| {
                Box::pin(async move {
                    command(gossiper).await;
                    finished.store(true, Ordering::SeqCst);
                })
            });
            let sender = self.hosts.running.lock()[node].commands.clone();
            assert!(sender.send(boxed).is_ok(), "node {node} does not run");
        }
        while !done.iter().all(|finished| finished.load(Ordering::SeqCst)) {
            self.step();
        }
    }

    /// Shuts the node's gossip down cleanly (announcing it) and hands back its handle.
    pub fn shutdown(&mut self, node: u8) -> Arc<Gossiper> {
        self.run_on_each(&[node], |gossiper| async move { gossiper.shutdown().await });
        self.nodes.remove(&node).unwrap()
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

    /// Waits until every running node sees every other running node up.
    pub fn converged(&mut self, limit: Duration) -> Duration {
        self.wait_until(limit, "every node to see every other node up", |cluster| {
            cluster.nodes.keys().all(|observer| {
                cluster
                    .others(*observer)
                    .iter()
                    .all(|peer| cluster.sees_alive(*observer, *peer))
            })
        })
    }

    /// Waits until each of `observers` sees `peer` in the `alive` state; returns the time taken.
    pub fn seen(&mut self, observers: &[u8], peer: u8, alive: bool, limit: Duration) -> Duration {
        let state = if alive { "up" } else { "down" };
        let what = format!("{observers:?} to see node {peer} {state}");
        self.wait_until(limit, &what, |cluster| {
            observers
                .iter()
                .all(|observer| cluster.sees_alive(*observer, peer) == alive)
        })
    }

    /// Checks `done` every 50 ms of simulated time; panics after `limit`. Returns the time it
    /// took.
    pub fn wait_until(
        &mut self,
        limit: Duration,
        what: &str,
        done: impl Fn(&Cluster) -> bool,
    ) -> Duration {
        let start = self.sim.elapsed();
        loop {
            let waited = self.sim.elapsed() - start;
            if done(self) {
                return waited;
            }
            assert!(waited <= limit, "waited {limit:?} for {what}");
            self.run_for(POLL);
        }
    }

    /// Lets simulated time pass.
    pub fn run_for(&mut self, duration: Duration) {
        let until = self.sim.elapsed() + duration;
        while self.sim.elapsed() < until {
            self.step();
        }
    }

    fn step(&mut self) {
        self.sim.step().unwrap();
        for recorded in self.events.values() {
            recorded.drain();
        }
    }
}

/// The network's faults, between the simulated nodes.
impl Cluster {
    /// Cuts every link between the two sides, both ways: what is sent is lost.
    pub fn partition(&mut self, side_a: &[u8], side_b: &[u8]) {
        for a in side_a {
            for b in side_b {
                self.sim.partition(ip(*a), ip(*b));
            }
        }
    }

    /// Nothing reaches or leaves `node` until [`Cluster::heal`], and then all of it does: a
    /// paused process, whose peers' TCP connections hold what they sent.
    pub fn isolate(&mut self, node: u8) {
        for other in self.registered.iter().filter(|n| **n != node) {
            self.sim.hold(ip(node), ip(*other));
        }
    }

    /// Restores every cut link and releases every held one.
    pub fn heal(&mut self) {
        let all: Vec<u8> = self.registered.iter().copied().collect();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                self.sim.repair(ip(*a), ip(*b));
                self.sim.release(ip(*a), ip(*b));
            }
        }
    }

    /// Each message (a TCP segment) is lost with this probability; a connection that lost one
    /// stalls until messaging notices and redials.
    pub fn set_loss(&mut self, rate: f64) {
        self.sim.set_fail_rate(rate);
    }

    /// Each message takes up to `max` to arrive.
    pub fn set_max_delay(&mut self, max: Duration) {
        self.sim.set_max_message_latency(max);
    }

    /// Times the node's links were redialled.
    pub fn reconnects(&self, node: u8) -> u64 {
        let stats = self.messaging(node).stats();
        stats.links.iter().map(|link| link.reconnects).sum()
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

/// Log lines written while a test runs (turmoil runs every host on the test's thread, so a
/// thread-local subscriber sees them all).
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
