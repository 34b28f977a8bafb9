//! One seed's run: the cluster, the schema, the schedule of requests and faults drawn from the
//! seed, the healing, and the checks.
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use net::SimRng;
use query::QueryProcessor;
use tokio::time::Instant;
use types::request::QueryOptions;
use types::result::QueryResult;
use types::Consistency;

use crate::cluster::{addr, Cluster};
use crate::history::{self, History};

/// Partitions written and read.
pub const KEYS: u64 = 6;
/// The longest a clock jumps, either way.
const MAX_JUMP_MICROS: u64 = 10_000_000;
/// How long the end of a run waits for hints to be delivered.
const HINTS_LIMIT: Duration = Duration::from_secs(120);
/// Runs of a decommission that keeps failing before the run gives up on it.
const DECOMMISSION_ATTEMPTS: usize = 5;
/// Attempts of each final read (a node may still be catching up with the others).
const FINAL_ATTEMPTS: u32 = 20;

pub struct Settings {
    /// The nodes that start the cluster.
    pub nodes: usize,
    pub steps: u64,
    /// Nodes that bootstrap into the cluster while the workload runs, one after another.
    pub joins: usize,
    /// Whether a node decommissions once they have joined.
    pub decommission: bool,
}

impl Settings {
    /// `nodes` nodes from the start, no topology change.
    pub fn fixed(nodes: usize, steps: u64) -> Settings {
        Settings {
            nodes,
            steps,
            joins: 0,
            decommission: false,
        }
    }
}

/// A run that passed its checks.
#[derive(Debug)]
pub struct Finished {
    /// How many requests ended how, and the faults made.
    pub summary: String,
    /// Every event of the schedule, in order.
    pub events: Vec<String>,
    /// Every request in the order sent, and its answer.
    pub answers: Vec<String>,
    /// When each request was sent and answered (the order answers came in).
    pub ticks: Vec<(history::Tick, Option<history::Tick>)>,
}

/// Runs `seed`: what happened, or why a check failed (naming the seed and the last events).
pub fn run(seed: u64, settings: &Settings) -> Result<Finished, String> {
    let sim = simulation(seed);
    let outcome: Rc<RefCell<Option<Result<Finished, String>>>> = Rc::default();
    let out = outcome.clone();
    let topology = Topology {
        joins: settings.joins,
        decommission: settings.decommission,
        ..Topology::default()
    };
    let (nodes, steps) = (settings.nodes, settings.steps);
    net::drive_client(sim, "clients", async move {
        let run = Run::start(seed, nodes, steps, topology).await;
        let result = run.play().await;
        *out.borrow_mut() = Some(result);
    });
    let result = outcome.borrow_mut().take();
    result.unwrap_or_else(|| Err(format!("seed {seed}: the run did not finish")))
}

/// The simulated network of `seed`: 1-3 ms between hosts, a day of simulated time at most.
pub fn simulation(seed: u64) -> turmoil::Sim<'static> {
    turmoil::Builder::new()
        .simulation_duration(Duration::from_secs(24 * 60 * 60))
        .min_message_latency(Duration::from_millis(1))
        .max_message_latency(Duration::from_millis(3))
        .tcp_capacity(4096)
        .rng_seed(seed)
        .build()
}

/// The topology changes of a run and how far they are.
#[derive(Default)]
struct Topology {
    joins: usize,
    decommission: bool,
    /// Nodes started and not serving yet (not crashed).
    joining: Vec<usize>,
    /// The node decommissioning, and the task doing it.
    leaving: Option<(usize, tokio::task::JoinHandle<Result<(), String>>)>,
    /// Whether the decommission has begun.
    decommissioned: bool,
    /// The step at which the joining node is killed, if the seed says so.
    kill_at: Option<u64>,
    /// The node killed while joining, until restarted.
    killed_joining: Option<usize>,
}

struct Run {
    seed: u64,
    topology: Topology,
    steps: u64,
    rng: SimRng,
    cluster: Cluster,
    history: History,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Links cut, as (from, to) pairs of nodes.
    cuts: Vec<(usize, usize)>,
    counts: BTreeMap<String, usize>,
    log: Vec<String>,
}

