//! A cluster of storage proxies for simulations on turmoil: each node a turmoil host running a
//! real `Storage` in a temporary directory, `net::Messaging` over `TurmoilNetwork`, a
//! `Coordinator` on a fixed ring and a `HintsService`, with a failure detector the test drives.
//! The test body is a turmoil client ([`simulate`]); time is simulated, and the network's
//! latencies and losses come from the seed.
#![allow(dead_code)]

pub mod ops;

use std::collections::HashSet;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use coordinator::{Coordinator, Remote, Timeouts};
use hints::{decode_hint, HintsConfig, HintsEnv, HintsService, MessagingDeliver};
use mutation::TableId;
use net::{handler_fn, with_sim, Messaging, NetConfig, RemoteError, Tuning, TurmoilNetwork, Verb};
use parking_lot::Mutex;
use ring::{Endpoint, Token, TokenMetadata};
use storage::{Storage, StorageConfig, TableParams};
use uuid::Uuid;

pub const TABLE: TableId = TableId(Uuid::from_u128(0x5151));
/// The keyspace the tests write to: SimpleStrategy with RF 3 (`ops::STRATEGY`).
pub const KEYSPACE: &str = "ks";
/// A keyspace with one replica per key.
pub const RF1_KEYSPACE: &str = "rf1";
pub const STORAGE_PORT: u16 = 7000;
pub const TOKENS_PER_NODE: usize = 8;

/// The request timeouts of every node (short: the simulation waits them out often).
pub const TIMEOUTS: Timeouts = Timeouts {
    read: Duration::from_millis(800),
    range: Duration::from_millis(1000),
    write: Duration::from_millis(500),
    counter_write: Duration::from_millis(500),
};

pub fn addr(i: usize) -> IpAddr {
    IpAddr::from([192, 168, 9, i as u8 + 1])
}

/// The latency of a slow node's links before their extra delay, and after it.
const LATENCY: Duration = Duration::from_millis(2);

/// Runs `body` as a turmoil client of a simulation seeded with `seed`, until it ends.
pub fn simulate(seed: u64, body: impl Future<Output = ()> + 'static) {
    let sim = turmoil::Builder::new()
        .simulation_duration(Duration::from_secs(24 * 60 * 60))
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(3))
        .tcp_capacity(4096)
        .rng_seed(seed)
        .build();
    net::drive_client(sim, "test", body);
}

pub fn host_id(i: usize) -> Uuid {
    Uuid::from_u128(i as u128 + 1)
}

pub fn endpoint(i: usize) -> Endpoint {
    Endpoint {
        addr: addr(i),
        datacenter: "dc1".into(),
        rack: "rack1".into(),
        host_id: *host_id(i).as_bytes(),
    }
}

/// `n` nodes with `TOKENS_PER_NODE` tokens each, spread from `seed`.
pub fn ring(n: usize, seed: u64) -> TokenMetadata {
    let mut ring = TokenMetadata::new();
    let tokens = ring::random_tokens(n * TOKENS_PER_NODE, seed);
    for (i, tokens) in tokens.chunks(TOKENS_PER_NODE).enumerate() {
        ring.add_endpoint(endpoint(i), tokens.to_vec());
    }
    ring
}

/// Which nodes each node believes down: the simulation's failure detector.
#[derive(Default)]
pub struct Detector {
    /// (observer, peer) pairs where the observer holds the peer down.
    down: Mutex<HashSet<(IpAddr, IpAddr)>>,
}

impl Detector {
    pub fn mark(&self, observer: IpAddr, peer: IpAddr, alive: bool) {
        let mut down = self.down.lock();
        if alive {
            down.remove(&(observer, peer));
        } else {
            down.insert((observer, peer));
        }
    }

    pub fn sees_alive(&self, observer: IpAddr, peer: IpAddr) -> bool {
        !self.down.lock().contains(&(observer, peer))
    }
}

/// The parts of a running node.
#[derive(Clone)]
pub struct Running {
    pub storage: Arc<Storage>,
    pub messaging: Arc<Messaging>,
    pub coordinator: Arc<Coordinator>,
    pub hints: Arc<HintsService>,
}

