//! A cluster of metadata services on turmoil's network, for tests: each node is a turmoil host
//! running the production stack (internode messaging over `TurmoilNetwork`, the group's
//! `NetTransport` over it, `MetadataService`), and the test body is a turmoil client that
//! starts, crashes and restarts nodes, cuts links and commits through the services. Time is
//! simulated; the network's latencies and losses come from the seed given to [`simulate`].
#![allow(dead_code)]

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use metadata::{
    ClusterMetadata, HostId, MetadataConfig, MetadataError, MetadataService, NetTransport,
    NodeRecord, NodeState, RaftRole, Transformation, Transport,
};
use net::{with_sim, Messaging, NetConfig, Tuning, TurmoilNetwork};
use parking_lot::Mutex;

pub const CLUSTER: &str = "Test Cluster";
const PORT: u16 = 7000;
/// The turmoil client that runs the test's body.
const TEST: &str = "test";

pub fn init_logs() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

pub fn host(i: usize) -> HostId {
    HostId::from_u64_pair(0, i as u64 + 1)
}

pub fn addr(i: usize) -> SocketAddr {
    SocketAddr::new(ip(i), PORT)
}

fn ip(i: usize) -> IpAddr {
    IpAddr::from([192, 168, 8, i as u8 + 1])
}

/// Runs `body` as a turmoil client of a simulation seeded with `seed`, until it ends.
pub fn simulate(seed: u64, body: impl Future<Output = ()> + 'static) {
    init_logs();
    let sim = turmoil::Builder::new()
        .simulation_duration(Duration::from_secs(24 * 60 * 60))
        .min_message_latency(Duration::from_micros(100))
        .max_message_latency(Duration::from_millis(1))
        .tcp_capacity(4096)
        .rng_seed(seed)
        .build();
    net::drive_client(sim, TEST, body);
}

/// Messaging timings for a simulation: a cut connection is noticed in a second and redialled
/// within half a second (production waits 20 s and backs off up to 5 s).
fn tuning() -> Tuning {
    Tuning {
        keepalive: Duration::from_millis(200),
        dead_after: Duration::from_secs(1),
        reconnect_min: Duration::from_millis(50),
        reconnect_max: Duration::from_millis(400),
        ..Tuning::default()
    }
}

async fn start_messaging(host_id: HostId, listen: SocketAddr) -> std::io::Result<Arc<Messaging>> {
    let mut config = NetConfig::new(CLUSTER, host_id, listen);
    config.connect_timeout = Duration::from_millis(500);
    Messaging::start_tuned(config, tuning(), Arc::new(TurmoilNetwork)).await
}

/// What the hosts share with the test body: each node's configuration and running service.
#[derive(Clone, Default)]
struct Hosts {
    configs: Arc<Mutex<Vec<Option<MetadataConfig>>>>,
    running: Arc<Mutex<Vec<Option<Arc<MetadataService>>>>>,
}