impl Run {
    async fn start(seed: u64, nodes: usize, steps: u64, topology: Topology) -> Run {
        if std::env::var_os("HELENUS_SIM_VERBOSE").is_some() {
            eprintln!("seed {seed}: starting {nodes} nodes");
        }
        let cluster = Cluster::start(nodes + topology.joins, nodes, seed).await;
        let run = Run {
            seed,
            topology,
            steps,
            rng: SimRng::new(seed),
            cluster,
            history: History::default(),
            tasks: Vec::new(),
            cuts: Vec::new(),
            counts: BTreeMap::new(),
            log: Vec::new(),
        };
        run.create_schema().await;
        run
    }

    /// The schedule, the healing and the checks.
    async fn play(mut self) -> Result<Finished, String> {
        for number in 0..self.steps {
            self.step(number).await;
        }
        self.heal().await;
        let checked = self.history.check_reads().map_err(|e| self.failure(&e));
        checked?;
        self.final_reads().await.map_err(|e| self.failure(&e))?;
        self.stop_all().await;
        Ok(Finished {
            summary: format!("{:?}", self.counts),
            events: std::mem::take(&mut self.log),
            answers: self.history.answers(),
            ticks: self.history.ticks(),
        })
    }

    /// Ends every node as a kill would, so that its storage (and the commit log's thread) is
    /// dropped before the next seed starts: a long run of random seeds otherwise keeps every
    /// finished seed's nodes alive, their threads with them.
    async fn stop_all(&mut self) {
        let running: Vec<usize> = self.cluster.running().into_iter().collect();
        for i in running {
            self.cluster.crash(i).await;
        }
    }

    async fn create_schema(&self) {
        create_schema(&self.cluster, self.seed, &[]).await;
    }