/// One node: its directories outlive its runs.
pub struct Node {
    pub index: usize,
    dir: tempfile::TempDir,
    pub running: Option<Running>,
}

/// What the hosts share with the test body: what each node needs to boot, and what it runs.
#[derive(Clone)]
struct Hosts {
    dirs: Vec<PathBuf>,
    ring: TokenMetadata,
    detector: Arc<Detector>,
    running: Arc<Mutex<Vec<Option<Running>>>>,
}

impl Hosts {
    /// The software of node `i`: its services, then nothing (the test body uses them).
    async fn run(self, i: usize) -> turmoil::Result {
        let running = boot(&self, i).await;
        self.running.lock()[i] = Some(running);
        std::future::pending::<()>().await;
        Ok(())
    }
}

pub struct Cluster {
    hosts: Hosts,
    pub detector: Arc<Detector>,
    pub ring: TokenMetadata,
    pub nodes: Vec<Node>,
    registered: Vec<bool>,
    /// Nodes cut off from the others, and nodes whose links are slow.
    isolated: HashSet<usize>,
    slow: HashSet<usize>,
}

impl Cluster {
    /// `n` nodes, every one started and seen alive by the others.
    pub async fn start(n: usize, seed: u64) -> Cluster {
        let nodes: Vec<Node> = (0..n)
            .map(|index| Node {
                index,
                dir: tempfile::tempdir().expect("a temporary directory"),
                running: None,
            })
            .collect();
        let detector = Arc::new(Detector::default());
        let hosts = Hosts {
            dirs: nodes
                .iter()
                .map(|node| node.dir.path().to_path_buf())
                .collect(),
            ring: ring(n, seed),
            detector: detector.clone(),
            running: Arc::new(Mutex::new(vec![None; n])),
        };
        let mut cluster = Cluster {
            ring: hosts.ring.clone(),
            hosts,
            detector,
            nodes,
            registered: vec![false; n],
            isolated: HashSet::new(),
            slow: HashSet::new(),
        };
        for i in 0..n {
            cluster.boot(i).await;
        }
        cluster
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn running(&self) -> Vec<usize> {
        (0..self.len())
            .filter(|i| self.nodes[*i].running.is_some())
            .collect()
    }

    pub fn node(&self, i: usize) -> &Running {
        self.nodes[i].running.as_ref().expect("the node runs")
    }

    /// The index of the node at address `at`.
    pub fn node_of(&self, at: IpAddr) -> usize {
        (0..self.len())
            .find(|&i| addr(i) == at)
            .expect("an address of the cluster")
    }

    /// Starts node `i` from its directories (its host again, after a crash): storage replays
    /// its commit log.
    pub async fn boot(&mut self, i: usize) {
        self.hosts.running.lock()[i] = None;
        if std::mem::replace(&mut self.registered[i], true) {
            with_sim(move |sim| sim.bounce(addr(i))).await;
        } else {
            let hosts = self.hosts.clone();
            with_sim(move |sim| sim.host(addr(i), move || hosts.clone().run(i))).await;
        }
        let running = loop {
            if let Some(running) = self.hosts.running.lock()[i].clone() {
                break running;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        self.nodes[i].running = Some(running);
        let me = addr(i);
        for peer in self.running() {
            if peer != i && self.detector.sees_alive(me, addr(peer)) {
                self.node(i)
                    .hints
                    .host_alive(host_id(peer), peer_addr(peer));
            }
        }
    }

    /// Stops node `i` as a crash would: its messaging and hints stopped (hints already stored
    /// are kept: the service writes its buffer as it stops), its host's software killed (its
    /// connections reset), its storage dropped without a flush once nothing uses it any more.
    pub async fn crash(&mut self, i: usize) {
        let Some(running) = self.nodes[i].running.take() else {
            return;
        };
        self.hosts.running.lock()[i] = None;
        let Running {
            storage,
            messaging,
            coordinator,
            hints,
        } = running;
        if let Err(e) = hints.shutdown().await {
            panic!("node {i}: hints did not stop: {e}");
        }
        messaging.shutdown().await;
        with_sim(move |sim| sim.crash(addr(i))).await;
        drop((messaging, coordinator, hints));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while Arc::strong_count(&storage) > 1 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "node {i}: its storage is still in use after the crash"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        drop(storage);
    }

    /// What `observer` believes of `peer` (and, when it comes alive, its hints go).
    pub fn detect(&self, observer: usize, peer: usize, alive: bool) {
        self.detector.mark(addr(observer), addr(peer), alive);
        if let Some(running) = &self.nodes[observer].running {
            if alive {
                running.hints.host_alive(host_id(peer), peer_addr(peer));
            } else {
                running.hints.host_down(host_id(peer));
            }
        }
    }

    /// Every node's view of `peer`.
    pub fn detect_everywhere(&self, peer: usize, alive: bool) {
        for observer in 0..self.len() {
            if observer != peer {
                self.detect(observer, peer, alive);
            }
        }
    }
}

/// The network's faults, between the simulated nodes.
impl Cluster {
    /// Cuts `node` off from every other node.
    pub fn isolate(&mut self, node: usize) {
        for other in (0..self.len()).filter(|other| *other != node) {
            turmoil::partition(addr(node), addr(other));
        }
        self.isolated.insert(node);
    }

    /// Whether the link between `a` and `b` is cut.
    pub fn is_cut(&self, a: usize, b: usize) -> bool {
        a != b && (self.isolated.contains(&a) || self.isolated.contains(&b))
    }

    /// Bytes to and from `node` take `extra` longer (zero: back to normal).
    pub async fn set_slow(&mut self, node: usize, extra: Duration) {
        let others: Vec<IpAddr> = (0..self.len()).filter(|o| *o != node).map(addr).collect();
        with_sim(move |sim| {
            for other in others {
                sim.set_link_latency(addr(node), other, LATENCY + extra);
            }
        })
        .await;
        self.slow.insert(node);
    }

    /// Each TCP segment is lost with this probability; a connection that lost one stalls
    /// until messaging notices and redials.
    pub async fn set_loss(&self, rate: f64) {
        with_sim(move |sim| sim.set_fail_rate(rate)).await;
    }

    /// Ends every partition and slowness.
    pub async fn heal(&mut self) {
        for a in 0..self.len() {
            for b in a + 1..self.len() {
                turmoil::repair(addr(a), addr(b));
            }
        }
        self.isolated.clear();
        for node in std::mem::take(&mut self.slow) {
            self.set_slow(node, Duration::ZERO).await;
        }
        self.slow.clear();
    }
}

/// Node `i`'s services, started on its host: storage replays its commit log.
async fn boot(hosts: &Hosts, i: usize) -> Running {
    let dir = &hosts.dirs[i];
    let storage = Arc::new(open_storage(dir));
    let mut config = NetConfig::new("Sim", host_id(i), SocketAddr::new(addr(i), STORAGE_PORT));
    config.connect_timeout = Duration::from_millis(300);
    let messaging = Messaging::start_tuned(config, tuning(), Arc::new(TurmoilNetwork))
        .await
        .expect("messaging starts");
    let coordinator = Arc::new(
        Coordinator::new(storage.clone(), endpoint(i), TIMEOUTS).with_storage_port(STORAGE_PORT),
    );
    coordinator.topology().set_ring(hosts.ring.clone());
    coordinator.install_schema(keyspaces());
    let detector = hosts.detector.clone();
    let me = addr(i);
    coordinator
        .topology()
        .set_liveness(Arc::new(move |peer| detector.sees_alive(me, peer)));
    coordinator.attach_remote(Remote {
        messaging: messaging.clone(),
        storage_port: STORAGE_PORT,
        epoch: Arc::new(|| 1),
        await_epoch: Arc::new(|_, _| Box::pin(async {})),
    });
    register_hint_handler(&messaging, storage.clone());
    let hints = open_hints(dir, &messaging, hosts.dirs.len()).await;
    coordinator.attach_hints(hints.clone());
    Running {
        storage,
        messaging,
        coordinator,
        hints,
    }
}

/// The schema of every node: [`KEYSPACE`] and [`RF1_KEYSPACE`].
fn keyspaces() -> Arc<schema::Schema> {
    let simple = |name: &str, rf: usize| {
        let replication = [
            ("class".to_string(), "SimpleStrategy".to_string()),
            ("replication_factor".to_string(), rf.to_string()),
        ];
        let keyspace = schema::KeyspaceMetadata::new(name, replication.into(), true);
        Arc::new(keyspace.with_table(table(name)))
    };
    Arc::new(schema::Schema::new([
        simple(KEYSPACE, 3),
        simple(RF1_KEYSPACE, 1),
    ]))
}

/// The test table in `keyspace` (a blob partition key): lightweight transactions find a
/// partition's replicas through its table's keyspace.
fn table(keyspace: &str) -> schema::TableMetadata {
    let key = schema::ColumnMetadata {
        name: "k".into(),
        ty: types::CqlType::Native(types::NativeType::Blob),
        kind: schema::ColumnKind::PartitionKey,
        position: 0,
        order: schema::ClusteringOrder::Asc,
    };
    let options = schema::TableOptions::default();
    let id = match keyspace {
        KEYSPACE => TABLE.0,
        _ => Uuid::from_u128(0x5152),
    };
    schema::TableMetadata::new(keyspace, "cells", id, vec![key], options)
        .unwrap_or_else(|e| panic!("a test table: {e}"))
}

pub fn peer_addr(i: usize) -> SocketAddr {
    SocketAddr::new(addr(i), STORAGE_PORT)
}

fn tuning() -> Tuning {
    Tuning {
        keepalive: Duration::from_millis(200),
        dead_after: Duration::from_secs(1),
        reconnect_min: Duration::from_millis(20),
        reconnect_max: Duration::from_millis(200),
        ..Tuning::default()
    }
}

fn open_storage(dir: &std::path::Path) -> Storage {
    let mut config = StorageConfig::new(dir.join("data"), dir.join("commitlog"));
    config.segment_size = 1024 * 1024;
    config.memtable_space = 64 * 1024 * 1024;
    config.key_cache_size = 0;
    config.file_cache_size = 0;
    let storage = Storage::open(config).expect("storage opens");
    storage
        .create_table(TABLE, TableParams::new("sim", "cells"))
        .expect("the table is created");
    let paxos = TableId(schema::system_table_id("system", "paxos"));
    storage
        .create_table(paxos, TableParams::new("system", "paxos"))
        .expect("system.paxos is created");
    storage.replay().expect("the commit log replays");
    storage.finish_replay();
    storage
}

/// The replica side of hints: applies the mutation a hint carries.
fn register_hint_handler(messaging: &Messaging, storage: Arc<Storage>) {
    messaging.register(
        Verb::Hint,
        handler_fn(move |_, payload: Bytes| {
            let storage = storage.clone();
            async move {
                let mutation = decode_hint(&payload)
                    .map_err(|e| RemoteError::new(0, format!("malformed hint: {e}")))?;
                storage
                    .apply(mutation)
                    .await
                    .map(|()| Bytes::new())
                    .map_err(|e| RemoteError::new(0, e.to_string()))
            }
        }),
    );
}

async fn open_hints(
    dir: &std::path::Path,
    messaging: &Arc<Messaging>,
    nodes: usize,
) -> Arc<HintsService> {
    let mut config = HintsConfig::new(dir.join("hints"));
    config.hints_flush_period = Duration::from_millis(500);
    config.hinted_handoff_throttle = 0;
    let env = HintsEnv {
        deliver: Arc::new(MessagingDeliver::new(messaging.clone(), TIMEOUTS.write)),
        gc_grace: Arc::new(|_| Some(storage::DEFAULT_GC_GRACE_SECONDS as u32)),
        node_count: Arc::new(move || nodes),
    };
    HintsService::open(config, env)
        .await
        .expect("the hints service opens")
}

/// The token of a key, as the ring places it.
pub fn token_of(key: &[u8]) -> i64 {
    Token::of_key(key).0
}
