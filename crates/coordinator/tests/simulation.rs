//! The storage proxy under randomized faults, in simulated time: 3 or 5 nodes (turmoil hosts
//! with real storage, internode messaging over turmoil's network, a coordinator per node on a fixed ring of
//! RF 3, hinted handoff) take writes at ONE, QUORUM and ALL and reads at ONE and QUORUM from
//! random coordinators while messages are lost and delayed, nodes are cut off, crash (their
//! storage reopened from disk) and return, and the failure detector lags.
//!
//! Checked:
//! - a QUORUM read returns a value that was written, never one older than the last write
//!   acknowledged at QUORUM or ALL before it started, nor older than what an earlier QUORUM
//!   read returned (blocking read repair makes quorum reads monotonic);
//! - every failure is Unavailable, WriteTimeout, WriteFailure, ReadTimeout or ReadFailure with
//!   fields that agree (fewer responses than the level needs), and no request outlasts its
//!   timeouts;
//! - once the faults heal and hints are delivered, every replica alone (a read at ONE from
//!   itself) holds every acknowledged write whose coordinator stayed up to hint it, and QUORUM
//!   and ALL reads from every node agree and hold every write acknowledged at QUORUM or ALL.
//!
//! The default suite runs fixed seeds; `HELENUS_SIM_SEEDS=N` runs seeds 1..=N and
//! `HELENUS_SIM_STEPS` sets the steps per seed (default 120).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use common::ops::*;
use common::*;
use coordinator::{ReadPolicy, SpeculativeRetry};
use net::SimRng;
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use types::{Consistency, CqlError};

const KEYS: u64 = 12;
/// Time a request may take beyond its timeouts (scheduling, the last message's way back).
const SLACK: Duration = Duration::from_millis(100);

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// The seeds to run: `HELENUS_SIM_SEEDS=N` for 1..=N, `HELENUS_SIM_SEEDS=3,17` for those listed.
fn seeds() -> Vec<u64> {
    let Ok(text) = std::env::var("HELENUS_SIM_SEEDS") else {
        return vec![1, 2, 3];
    };
    if text.contains(',') {
        return text
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect();
    }
    (1..=text.trim().parse::<u64>().unwrap_or(3)).collect()
}

#[test]
fn acknowledged_writes_survive_loss_delay_partitions_and_crashes() {
    let steps = env_number("HELENUS_SIM_STEPS", 120);
    let seen: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    for seed in seeds() {
        let seen = seen.clone();
        simulate(seed, async move {
            for (kind, count) in run(seed, steps).await {
                *seen.lock().entry(kind).or_default() += count;
            }
        });
    }
    let seen = seen.lock();
    // The runs met what the checks are about (when they are long enough to).
    if steps >= 100 {
        for kind in [
            "write Quorum ok",
            "read Quorum ok",
            "write Quorum WriteTimeout",
            "crash",
        ] {
            assert!(seen.contains_key(kind), "no {kind:?} in {seen:?}");
        }
    }
}

/// One request and what came of it.
#[derive(Clone, Debug)]
struct Op {
    id: usize,
    key: u64,
    cl: Consistency,
    coordinator: usize,
    /// The write's timestamp (and value); none for a read.
    write: Option<i64>,
    issued: Instant,
    done: Option<(Instant, Result<Option<i64>, CqlError>)>,
}

impl Op {
    fn acked_at(&self) -> Option<Instant> {
        match &self.done {
            Some((at, Ok(_))) => Some(*at),
            _ => None,
        }
    }

    /// The value a successful read returned.
    fn read_value(&self) -> Option<Option<i64>> {
        match (&self.write, &self.done) {
            (None, Some((_, Ok(value)))) => Some(*value),
            _ => None,
        }
    }

    fn strong(&self) -> bool {
        matches!(self.cl, Consistency::Quorum | Consistency::All)
    }
}

type History = Arc<Mutex<Vec<Op>>>;

/// A failure-detector change due at some time: `observer` learns the truth about `peer`.
struct Detection {
    at: Instant,
    observer: usize,
    peer: usize,
}

struct Sim {
    seed: u64,
    rng: SimRng,
    cluster: Cluster,
    history: History,
    /// Requests under way, by coordinator.
    tasks: Vec<(usize, JoinHandle<()>)>,
    next_ts: i64,
    isolated: Option<usize>,
    detections: Vec<Detection>,
    /// When each node crashed.
    crashes: Vec<(usize, Instant)>,
    log: Vec<String>,
}