    async fn step(&mut self, number: u64) {
        self.change_topology(number).await;
        match self.rng.below(100) {
            0..=44 => self.spawn_write(),
            45..=74 => self.spawn_read(Consistency::Quorum),
            75..=79 => self.spawn_read(Consistency::One),
            80..=81 => self.crash().await,
            82..=84 => self.restart().await,
            85..=86 => self.isolate(),
            87..=88 => self.cut_one_way(),
            89..=93 => self.repair_links(),
            94..=95 => self.jump_clock(),
            _ => {
                let pause = self.rng.below(500);
                tokio::time::sleep(Duration::from_millis(pause)).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(self.rng.below(40))).await;
    }

    fn note(&mut self, event: String) {
        if std::env::var_os("HELENUS_SIM_VERBOSE").is_some() {
            eprintln!("seed {} {:?}: {event}", self.seed, Instant::now());
        }
        self.log.push(event);
    }

    fn count(&mut self, what: &str) {
        *self.counts.entry(what.to_string()).or_default() += 1;
    }

    /// A failed check's message: the seed, how to replay it, the last events.
    fn failure(&self, what: &str) -> String {
        let tail = self.log.len().saturating_sub(40);
        format!(
            "seed {}: {what}\nreplay: HELENUS_SIM_SEED={} HELENUS_SIM_NODES={} \
             HELENUS_SIM_STEPS={} cargo test -p helenus --test cluster_sim fixed_seeds\n\
             last events:\n{}",
            self.seed,
            self.seed,
            self.cluster.len(),
            self.steps,
            self.log[tail..].join("\n")
        )
    }

    fn pick(&mut self, among: &[usize]) -> Option<usize> {
        (!among.is_empty()).then(|| among[self.rng.below(among.len() as u64) as usize])
    }

    fn spawn_write(&mut self) {
        let Some(node) = self.pick(&self.cluster.running()) else {
            return;
        };
        let key = self.rng.below(KEYS) as u32;
        let cl = [
            Consistency::Quorum,
            Consistency::Quorum,
            Consistency::One,
            Consistency::All,
        ][self.rng.below(4) as usize];
        let id = self.history.issue(key, cl, node, true);
        self.note(format!(
            "op {id}: write k{key} c{id} at {cl:?} via node {node}"
        ));
        let history = self.history.clone();
        let task = self.cluster.spawn_on(node, move |processor| async move {
            let written = write(&processor, key, id, cl).await;
            history.finish(id, written.map(|()| Vec::new()));
        });
        self.tasks.extend(task);
    }

    fn spawn_read(&mut self, cl: Consistency) {
        let Some(node) = self.pick(&self.cluster.running()) else {
            return;
        };
        let key = self.rng.below(KEYS) as u32;
        let id = self.history.issue(key, cl, node, false);
        self.note(format!("op {id}: read k{key} at {cl:?} via node {node}"));
        let history = self.history.clone();
        let task = self.cluster.spawn_on(node, move |processor| async move {
            let rows = read(&processor, key, cl).await;
            history.finish(id, rows);
        });
        self.tasks.extend(task);
    }

    /// Kills a running node (not one leaving the ring), keeping a majority up.
    async fn crash(&mut self) {
        let leaving = self.topology.leaving.as_ref().map(|(node, _)| *node);
        let running = self.cluster.running();
        let majority = self.cluster.members().len() / 2 + 1;
        if running.len() <= majority {
            return;
        }
        let running: Vec<usize> = running
            .into_iter()
            .filter(|n| Some(*n) != leaving)
            .collect();
        let Some(node) = self.pick(&running) else {
            return;
        };
        self.note(format!("crash node {node}"));
        self.count("crash");
        self.cluster.crash(node).await;
    }

    async fn restart(&mut self) {
        let joining = &self.topology.joining;
        let down: Vec<usize> = self.cluster.down();
        let down: Vec<usize> = down.into_iter().filter(|i| !joining.contains(i)).collect();
        let Some(node) = self.pick(&down) else {
            return;
        };
        self.note(format!("restart node {node}"));
        self.count("restart");
        self.restart_node(node).await;
    }

    /// Restarts crashed node `node`; one killed while joining resumes its join meanwhile (it
    /// may wait for a source that is down, which only a later step restarts).
    async fn restart_node(&mut self, node: usize) {
        if self.topology.killed_joining == Some(node) {
            self.topology.killed_joining = None;
            self.cluster.begin_join(node).await;
            self.topology.joining.push(node);
            return;
        }
        self.cluster.restart(node).await;
        self.note(format!("node {node} serves again"));
    }

    /// Cuts a node off from every other node, both ways.
    fn isolate(&mut self) {
        let all = self.cluster.members();
        let Some(node) = self.pick(&all) else { return };
        self.note(format!("isolate node {node}"));
        self.count("isolate");
        for other in all.into_iter().filter(|o| *o != node) {
            turmoil::partition(addr(node), addr(other));
            self.cuts.push((node, other));
            self.cuts.push((other, node));
        }
    }

    /// Cuts the link from one node to another, one way only.
    fn cut_one_way(&mut self) {
        let members = self.cluster.members();
        let n = members.len();
        let from = self.rng.below(n as u64) as usize;
        let to = (from + 1 + self.rng.below(n as u64 - 1) as usize) % n;
        let (from, to) = (members[from], members[to]);
        self.note(format!("cut node {from} -> node {to}"));
        self.count("one-way cut");
        turmoil::partition_oneway(addr(from), addr(to));
        self.cuts.push((from, to));
    }

    fn repair_links(&mut self) {
        if self.cuts.is_empty() {
            return;
        }
        self.note("repair every link".to_string());
        for (from, to) in std::mem::take(&mut self.cuts) {
            turmoil::repair_oneway(addr(from), addr(to));
        }
    }

    /// Moves a running node's clock by up to 10 s either way.
    fn jump_clock(&mut self) {
        let Some(node) = self.pick(&self.cluster.running()) else {
            return;
        };
        let micros = self.rng.below(2 * MAX_JUMP_MICROS) as i64 - MAX_JUMP_MICROS as i64;
        self.note(format!("jump node {node}'s clock by {micros} us"));
        self.count("clock jump");
        self.cluster.jump_clock(node, micros);
    }

    /// Ends the faults: links repaired, killed nodes back, requests finished, hints delivered.
    async fn heal(&mut self) {
        self.note("heal".to_string());
        self.repair_links();
        for node in self.cluster.down() {
            if !self.topology.joining.contains(&node) {
                self.note(format!("restart node {node}"));
                self.restart_node(node).await;
            }
        }
        self.finish_topology().await;
        for task in std::mem::take(&mut self.tasks) {
            let _ = task.await;
        }
        self.await_hints().await;
        for (kind, count) in self.history.outcomes() {
            self.counts.insert(kind, count);
        }
    }

    async fn await_hints(&mut self) {
        let deadline = Instant::now() + HINTS_LIMIT;
        loop {
            let pending = self.pending_hints();
            if pending.is_empty() {
                return;
            }
            if Instant::now() >= deadline {
                let ids: Vec<_> = (0..self.cluster.len())
                    .filter_map(|i| self.cluster.node(i))
                    .map(|n| n.processor.node().host_id)
                    .collect();
                self.note(format!(
                    "hints still pending after {HINTS_LIMIT:?}: {pending:?}, host ids {ids:?}"
                ));
                self.count("hints still pending at the end");
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// (node, the host its hints are for, whether it knows that host's address, files).
    fn pending_hints(&self) -> Vec<(usize, uuid::Uuid, bool, usize)> {
        let mut pending = Vec::new();
        for i in 0..self.cluster.len() {
            let Some(hints) = self.cluster.node(i).and_then(|n| n.hints.clone()) else {
                continue;
            };
            for host in hints.pending() {
                pending.push((i, host.host_id, host.address.is_some(), host.files));
            }
        }
        pending
    }

    /// Every write acknowledged at QUORUM or ALL is returned by a QUORUM read through every node.
    async fn final_reads(&self) -> Result<(), String> {
        final_reads(&self.cluster, &self.history, || self.links()).await
    }
}

/// Bootstrap and decommission in the schedule.
impl Run {
    /// At fixed fractions of the run: a node starts bootstrapping (one after another), a
    /// joining node may be killed a few steps in (restarted later, it resumes its join), and
    /// once all have joined a node decommissions.
    async fn change_topology(&mut self, number: u64) {
        self.poll_topology().await;
        let fifth = (self.steps / 5).max(1);
        let next = self.cluster.unstarted().first().copied();
        if let Some(node) = next.filter(|_| number > 0 && number.is_multiple_of(fifth)) {
            if self.topology.joining.is_empty() {
                self.note(format!("node {node} starts and bootstraps"));
                self.count("bootstrap");
                self.cluster.begin_join(node).await;
                self.topology.joining.push(node);
                if self.rng.below(2) == 0 {
                    self.topology.kill_at = Some(number + 1 + self.rng.below(3));
                }
                return;
            }
        }
        let kill_joining = self.topology.joining.first().copied();
        let kill_now = self.topology.kill_at == Some(number);
        if let Some(node) = kill_joining.filter(|_| kill_now) {
            self.note(format!("crash joining node {node}"));
            self.count("crash while joining");
            self.topology.joining.retain(|n| *n != node);
            self.topology.killed_joining = Some(node);
            self.cluster.crash(node).await;
            return;
        }
        let settled = self.cluster.unstarted().is_empty()
            && self.cluster.down().is_empty()
            && self.topology.joining.is_empty();
        let due = number >= 3 * fifth && self.topology.decommission;
        if due && settled && !self.topology.decommissioned && self.cluster.members().len() > 3 {
            self.begin_decommission();
        }
    }

    fn begin_decommission(&mut self) {
        let Some(node) = self.pick(&self.cluster.running()) else {
            return;
        };
        let Some(task) = self.cluster.decommission(node) else {
            return;
        };
        self.note(format!("node {node} decommissions"));
        self.count("decommission");
        self.topology.decommissioned = true;
        self.topology.leaving = Some((node, task));
    }

    /// Notices joins and a decommission that ended.
    async fn poll_topology(&mut self) {
        for node in self.topology.joining.clone() {
            if self.cluster.poll_joined(node) {
                self.note(format!("node {node} joined"));
                self.topology.joining.retain(|n| *n != node);
            }
        }
        let ended = self
            .topology
            .leaving
            .as_ref()
            .is_some_and(|(_, t)| t.is_finished());
        if ended {
            if let Some((node, task)) = self.topology.leaving.take() {
                self.decommission_ended(node, task.await).await;
            }
        }
    }

    /// A decommission that failed (streaming under faults) is run again, as an operator would.
    async fn decommission_ended(
        &mut self,
        node: usize,
        outcome: Result<Result<(), String>, tokio::task::JoinError>,
    ) {
        let error = match outcome {
            Ok(Ok(())) => {
                self.note(format!("node {node} left the ring"));
                self.cluster.mark_left(node);
                self.count("left the ring");
                return;
            }
            Ok(Err(e)) => e,
            Err(e) => e.to_string(),
        };
        self.note(format!("node {node}'s decommission failed: {error}; again"));
        self.count("decommission failed");
        self.topology.leaving = self.cluster.decommission(node).map(|task| (node, task));
    }

    /// After the faults: the joining nodes serve, the decommission is over.
    async fn finish_topology(&mut self) {
        for node in std::mem::take(&mut self.topology.joining) {
            self.cluster.await_serving(node).await;
            self.note(format!("node {node} joined"));
        }
        for _ in 0..DECOMMISSION_ATTEMPTS {
            let Some((node, task)) = self.topology.leaving.take() else {
                return;
            };
            self.decommission_ended(node, task.await).await;
        }
        if let Some((node, _)) = &self.topology.leaving {
            let node = *node;
            self.note(format!("node {node}'s decommission never finished"));
            self.count("decommission unfinished");
        }
    }
}

impl Run {
    /// What each node's messaging and gossip hold of the others (for a failure's message).
    fn links(&self) -> String {
        let mut lines = Vec::new();
        for i in 0..self.cluster.len() {
            let Some(node) = self.cluster.node(i) else {
                continue;
            };
            if let Some(gossip) = node.cluster.membership() {
                let alive: Vec<String> = gossip
                    .endpoints()
                    .iter()
                    .map(|view| format!("{}:{}", view.addr.ip(), view.alive))
                    .collect();
                lines.push(format!("node {i} gossip: {}", alive.join(" ")));
            }
            if let Some(messaging) = &node.cluster.messaging {
                let stats = messaging.stats();
                for verb in [net::Verb::Mutation, net::Verb::Read, net::Verb::Hint] {
                    let v = stats.verb(verb);
                    lines.push(format!(
                        "node {i} {verb:?}: completed {} dropped {} timeouts {} failures {}",
                        v.completed, v.dropped, v.timeouts, v.failures
                    ));
                }
                for link in stats.links {
                    lines.push(format!(
                        "node {i} -> {} {:?}: connected {} inbound {} pending {} sent {} \
                         reconnects {} expired {}",
                        link.peer.ip(),
                        link.class,
                        link.connected,
                        link.inbound_connections,
                        link.pending_messages,
                        link.sent_messages,
                        link.reconnects,
                        link.expired
                    ));
                }
            }
        }
        lines.join("\n")
    }
}

/// Creates `sim.cells` (after the tables of `more`, in keyspace `sim`) through node 0 and
/// waits until every running node reads it.
pub async fn create_schema(cluster: &Cluster, seed: u64, more: &[&'static str]) {
    let keyspace = "CREATE KEYSPACE IF NOT EXISTS sim WITH replication = \
                    {'class': 'SimpleStrategy', 'replication_factor': 3}";
    let cells = "CREATE TABLE IF NOT EXISTS sim.cells (k int, c int, v int, PRIMARY KEY (k, c))";
    let ddl = std::iter::once(keyspace)
        .chain(more.iter().copied())
        .chain(std::iter::once(cells));
    for statement in ddl {
        // A loaded run may answer that the change is committed but not yet applied here.
        let mut attempts = 0;
        while let Err(e) = on(cluster, 0, move |qp| async move {
            let options = QueryOptions::default();
            qp.query(None, statement, options)
                .await
                .map_err(|e| e.to_string())
        })
        .await
        {
            attempts += 1;
            assert!(attempts < 10, "seed {seed}: {statement}: {e}");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
    for i in cluster.running() {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let read = on(cluster, i, |qp| async move {
                read(&qp, 0, Consistency::One).await
            });
            let Err(e) = read.await else { break };
            assert!(
                Instant::now() < deadline,
                "seed {seed}: node {i} cannot read the table: {e}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Runs `request` on running node `i`'s runtime and waits for it; an error if the node stops
/// meanwhile.
pub async fn on<T, F>(
    cluster: &Cluster,
    i: usize,
    request: impl FnOnce(Arc<QueryProcessor>) -> F,
) -> Result<T, String>
where
    F: std::future::Future<Output = Result<T, String>> + Send + 'static,
    T: Send + 'static,
{
    let task = cluster
        .spawn_on(i, request)
        .ok_or("the node does not run")?;
    task.await
        .map_err(|e| format!("the request ended with its node: {e}"))?
}

/// Every write acknowledged at QUORUM or ALL is returned by a QUORUM read through every
/// member; `context` is added to the message of a read that keeps failing.
pub async fn final_reads(
    cluster: &Cluster,
    history: &History,
    context: impl Fn() -> String,
) -> Result<(), String> {
    for node in cluster.members() {
        for key in 0..KEYS as u32 {
            let rows = on(cluster, node, move |qp| async move {
                final_read(&qp, key).await
            });
            let rows = rows.await.map_err(|e| {
                let context = context();
                format!("final read of k{key} via node {node}: {e}\n{context}")
            })?;
            history.check_final(key, node, &rows)?;
        }
    }
    Ok(())
}

/// A QUORUM read of partition `key`, tried again for up to 10 s while it fails.
async fn final_read(processor: &QueryProcessor, key: u32) -> Result<Vec<u32>, String> {
    let mut last = String::new();
    for _ in 0..FINAL_ATTEMPTS {
        match read(processor, key, Consistency::Quorum).await {
            Ok(rows) => return Ok(rows),
            Err(e) => last = e,
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Err(last)
}

pub async fn write(
    processor: &QueryProcessor,
    key: u32,
    id: u32,
    cl: Consistency,
) -> Result<(), String> {
    let text = format!("INSERT INTO sim.cells (k, c, v) VALUES ({key}, {id}, {id})");
    let options = QueryOptions {
        consistency: cl,
        ..QueryOptions::default()
    };
    let outcome = processor.query(None, &text, options).await;
    outcome.map(|_| ()).map_err(|e| e.to_string())
}

/// The clusterings of partition `key`.
pub async fn read(
    processor: &QueryProcessor,
    key: u32,
    cl: Consistency,
) -> Result<Vec<u32>, String> {
    let text = format!("SELECT c FROM sim.cells WHERE k = {key}");
    let options = QueryOptions {
        consistency: cl,
        ..QueryOptions::default()
    };
    let outcome = processor.query(None, &text, options).await;
    match outcome.map_err(|e| e.to_string())?.result {
        QueryResult::Rows(rows) => clusterings(&rows.content, rows.row_count),
        other => Err(format!("a SELECT answered {other:?}")),
    }
}

/// The `c` of each row of a one-column result: `[int length][4 bytes]` per row.
fn clusterings(content: &[u8], count: i32) -> Result<Vec<u32>, String> {
    let mut values = Vec::new();
    let mut rest = content;
    for _ in 0..count {
        let (len, tail) = rest.split_at_checked(4).ok_or("a short row")?;
        if len != [0, 0, 0, 4] {
            return Err(format!("a cell of length {len:?}"));
        }
        let (value, tail) = tail.split_at_checked(4).ok_or("a short cell")?;
        values.push(u32::from_be_bytes(
            value.try_into().map_err(|_| "a short cell")?,
        ));
        rest = tail;
    }
    Ok(values)
}
