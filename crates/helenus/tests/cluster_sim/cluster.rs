//! Complete nodes on turmoil hosts: each host runs `helenus::node::Node::start` with its own
//! directories (kept across restarts), `TurmoilNetwork` between nodes, short messaging timings
//! and a `SteadyClock` made on the host, which the test can jump.
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use clock::{Clock, SharedClock, SteadyClock};
use helenus::node::{Node, NodeInputs};
use net::{with_sim, Tuning, TurmoilNetwork};
use query::QueryProcessor;
use storage::Storage;
use uuid::Uuid;

/// How long a node may take to start, and a crashed node's storage to be let go of.
const START_LIMIT: Duration = Duration::from_secs(120);
const RELEASE_LIMIT: Duration = Duration::from_secs(30);

pub fn addr(i: usize) -> IpAddr {
    IpAddr::from([192, 168, 1, i as u8 + 1])
}

/// What a host publishes once its node runs: the node, the handle of its clock, and its
/// runtime, on which requests to the node run (each turmoil host keeps its own tokio clock,
/// so a node's deadlines must be taken on its own runtime).
#[derive(Default)]
struct Slot {
    /// The node once its data is open, before it has joined the ring.
    opened: Option<Arc<Node>>,
    /// The node once it serves.
    node: Option<Arc<Node>>,
    clock: Option<SteadyClock>,
    runtime: Option<tokio::runtime::Handle>,
    failed: Option<String>,
}

/// What the hosts share with the test body.
#[derive(Clone)]
struct Hosts {
    dirs: Arc<Vec<PathBuf>>,
    tokens: Arc<Vec<Vec<i64>>>,
    /// The run's seed.
    seed: u64,
    /// The host id each node takes on its first start, drawn from the seed.
    host_ids: Arc<Vec<Uuid>>,
    /// The wall time (microseconds since the epoch) when the cluster started: every node's
    /// clock reads it plus the simulated time since, however much real time passed between
    /// the hosts' starts. (A fixed date would do for the nodes, but batch ids and the system
    /// tables' records take the process's clock.)
    epoch_micros: i64,
    /// The nodes that start the cluster (the seeds); the others bootstrap into it.
    seeds: usize,
    /// More cassandra.yaml lines, the same on every node (a scenario's settings).
    extra_yaml: Arc<str>,
    slots: Arc<Vec<Mutex<Slot>>>,
}

impl Hosts {
    /// What node `i`'s gossip partners are drawn from in this run of its software: its host id
    /// and the simulated time it starts at (a restart draws anew).
    fn gossip_seed(&self, i: usize) -> u64 {
        let started = turmoil::sim_elapsed().unwrap_or_default().as_millis() as u64;
        self.host_ids[i].as_u64_pair().0 ^ started
    }

    /// The simulation's wall time now: the cluster's start plus the simulated time elapsed.
    fn wall_micros(&self) -> i64 {
        let elapsed = turmoil::sim_elapsed().unwrap_or_default();
        self.epoch_micros + elapsed.as_micros() as i64
    }

    /// The software of host `i`: a node started from its directories, then nothing more.
    async fn run(self, i: usize) -> turmoil::Result {
        let clock = SteadyClock::starting_at(self.wall_micros());
        let inputs = NodeInputs {
            config: config(i, &self.dirs, &self.tokens[i], self.seeds, &self.extra_yaml),
            network: Arc::new(TurmoilNetwork),
            tuning: tuning(),
            clock: Some(SharedClock::new(clock.clone())),
            in_memory_tables: in_memory_tables(),
            first_host_id: Some(self.host_ids[i]),
            gossip_seed: Some(self.gossip_seed(i)),
        };
        match self.start(i, inputs, clock).await {
            Ok(node) => lock(&self.slots[i]).node = Some(node),
            Err(e) => lock(&self.slots[i]).failed = Some(e),
        }
        std::future::pending::<()>().await;
        Ok(())
    }

    /// `Node::start`, publishing the node once it is open (a joining node can be crashed and
    /// its bootstrap resumed before it serves).
    async fn start(
        &self,
        i: usize,
        inputs: NodeInputs,
        clock: SteadyClock,
    ) -> Result<Arc<Node>, String> {
        let node = Arc::new(Node::open(inputs).await?);
        {
            let mut slot = lock(&self.slots[i]);
            slot.opened = Some(node.clone());
            slot.clock = Some(clock);
            slot.runtime = Some(tokio::runtime::Handle::current());
        }
        node.join().await?;
        node.start_serving();
        Ok(node)
    }
}