impl Hosts {
    /// The software of node `i`: once the test starts the node, messaging, the group's
    /// transport on it, the service.
    async fn run(self, i: usize) -> turmoil::Result {
        let config = loop {
            if let Some(config) = self.configs.lock()[i].clone() {
                break config;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        let messaging = start_messaging(config.host_id, config.addr).await?;
        let transport: Arc<dyn Transport> = NetTransport::new(messaging);
        let service = MetadataService::start(config, Some(transport), None)
            .await
            .map_err(|e| format!("node {i} did not start: {e}"))?;
        self.running.lock()[i] = Some(service);
        std::future::pending::<()>().await;
        Ok(())
    }
}

pub struct Cluster {
    hosts: Hosts,
    dirs: Vec<tempfile::TempDir>,
    nodes: Vec<Option<Arc<MetadataService>>>,
    /// Nodes with a turmoil host, and nodes started at least once.
    registered: Vec<bool>,
    started: Vec<bool>,
    pub seeds: Vec<SocketAddr>,
    pub snapshot_every: u64,
    pub commit_timeout: Duration,
}

impl Cluster {
    /// `n` nodes, none started; every node is a seed.
    pub fn new(n: usize) -> Cluster {
        let hosts = Hosts::default();
        *hosts.configs.lock() = vec![None; n];
        *hosts.running.lock() = vec![None; n];
        Cluster {
            hosts,
            dirs: (0..n).map(|_| tempfile::tempdir().unwrap()).collect(),
            nodes: (0..n).map(|_| None).collect(),
            registered: vec![false; n],
            started: vec![false; n],
            seeds: (0..n).map(addr).collect(),
            snapshot_every: 1000,
            commit_timeout: Duration::from_secs(3),
        }
    }

    pub fn config(&self, i: usize) -> MetadataConfig {
        let mut config =
            MetadataConfig::new(self.dirs[i].path().to_path_buf(), host(i), addr(i), CLUSTER);
        config.seeds = self.seeds.clone();
        config.commit_timeout = self.commit_timeout;
        config.heartbeat_interval = Duration::from_millis(100);
        config.election_timeout = Duration::from_millis(500);
        config.snapshot_every = self.snapshot_every;
        config
    }

    /// Starts (or restarts) node `i`'s host and waits until its service runs.
    pub async fn start(&mut self, i: usize) -> Arc<MetadataService> {
        self.hosts.configs.lock()[i] = Some(self.config(i));
        self.hosts.running.lock()[i] = None;
        if std::mem::replace(&mut self.started[i], true) {
            with_sim(move |sim| sim.bounce(ip(i))).await;
        } else {
            self.register(i).await;
        }
        let service = loop {
            if let Some(service) = self.hosts.running.lock()[i].clone() {
                break service;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        self.nodes[i] = Some(service.clone());
        service
    }

    /// Gives node `i` its turmoil host, whose software waits until the node is started.
    async fn register(&mut self, i: usize) {
        if !std::mem::replace(&mut self.registered[i], true) {
            let hosts = self.hosts.clone();
            with_sim(move |sim| sim.host(ip(i), move || hosts.clone().run(i))).await;
        }
    }

    /// Kills node `i`'s host (its files stay): its tasks stop, its connections reset.
    pub async fn crash(&mut self, i: usize) {
        self.nodes[i] = None;
        self.hosts.running.lock()[i] = None;
        with_sim(move |sim| sim.crash(ip(i))).await;
    }

    /// Cuts every link between `side` and the other nodes, both ways.
    pub fn partition(&self, side: &[usize]) {
        for a in side {
            for b in (0..self.nodes.len()).filter(|b| !side.contains(b)) {
                turmoil::partition(ip(*a), ip(b));
            }
        }
    }

    /// Cuts the link from `from` to `to` only (also before the nodes start).
    pub async fn cut_one_way(&mut self, from: usize, to: usize) {
        self.register(from).await;
        self.register(to).await;
        turmoil::partition_oneway(ip(from), ip(to));
    }

    /// Restores every link.
    pub fn heal(&self) {
        let n = self.nodes.len();
        for a in 0..n {
            for b in a + 1..n {
                turmoil::repair(ip(a), ip(b));
            }
        }
    }

    /// Each message (a TCP segment) is lost with this probability; a connection that lost one
    /// stalls until messaging notices and redials.
    pub async fn set_loss(&self, rate: f64) {
        with_sim(move |sim| sim.set_fail_rate(rate)).await;
    }

    /// Each message takes up to `max` to arrive.
    pub async fn set_max_latency(&self, max: Duration) {
        with_sim(move |sim| sim.set_max_message_latency(max)).await;
    }

    /// A transport from outside the group (on the test's own simulated host).
    pub async fn stranger(&self) -> Arc<NetTransport> {
        let listen = SocketAddr::new(turmoil::lookup(TEST), PORT);
        let messaging = start_messaging(host(99), listen).await.unwrap();
        NetTransport::new(messaging)
    }

    pub fn node(&self, i: usize) -> &Arc<MetadataService> {
        self.nodes[i].as_ref().expect("node is running")
    }

    pub fn running(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|i| self.nodes[*i].is_some())
            .collect()
    }

    /// The running node that leads, once every running node agrees on it.
    pub fn agreed_leader(&self) -> Option<usize> {
        let running = self.running();
        let leaders: Vec<Option<HostId>> = running
            .iter()
            .map(|i| self.node(*i).status().leader)
            .collect();
        let leader = leaders.first().copied().flatten()?;
        let i = running.iter().copied().find(|i| host(*i) == leader)?;
        let agreed = leaders.iter().all(|l| *l == Some(leader));
        (agreed && self.node(i).status().role == RaftRole::Leader).then_some(i)
    }

    /// Waits (simulated time) until `check` holds, failing after `limit`.
    pub async fn wait_until(&self, what: &str, limit: Duration, check: impl Fn(&Cluster) -> bool) {
        let deadline = tokio::time::Instant::now() + limit;
        while !check(self) {
            if tokio::time::Instant::now() > deadline {
                let statuses: Vec<String> = self
                    .running()
                    .iter()
                    .map(|i| format!("node {i}: {:?}", self.node(*i).status()))
                    .collect();
                panic!("timed out waiting for {what}:\n{}", statuses.join("\n"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until every running node applied the same epoch as the others, at least `epoch`.
    pub async fn converged(&self, epoch: u64) -> Arc<ClusterMetadata> {
        self.wait_until("the same state everywhere", Duration::from_secs(20), |c| {
            let states: Vec<Arc<ClusterMetadata>> =
                c.running().iter().map(|i| c.node(*i).current()).collect();
            states[0].epoch >= epoch && states.iter().all(|s| **s == *states[0])
        })
        .await;
        self.node(self.running()[0]).current()
    }

    /// Starts nodes in `order`, registers each, and waits for one group with them all voting.
    pub async fn form(&mut self, order: &[usize]) {
        for i in order {
            self.start(*i).await;
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        for i in order {
            self.node(*i)
                .await_epoch(1, Duration::from_secs(20))
                .await
                .unwrap_or_else(|e| panic!("node {i} joined no group: {e}"));
            register(self.node(*i), *i).await;
        }
        let n = order.len();
        self.wait_until("every node a voter", Duration::from_secs(20), |c| {
            c.agreed_leader()
                .is_some_and(|l| c.node(l).status().voters.len() == n)
        })
        .await;
    }
}

pub fn record(i: usize) -> NodeRecord {
    NodeRecord {
        host_id: host(i),
        addr: addr(i),
        native: SocketAddr::new(addr(i).ip(), 9042),
        dc: "dc1".to_string(),
        rack: format!("rack{}", i % 3 + 1),
        tokens: vec![(i as i64 + 1) * 1000, (i as i64 + 1) * 1000 + 500],
        state: NodeState::Normal,
        release_version: "5.0.4".to_string(),
    }
}

/// Registers node `i` through `service`, re-planning on conflicts as a real caller does.
pub async fn register(service: &MetadataService, i: usize) -> u64 {
    loop {
        let expect_topology = service.current().topology_version;
        let change = Transformation::RegisterNode {
            node: record(i),
            expect_topology,
        };
        match service.commit(change).await {
            Ok(epoch) => return epoch,
            Err(MetadataError::Conflict { .. }) => continue,
            Err(e) => panic!("registering node {i}: {e}"),
        }
    }
}

pub fn create(name: &str) -> Transformation {
    Transformation::SaveKeyspace {
        name: name.to_string(),
        definition: Bytes::from(format!("CREATE KEYSPACE {name}")),
        expect: None,
    }
}

/// Creates keyspaces `{prefix}0` to `{prefix}{n - 1}` through `service`; the last epoch.
pub async fn create_many(service: &MetadataService, prefix: &str, n: usize) -> u64 {
    let mut last = 0;
    for k in 0..n {
        last = service
            .commit(create(&format!("{prefix}{k}")))
            .await
            .unwrap();
    }
    last
}