/// One seed's run, checked; how many requests ended how (and how many crashes).
async fn run(seed: u64, steps: u64) -> BTreeMap<String, usize> {
    let mut rng = SimRng::new(seed);
    let n = if rng.below(3) == 0 { 5 } else { 3 };
    let cluster = Cluster::start(n, seed).await;
    let mut sim = Sim {
        seed,
        rng,
        cluster,
        history: History::default(),
        tasks: Vec::new(),
        next_ts: 1,
        isolated: None,
        detections: Vec::new(),
        crashes: Vec::new(),
        log: Vec::new(),
    };
    for _ in 0..steps {
        sim.step().await;
    }
    sim.heal().await;
    sim.check_history();
    sim.check_replicas_alone().await;
    sim.check_final_reads().await;
    sim.summarize(n)
}

impl Sim {
    async fn step(&mut self) {
        self.detect_due();
        match self.rng.below(100) {
            0..=39 => self.spawn_write(),
            40..=64 => self.spawn_read(Consistency::Quorum),
            65..=69 => self.spawn_read(Consistency::One),
            70..=74 => self.crash().await,
            75..=79 => self.restart().await,
            80..=83 => self.isolate(),
            84..=86 => self.end_partition().await,
            87..=89 => self.slow_node().await,
            90..=92 => self.set_loss().await,
            _ => {
                let pause = self.rng.below(600);
                self.note(format!("pause {pause} ms"));
                tokio::time::sleep(Duration::from_millis(pause)).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(self.rng.below(40))).await;
    }

    fn note(&mut self, event: String) {
        if std::env::var_os("HELENUS_SIM_VERBOSE").is_some() {
            eprintln!(
                "seed {} {:?}: {event}",
                self.seed,
                tokio::time::Instant::now()
            );
        }
        self.log.push(event);
    }

    /// Fails the run, naming the seed and the last events.
    fn fail(&self, what: String) -> ! {
        let tail = self.log.len().saturating_sub(40);
        panic!(
            "seed {}: {what}\nlast events:\n{}",
            self.seed,
            self.log[tail..].join("\n")
        );
    }

    fn pick_running(&mut self) -> Option<usize> {
        let running = self.cluster.running();
        if running.is_empty() {
            return None;
        }
        Some(running[self.rng.below(running.len() as u64) as usize])
    }

    fn spawn_write(&mut self) {
        let Some(node) = self.pick_running() else {
            return;
        };
        let key = self.rng.below(KEYS);
        let cl = [
            Consistency::Quorum,
            Consistency::Quorum,
            Consistency::One,
            Consistency::All,
        ][self.rng.below(4) as usize];
        let ts = self.next_ts;
        self.next_ts += 1;
        let id = self.record(key, cl, node, Some(ts));
        self.note(format!(
            "op {id}: write k{key}={ts} at {cl:?} via node {node}"
        ));
        let coordinator = self.cluster.node(node).coordinator.clone();
        let history = self.history.clone();
        let task = tokio::spawn(async move {
            let written = coordinator
                .write(KEYSPACE, vec![mutation(key, ts)], cl, None)
                .await;
            finish(&history, id, written.map(|()| Some(ts)));
        });
        self.tasks.push((node, task));
    }

    fn spawn_read(&mut self, cl: Consistency) {
        let Some(node) = self.pick_running() else {
            return;
        };
        let key = self.rng.below(KEYS);
        let policy = self.read_policy();
        let id = self.record(key, cl, node, None);
        self.note(format!("op {id}: read k{key} at {cl:?} via node {node}"));
        let coordinator = self.cluster.node(node).coordinator.clone();
        let history = self.history.clone();
        let task = tokio::spawn(async move {
            let read = read(&coordinator, key, cl, &policy).await;
            finish(&history, id, read);
        });
        self.tasks.push((node, task));
    }

    fn read_policy(&mut self) -> ReadPolicy {
        let speculative_retry = match self.rng.below(3) {
            0 => SpeculativeRetry::default(),
            1 => SpeculativeRetry::Always,
            _ => SpeculativeRetry::Fixed(Duration::from_millis(30)),
        };
        ReadPolicy {
            speculative_retry,
            read_repair: true,
        }
    }

    fn record(
        &mut self,
        key: u64,
        cl: Consistency,
        coordinator: usize,
        write: Option<i64>,
    ) -> usize {
        let mut history = self.history.lock();
        let id = history.len();
        history.push(Op {
            id,
            key,
            cl,
            coordinator,
            write,
            issued: Instant::now(),
            done: None,
        });
        id
    }

    /// Nodes down or cut off: at most a minority of the cluster at a time.
    fn faulty(&self) -> usize {
        let down = self.cluster.len() - self.cluster.running().len();
        down + usize::from(self.isolated.is_some())
    }

    async fn crash(&mut self) {
        if self.faulty() >= (self.cluster.len() - 1) / 2 {
            return;
        }
        let Some(node) = self.pick_running() else {
            return;
        };
        if self.isolated == Some(node) {
            return;
        }
        self.note(format!("crash node {node}"));
        for (_, task) in self.tasks.iter().filter(|(n, _)| *n == node) {
            task.abort();
        }
        self.cluster.crash(node).await;
        self.crashes.push((node, Instant::now()));
        self.learn_about(node);
    }

    async fn restart(&mut self) {
        let down: Vec<usize> = (0..self.cluster.len())
            .filter(|i| self.cluster.nodes[*i].running.is_none())
            .collect();
        if down.is_empty() {
            return;
        }
        let node = down[self.rng.below(down.len() as u64) as usize];
        self.note(format!("restart node {node}"));
        self.cluster.boot(node).await;
        for peer in 0..self.cluster.len() {
            if peer != node {
                let truth = self.truth(node, peer);
                self.cluster.detect(node, peer, truth);
            }
        }
        self.learn_about(node);
    }

    fn isolate(&mut self) {
        if self.isolated.is_some() || self.faulty() >= (self.cluster.len() - 1) / 2 {
            return;
        }
        let Some(node) = self.pick_running() else {
            return;
        };
        self.note(format!("isolate node {node}"));
        self.cluster.isolate(node);
        self.isolated = Some(node);
        self.learn_about(node);
    }

    async fn end_partition(&mut self) {
        let Some(node) = self.isolated.take() else {
            return;
        };
        self.note(format!("heal partition of node {node}"));
        self.cluster.heal().await;
        self.learn_about(node);
    }

    async fn slow_node(&mut self) {
        let Some(node) = self.pick_running() else {
            return;
        };
        let extra = match self.rng.below(3) {
            0 => Duration::ZERO,
            _ => Duration::from_millis(self.rng.below(1500)),
        };
        self.note(format!("node {node} slow by {extra:?}"));
        self.cluster.set_slow(node, extra).await;
    }

    async fn set_loss(&mut self) {
        let rate = [0.0, 0.0005, 0.002, 0.01][self.rng.below(4) as usize];
        self.note(format!("loss rate {rate}"));
        self.cluster.set_loss(rate).await;
    }

    /// Whether `observer` can reach `peer` now.
    fn truth(&self, observer: usize, peer: usize) -> bool {
        let running = |i: usize| self.cluster.nodes[i].running.is_some();
        running(observer) && running(peer) && !self.cluster.is_cut(observer, peer)
    }

    /// The failure detector learns the truth about `node`, both ways, at once or (sometimes)
    /// after a while.
    fn learn_about(&mut self, node: usize) {
        for other in 0..self.cluster.len() {
            if other == node {
                continue;
            }
            for (observer, peer) in [(other, node), (node, other)] {
                let lag = match self.rng.below(10) {
                    0..=5 => Duration::ZERO,
                    _ => Duration::from_millis(50 + self.rng.below(1500)),
                };
                self.detections.push(Detection {
                    at: Instant::now() + lag,
                    observer,
                    peer,
                });
            }
        }
        self.detect_due();
    }

    fn detect_due(&mut self) {
        let now = Instant::now();
        let (due, later): (Vec<Detection>, Vec<Detection>) =
            self.detections.drain(..).partition(|d| d.at <= now);
        self.detections = later;
        for d in due {
            let truth = self.truth(d.observer, d.peer);
            self.cluster.detect(d.observer, d.peer, truth);
        }
    }

    /// Ends every fault, restarts every node, waits for the requests and for the hints.
    async fn heal(&mut self) {
        self.note("heal everything".into());
        self.cluster.heal().await;
        self.cluster.set_loss(0.0).await;
        self.isolated = None;
        for node in 0..self.cluster.len() {
            if self.cluster.nodes[node].running.is_none() {
                self.cluster.boot(node).await;
            }
        }
        self.detections.clear();
        for observer in 0..self.cluster.len() {
            for peer in 0..self.cluster.len() {
                if observer != peer {
                    self.cluster.detect(observer, peer, true);
                }
            }
        }
        for (_, task) in std::mem::take(&mut self.tasks) {
            let _ = task.await;
        }
        // A write answered early keeps sending until its timeout, then hints the silent.
        tokio::time::sleep(TIMEOUTS.write + SLACK).await;
        self.await_hints().await;
    }

    async fn await_hints(&self) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let pending: usize = self
                .cluster
                .running()
                .iter()
                .map(|i| self.cluster.node(*i).hints.pending().len())
                .sum();
            if pending == 0 {
                return;
            }
            if Instant::now() > deadline {
                self.fail(format!("{pending} hosts still have hints pending"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

fn finish(history: &History, id: usize, result: Result<Option<i64>, CqlError>) {
    history.lock()[id].done = Some((Instant::now(), result));
}

impl Sim {
    /// Every request's outcome, and every QUORUM read against what came before it.
    fn check_history(&self) {
        let history = self.history.lock().clone();
        let mut by_key: BTreeMap<u64, Vec<&Op>> = BTreeMap::new();
        for op in &history {
            self.check_outcome(op);
            by_key.entry(op.key).or_default().push(op);
        }
        for ops in by_key.values() {
            for read in ops.iter().filter(|op| op.cl == Consistency::Quorum) {
                if let Some(value) = read.read_value() {
                    self.check_quorum_read(read, value, ops);
                }
            }
        }
    }

    fn check_outcome(&self, op: &Op) {
        let Some((at, result)) = &op.done else {
            return; // its coordinator crashed
        };
        let took = *at - op.issued;
        let limit = match op.write {
            Some(_) => TIMEOUTS.write + SLACK,
            None => TIMEOUTS.read + TIMEOUTS.write + SLACK,
        };
        if took > limit {
            self.fail(format!("{op:?} took {took:?}"));
        }
        if let Err(error) = result {
            if let Err(why) = sensible(error, op) {
                self.fail(format!("{op:?}: {why}"));
            }
        }
    }

    fn check_quorum_read(&self, read: &Op, value: Option<i64>, ops: &[&Op]) {
        let got = value.unwrap_or(0);
        let ended = read.done.as_ref().map_or(read.issued, |(at, _)| *at);
        if let Some(v) = value {
            if !ops
                .iter()
                .any(|op| op.write == Some(v) && op.issued <= ended)
            {
                self.fail(format!(
                    "op {} read k{}={v}, never written",
                    read.id, read.key
                ));
            }
        }
        let earlier = |op: &&&Op| op.strong() && op.acked_at().is_some_and(|at| at < read.issued);
        let acked = ops.iter().filter(earlier).filter_map(|op| op.write).max();
        if got < acked.unwrap_or(0) {
            self.fail(format!(
                "op {} read k{}={got} at QUORUM after k{}={acked:?} was acknowledged at QUORUM",
                read.id, read.key, read.key
            ));
        }
        let seen = ops
            .iter()
            .filter(earlier)
            .filter_map(|op| op.read_value().flatten())
            .max();
        if got < seen.unwrap_or(0) {
            self.fail(format!(
                "op {} read k{}={got} at QUORUM after an earlier QUORUM read returned {seen:?}",
                read.id, read.key
            ));
        }
    }

    /// Each replica alone holds every acknowledged write whose coordinator stayed up long
    /// enough to store its hints.
    async fn check_replicas_alone(&self) {
        let history = self.history.lock().clone();
        for key in 0..KEYS {
            let floor = history
                .iter()
                .filter(|op| op.key == key && op.acked_at().is_some())
                .filter(|op| !self.crashed_while_hinting(op))
                .filter_map(|op| op.write)
                .max();
            let Some(floor) = floor else { continue };
            let token = ring::Token(key_bytes(key).token);
            for replica in STRATEGY.replicas(token, &self.cluster.ring) {
                let node = (0..self.cluster.len())
                    .find(|i| common::addr(*i) == replica.addr)
                    .expect("a replica is a node");
                let coordinator = &self.cluster.node(node).coordinator;
                let got = read(coordinator, key, Consistency::One, &ReadPolicy::default()).await;
                match got {
                    Ok(Some(v)) if v >= floor => {}
                    other => self.fail(format!(
                        "replica node {node} alone reads k{key} as {other:?}, acknowledged {floor}"
                    )),
                }
            }
        }
    }

    /// Whether the write's coordinator crashed before its hints were sure to be stored.
    fn crashed_while_hinting(&self, op: &Op) -> bool {
        let until = op.issued + TIMEOUTS.write + SLACK;
        self.crashes
            .iter()
            .any(|(node, at)| *node == op.coordinator && *at >= op.issued && *at <= until)
    }

    /// QUORUM reads from every node hold every write acknowledged at QUORUM or ALL; an ALL
    /// read then holds what they returned, and repairs every replica: QUORUM and ALL reads
    /// from every node return the same after it.
    async fn check_final_reads(&self) {
        let history = self.history.lock().clone();
        for key in 0..KEYS {
            let floor = history
                .iter()
                .filter(|op| op.key == key && op.strong() && op.acked_at().is_some())
                .filter_map(|op| op.write)
                .max()
                .unwrap_or(0);
            let mut quorum = Vec::new();
            for node in 0..self.cluster.len() {
                quorum.push(self.final_read(node, key, Consistency::Quorum).await);
            }
            if quorum.iter().any(|v| *v < floor) {
                self.fail(format!(
                    "k{key}: acknowledged {floor}, QUORUM reads {quorum:?}"
                ));
            }
            let all = self.final_read(0, key, Consistency::All).await;
            if quorum.iter().any(|v| *v > all) {
                self.fail(format!(
                    "k{key}: ALL read {all} after QUORUM reads {quorum:?}"
                ));
            }
            for node in 0..self.cluster.len() {
                for cl in [Consistency::Quorum, Consistency::All] {
                    let again = self.final_read(node, key, cl).await;
                    if again != all {
                        self.fail(format!(
                            "k{key}: {cl:?} via node {node} reads {again} after ALL read {all}"
                        ));
                    }
                }
            }
        }
    }

    /// A read once the faults healed: it must succeed (0: no value).
    async fn final_read(&self, node: usize, key: u64, cl: Consistency) -> i64 {
        let coordinator = &self.cluster.node(node).coordinator;
        match read(coordinator, key, cl, &ReadPolicy::default()).await {
            Ok(value) => value.unwrap_or(0),
            Err(e) => self.fail(format!("k{key} at {cl:?} via {node} after healing: {e:?}")),
        }
    }
}

impl Sim {
    /// What the run did: answers and failures by kind, and crashes.
    fn summarize(&self, n: usize) -> BTreeMap<String, usize> {
        let history = self.history.lock();
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        for op in history.iter() {
            let verb = if op.write.is_some() { "write" } else { "read" };
            let outcome = match &op.done {
                None => "abandoned".to_string(),
                Some((_, Ok(_))) => "ok".to_string(),
                Some((_, Err(e))) => format!("{e:?}")
                    .split([' ', '{'])
                    .next()
                    .unwrap_or("")
                    .into(),
            };
            *kinds
                .entry(format!("{verb} {:?} {outcome}", op.cl))
                .or_default() += 1;
        }
        eprintln!(
            "seed {}: {n} nodes, {} requests, {} crashes: {kinds:?}",
            self.seed,
            history.len(),
            self.crashes.len()
        );
        kinds.insert("crash".into(), self.crashes.len());
        kinds.retain(|_, count| *count > 0);
        kinds
    }
}

/// Whether a failure is one the proxy may answer, with fields that agree.
fn sensible(error: &CqlError, op: &Op) -> Result<(), String> {
    let block_for = match op.cl {
        Consistency::One => 1,
        Consistency::Quorum => 2,
        _ => 3,
    };
    let write = op.write.is_some();
    let fields = match error {
        CqlError::Unavailable {
            consistency,
            required,
            alive,
            ..
        } => (*consistency, *required, *alive, 1),
        CqlError::WriteTimeout {
            consistency,
            received,
            block_for,
            write_type,
            ..
        } if write && write_type == "SIMPLE" => (*consistency, *block_for, *received, 1),
        CqlError::WriteFailure {
            consistency,
            received,
            block_for,
            failures,
            reasons,
            ..
        } if write && named(*failures, reasons) => (*consistency, *block_for, *received, *failures),
        CqlError::ReadTimeout {
            consistency,
            received,
            block_for,
            ..
        } if !write => (*consistency, *block_for, *received, 1),
        CqlError::ReadFailure {
            consistency,
            received,
            block_for,
            failures,
            reasons,
            ..
        } if !write && named(*failures, reasons) => {
            (*consistency, *block_for, *received, *failures)
        }
        other => return Err(format!("unexpected error {other:?}")),
    };
    let (consistency, needed, got, failures) = fields;
    if consistency != op.cl || needed != block_for || got >= needed || got < 0 || failures < 1 {
        return Err(format!("fields disagree: {error:?}"));
    }
    Ok(())
}

/// Whether a failure's reason map names one node of the cluster per failure.
fn named(failures: i32, reasons: &[(std::net::IpAddr, u16)]) -> bool {
    let nodes: Vec<_> = (0..5).map(addr).collect();
    reasons.len() == failures as usize && reasons.iter().all(|(a, _)| nodes.contains(a))
}