fn lock(slot: &Mutex<Slot>) -> std::sync::MutexGuard<'_, Slot> {
    slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The simulated cluster, as the test body drives it.
pub struct Cluster {
    hosts: Hosts,
    _dir: tempfile::TempDir,
    registered: Vec<bool>,
    running: Vec<bool>,
    /// Nodes that left the ring (decommissioned).
    left: Vec<bool>,
}

impl Cluster {
    /// `n` hosts, each node with 8 tokens spread from `seed`; the first `seeds` are the
    /// cluster's seeds and start now (returns once they serve), the others are started later
    /// by [`Cluster::begin_join`] and bootstrap.
    pub async fn start(n: usize, seeds: usize, seed: u64) -> Cluster {
        Cluster::start_with(n, seeds, seed, "").await
    }

    /// [`Cluster::start`] with `extra_yaml` appended to every node's cassandra.yaml.
    pub async fn start_with(n: usize, seeds: usize, seed: u64, extra_yaml: &str) -> Cluster {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let dirs: Vec<PathBuf> = (0..n)
            .map(|i| dir.path().join(format!("node{i}")))
            .collect();
        // Every node runs on this thread: their metadata groups' election timeouts follow the seed.
        metadata::seed_election_timeouts(seed);
        let tokens = ring::random_tokens(n * 8, seed);
        let tokens = tokens.chunks(8).map(|c| c.iter().map(|t| t.0).collect());
        let mut ids = net::SimRng::new(seed ^ 0x0405_71d5);
        let host_ids = (0..n).map(|_| Uuid::from_u64_pair(ids.next_u64(), ids.next_u64()));
        let hosts = Hosts {
            dirs: Arc::new(dirs),
            tokens: Arc::new(tokens.collect()),
            seed,
            host_ids: Arc::new(host_ids.collect()),
            epoch_micros: clock::SystemClock.now_micros()
                - turmoil::sim_elapsed().unwrap_or_default().as_micros() as i64,
            seeds,
            extra_yaml: extra_yaml.into(),
            slots: Arc::new((0..n).map(|_| Mutex::default()).collect()),
        };
        let mut cluster = Cluster {
            hosts,
            _dir: dir,
            registered: vec![false; n],
            running: vec![false; n],
            left: vec![false; n],
        };
        let booting: Vec<usize> = (0..seeds).collect();
        for &i in &booting {
            cluster.launch(i).await;
        }
        for i in booting {
            cluster.await_serving(i).await;
        }
        cluster
    }

    pub fn len(&self) -> usize {
        self.running.len()
    }

    pub fn running(&self) -> Vec<usize> {
        (0..self.len()).filter(|i| self.running[*i]).collect()
    }

    /// The nodes started and not decommissioned: running, crashed or still joining.
    pub fn members(&self) -> Vec<usize> {
        (0..self.len())
            .filter(|i| self.registered[*i] && !self.left[*i])
            .collect()
    }

    /// Members not running: crashed, or started and not yet serving.
    pub fn down(&self) -> Vec<usize> {
        let members = self.members().into_iter();
        members.filter(|i| !self.running[*i]).collect()
    }

    /// Nodes never started yet.
    pub fn unstarted(&self) -> Vec<usize> {
        (0..self.len()).filter(|i| !self.registered[*i]).collect()
    }

    /// Starts node `i`, which bootstraps; [`Cluster::poll_joined`] notices when it serves.
    pub async fn begin_join(&mut self, i: usize) {
        self.launch(i).await;
    }

    /// Whether started node `i` serves now (and counts it running if so); a bootstrap that
    /// failed is resumed (`nodetool bootstrap resume`).
    pub fn poll_joined(&mut self, i: usize) -> bool {
        let slot = lock(&self.hosts.slots[i]);
        if let Some(e) = &slot.failed {
            panic!("node {i} did not start: {e}");
        }
        if slot.node.is_some() {
            drop(slot);
            self.running[i] = true;
            return true;
        }
        if let (Some(opened), Some(runtime)) = (&slot.opened, &slot.runtime) {
            // Resumes a failed bootstrap; answers at once while it streams.
            if opened.ops.mode() == nodeops::OperationMode::Joining {
                let ops = opened.ops.clone();
                runtime.spawn(async move { ops.resume_bootstrap().await });
            }
        }
        false
    }

    /// Decommissions running node `i` on its runtime; the task ends with the outcome.
    pub fn decommission(&self, i: usize) -> Option<tokio::task::JoinHandle<Result<(), String>>> {
        let slot = lock(&self.hosts.slots[i]);
        let (node, runtime) = (slot.node.clone()?, slot.runtime.as_ref()?);
        Some(runtime.spawn(async move { node.ops.decommission(false).await }))
    }

    /// Node `i` has left the ring: no request goes to it any more.
    pub fn mark_left(&mut self, i: usize) {
        self.left[i] = true;
        self.running[i] = false;
    }

    pub fn node(&self, i: usize) -> Option<Arc<Node>> {
        lock(&self.hosts.slots[i]).node.clone()
    }

    /// Node `i` once its data is open, serving or still joining.
    pub fn opened(&self, i: usize) -> Option<Arc<Node>> {
        lock(&self.hosts.slots[i]).opened.clone()
    }

    /// Runs `task` with serving node `i` on the node's own runtime; `None` when it does not
    /// run.
    pub fn spawn_with_node<T, F>(
        &self,
        i: usize,
        task: impl FnOnce(Arc<Node>) -> F,
    ) -> Option<tokio::task::JoinHandle<T>>
    where
        F: std::future::Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let slot = lock(&self.hosts.slots[i]);
        let (node, runtime) = (slot.node.as_ref()?, slot.runtime.as_ref()?);
        Some(runtime.spawn(task(node.clone())))
    }

    /// Runs `request` with node `i`'s query processor on the node's own runtime; `None` when
    /// the node does not run.
    pub fn spawn_on<T, F>(
        &self,
        i: usize,
        request: impl FnOnce(Arc<QueryProcessor>) -> F,
    ) -> Option<tokio::task::JoinHandle<T>>
    where
        F: std::future::Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        self.spawn_with_node(i, |node| request(node.processor.clone()))
    }

    /// Moves node `i`'s clock by `micros`.
    pub fn jump_clock(&self, i: usize, micros: i64) {
        if let Some(clock) = &lock(&self.hosts.slots[i]).clock {
            clock.jump(micros);
        }
    }

    /// Starts (or restarts) host `i`'s software.
    async fn launch(&mut self, i: usize) {
        if std::mem::replace(&mut self.registered[i], true) {
            with_sim(move |sim| sim.bounce(addr(i))).await;
        } else {
            let hosts = self.hosts.clone();
            let seed = self.hosts.seed;
            with_sim(move |sim| {
                sim.host(addr(i), move || hosts.clone().run(i));
                for j in 0..i {
                    sim.set_link_latency(addr(i), addr(j), link_latency(seed, i, j));
                }
            })
            .await;
        }
    }

    /// Waits until node `i` serves (resuming its bootstrap if that failed).
    pub async fn await_serving(&mut self, i: usize) {
        let deadline = tokio::time::Instant::now() + START_LIMIT;
        loop {
            {
                let slot = lock(&self.hosts.slots[i]);
                if let Some(e) = &slot.failed {
                    panic!("node {i} did not start: {e}");
                }
                if slot.node.is_some() {
                    break;
                }
                drop(slot);
                self.poll_joined(i);
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "node {i} did not start within {START_LIMIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.running[i] = true;
    }

    /// Restarts node `i` from its directories after a crash; returns once it serves.
    pub async fn restart(&mut self, i: usize) {
        self.launch(i).await;
        self.await_serving(i).await;
    }

    /// Kills node `i` as `kill -9` would: its host's tasks stop, its connections reset, and its
    /// storage is dropped without a flush once the requests still holding it have ended.
    pub async fn crash(&mut self, i: usize) {
        let node = {
            let mut slot = lock(&self.hosts.slots[i]);
            let (node, opened) = (slot.node.take(), slot.opened.take());
            *slot = Slot::default();
            node.or(opened)
        };
        self.running[i] = false;
        with_sim(move |sim| sim.crash(addr(i))).await;
        let Some(node) = node else { return };
        let storage: Weak<Storage> = Arc::downgrade(&node.storage);
        let coordinator = Arc::downgrade(&node.coordinator);
        let processor = Arc::downgrade(&node.processor);
        // The process is gone: what its memory held goes too (the verb handlers hold what holds
        // messaging, a cycle a real process's exit ends).
        if let Some(messaging) = &node.cluster.messaging {
            messaging.shutdown().await;
        }
        drop(node);
        let deadline = tokio::time::Instant::now() + RELEASE_LIMIT;
        while storage.strong_count() > 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "node {i}: its storage is still in use {RELEASE_LIMIT:?} after the crash \
                 (held {} times; the coordinator {} times, the query processor {} times)",
                storage.strong_count(),
                coordinator.strong_count(),
                processor.strong_count()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// The latency of every message between nodes `i` and `j` (i > j): 1 to 3 ms, drawn from the
/// seed per link. Fixed per link, so that two messages sent at one instant on different links
/// in another order (which tokio's unseeded `select!`s may do, see docs/simulation.md) do not
/// swap the latencies turmoil draws for them, which moved later answers by a step.
fn link_latency(seed: u64, i: usize, j: usize) -> Duration {
    let mut rng = net::SimRng::new(seed ^ 0x11_4b5e ^ (i * 64 + j) as u64);
    Duration::from_millis(1 + rng.below(3))
}

/// Node `i`'s configuration, as cassandra.yaml would say it: the first `seeds` nodes the seeds, its tokens
/// fixed, short request timeouts, the commit-log sync of [`commitlog_sync`].
fn config(
    i: usize,
    dirs: &[PathBuf],
    tokens: &[i64],
    seeds: usize,
    extra_yaml: &str,
) -> config::Config {
    let dir = &dirs[i];
    let path = |sub: &str| dir.join(sub).display().to_string();
    let seeds: Vec<String> = (0..seeds).map(|n| addr(n).to_string()).collect();
    let tokens: Vec<String> = tokens.iter().map(i64::to_string).collect();
    let yaml = format!(
        "cluster_name: Sim\nnum_tokens: {}\ninitial_token: {}\n\
         listen_address: {a}\nrpc_address: {a}\n\
         seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    \
         parameters:\n      - seeds: \"{}\"\n\
         data_file_directories:\n  - {}\ncommitlog_directory: {}\nhints_directory: {}\n\
         saved_caches_directory: {}\nmetadata_directory: {}\n\
         commitlog_sync: {}\ncommitlog_segment_size: 1MiB\n\
         write_request_timeout: 2000ms\nread_request_timeout: 2000ms\n\
         range_request_timeout: 4000ms\ncounter_write_request_timeout: 2000ms\n\
         hints_flush_period: 500ms\nkey_cache_size: 0MiB\nfile_cache_size: 0MiB\n{extra_yaml}",
        tokens.len(),
        tokens.join(","),
        seeds.join(","),
        path("data"),
        path("commitlog"),
        path("hints"),
        path("saved_caches"),
        path("metadata"),
        commitlog_sync(),
        a = addr(i),
    );
    let loaded = config::load_str(&yaml, Path::new("/")).expect("the configuration loads");
    loaded
        .config
        .validate()
        .expect("the configuration is valid");
    loaded.config
}

/// `periodic` beside in-memory tables: an appended record is with the OS before the write is
/// answered, so a crash of the node (not of its machine) loses none, and no write waits on the
/// commit log's thread, whose fsyncs take real time while simulated time runs on. `batch`
/// (the write answered after the fsync) with the LSM engine.
fn commitlog_sync() -> &'static str {
    match in_memory_tables() {
        true => "periodic",
        false => "batch",
    }
}

/// Tables in memtables with no storage threads (the default), or on the LSM engine with its
/// flush and compaction threads (`HELENUS_SIM_ENGINE=lsm`).
fn in_memory_tables() -> bool {
    std::env::var("HELENUS_SIM_ENGINE").map_or(true, |engine| engine != "lsm")
}

/// Messaging's timings: a dead link is noticed within a second and redialled quickly.
fn tuning() -> Tuning {
    Tuning {
        keepalive: Duration::from_millis(200),
        dead_after: Duration::from_secs(1),
        reconnect_min: Duration::from_millis(20),
        reconnect_max: Duration::from_millis(200),
        ..Tuning::default()
    }
}
