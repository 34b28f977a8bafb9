//! Issue 29: a fourth node bootstraps into three while QUORUM writes and reads go on, and its
//! streams meet faults: messages lost on its links all along, and, once a stream session of
//! the join is seen running, the seed's fault: a cut of that session's link for a few hundred
//! milliseconds, a crash of the session's source (restarted a second later), or a kill of the
//! joining node (restarted, it resumes its join). A failed bootstrap is resumed as an operator
//! would (`nodetool bootstrap resume`). Checks: the faults hit stream sessions; every
//! acknowledged QUORUM write is read back at QUORUM through every node; and the new node,
//! read alone, holds every row written at ALL before its join in the partitions it now
//! replicates (rows written at QUORUM may be missing on the replica it streamed from).
use std::time::Duration;

use net::{SimRng, Verb};
use streaming::{Direction, State};
use tokio::time::Instant;
use types::Consistency;

use crate::cluster::{addr, Cluster};
use crate::scenario::{read_alone, replicates, set_loss, simulate, Load};
use crate::workload::{create_schema, KEYS};

/// The nodes that start the cluster; node `NODES` joins.
const NODES: usize = 3;
/// Rows written at ALL before the join, spread over the partitions.
const PRELOAD: u32 = 36;
/// The probability a link of the joining node breaks in a given millisecond.
const LOSS: f64 = 0.002;
/// How long the join may take in simulated time before the run fails.
const JOIN_LIMIT: Duration = Duration::from_secs(180);
/// How long a crashed node stays down, and how long a cut link stays cut.
const DOWN_FOR: Duration = Duration::from_millis(1500);
const CUT_FOR: Duration = Duration::from_millis(300);

/// The fault made on the first stream session seen running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    CutLink,
    CrashSource,
    KillJoiner,
}

impl Fault {
    pub fn of(seed: u64) -> Fault {
        match seed % 3 {
            0 => Fault::CutLink,
            1 => Fault::CrashSource,
            _ => Fault::KillJoiner,
        }
    }
}

/// Runs the scenario on `seed`: a summary, or why a check failed.
pub fn run(seed: u64) -> Result<String, String> {
    simulate(seed, async move {
        let cluster = Cluster::start(NODES + 1, NODES, seed).await;
        create_schema(&cluster, seed, &[]).await;
        let join = Join {
            fault: Fault::of(seed),
            rng: SimRng::new(seed),
            cluster,
            load: Load::new(),
            preloaded: Vec::new(),
            faulted: false,
            down: None,
            cut: None,
            hits: Vec::new(),
        };
        join.play().await
    })
}

struct Join {
    fault: Fault,
    rng: SimRng,
    cluster: Cluster,
    load: Load,
    /// (partition, row) of the rows written at ALL before the join.
    preloaded: Vec<(u32, u32)>,
    faulted: bool,
    /// A crashed node and when it comes back.
    down: Option<(usize, Instant)>,
    /// A cut link (the joining node and a source) and when it is repaired.
    cut: Option<(usize, Instant)>,
    /// What the faults did to stream sessions.
    hits: Vec<String>,
}

const JOINER: usize = NODES;

impl Join {
    async fn play(mut self) -> Result<String, String> {
        self.preload().await?;
        self.cluster.begin_join(JOINER).await;
        for source in 0..NODES {
            set_loss(JOINER, source, LOSS).await;
        }
        let deadline = Instant::now() + JOIN_LIMIT;
        while !self.joined() {
            if Instant::now() > deadline {
                return Err(format!("node {JOINER} did not join within {JOIN_LIMIT:?}"));
            }
            let running = self.cluster.running();
            self.load.step(&mut self.rng, &self.cluster, &running);
            let pause = 5 + self.rng.below(30);
            self.watch(pause).await;
        }
        for source in 0..NODES {
            set_loss(JOINER, source, 0.0).await;
        }
        self.end_faults().await;
        self.load.finish().await;
        for node in 0..=NODES {
            self.note_trouble(node);
        }
        self.check().await
    }

    /// Writes the preloaded rows at ALL through node 0, each until it succeeds.
    async fn preload(&mut self) -> Result<(), String> {
        for n in 0..PRELOAD {
            let key = n % KEYS as u32;
            for _ in 0..10 {
                let id = self.load.write(&self.cluster, 0, key, Consistency::All);
                self.load.finish().await;
                if self.load.history.acknowledged(id) {
                    self.preloaded.push((key, id));
                    break;
                }
            }
        }
        match self.preloaded.len() as u32 {
            PRELOAD => Ok(()),
            n => Err(format!("only {n} of {PRELOAD} writes at ALL succeeded")),
        }
    }

    /// Whether the joining node serves (resuming its failed bootstrap if not).
    fn joined(&mut self) -> bool {
        self.down.is_none_or(|(node, _)| node != JOINER) && self.cluster.poll_joined(JOINER)
    }

    /// Waits `ms` milliseconds, one at a time: makes the seed's fault as soon as a stream
    /// session of the join runs, and ends the faults that are due.
    async fn watch(&mut self, ms: u64) {
        for _ in 0..ms {
            if !self.faulted {
                if let Some(source) = self.streaming_from() {
                    self.faulted = true;
                    self.make_fault(source).await;
                }
            }
            self.end_faults_due().await;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// The source of a stream session the joining node is running, if any.
    fn streaming_from(&self) -> Option<usize> {
        let node = self.cluster.opened(JOINER)?;
        let sessions = node.streaming.as_ref()?.sessions();
        let running = sessions
            .iter()
            .find(|s| s.direction == Direction::Receiving && !s.state.is_finished())?;
        (0..NODES).find(|i| addr(*i) == running.peer.ip())
    }

    async fn make_fault(&mut self, source: usize) {
        let back = Instant::now() + DOWN_FOR;
        match self.fault {
            Fault::CutLink => {
                turmoil::partition(addr(JOINER), addr(source));
                self.cut = Some((source, Instant::now() + CUT_FOR));
                self.hits
                    .push(format!("cut node {JOINER} - node {source} mid-stream"));
            }
            Fault::CrashSource => {
                self.note_trouble(source);
                self.cluster.crash(source).await;
                self.down = Some((source, back));
                self.hits
                    .push(format!("crashed source node {source} mid-stream"));
            }
            Fault::KillJoiner => {
                self.note_trouble(JOINER);
                self.cluster.crash(JOINER).await;
                self.down = Some((JOINER, back));
                self.hits.push(format!(
                    "killed joining node {JOINER} streaming from {source}"
                ));
            }
        }
    }

    async fn end_faults_due(&mut self) {
        let now = Instant::now();
        if let Some((source, _)) = self.cut.filter(|(_, at)| *at <= now) {
            self.cut = None;
            turmoil::repair(addr(JOINER), addr(source));
        }
        if let Some((node, _)) = self.down.filter(|(_, at)| *at <= now) {
            self.down = None;
            match node {
                JOINER => self.cluster.begin_join(JOINER).await,
                source => self.cluster.restart(source).await,
            }
        }
    }

    async fn end_faults(&mut self) {
        let ends = [self.cut.map(|c| c.1), self.down.map(|d| d.1)];
        if let Some(last) = ends.into_iter().flatten().max() {
            tokio::time::sleep_until(last).await;
        }
        self.end_faults_due().await;
    }

    /// Records the stream requests of node `node` that failed or timed out and its stream
    /// sessions that failed (before a crash takes its counts with it).
    fn note_trouble(&mut self, node: usize) {
        let Some(serving) = self.cluster.opened(node) else {
            return;
        };
        let stream_verbs = [
            Verb::StreamPrepare,
            Verb::StreamChunk,
            Verb::StreamComplete,
            Verb::StreamEstimate,
        ];
        if let Some(messaging) = &serving.cluster.messaging {
            let stats = messaging.stats();
            let lost: u64 = stream_verbs
                .iter()
                .map(|v| stats.verb(*v).timeouts + stats.verb(*v).failures)
                .sum();
            if lost > 0 {
                self.hits
                    .push(format!("node {node}: {lost} stream requests failed"));
            }
        }
        let sessions = serving.streaming.as_ref().map(|s| s.sessions());
        let failed = sessions
            .unwrap_or_default()
            .into_iter()
            .filter(|s| matches!(s.state, State::Failed(_)))
            .count();
        if failed > 0 {
            self.hits
                .push(format!("node {node}: {failed} stream sessions failed"));
        }
    }

    async fn check(self) -> Result<String, String> {
        if !self.faulted {
            return Err("the join ended before a stream session was seen running".into());
        }
        let failed = self.hits.iter().any(|h| h.contains("failed"));
        if self.fault == Fault::CutLink && !failed {
            return Err(format!("the cut hit no stream session: {:?}", self.hits));
        }
        self.load.check(&self.cluster).await?;
        let mut alone = 0;
        for key in 0..KEYS as u32 {
            if !replicates(&self.cluster, JOINER, key) {
                continue;
            }
            let rows = read_alone(&self.cluster, JOINER, key).await?;
            let preloaded = self.preloaded.iter().filter(|(k, _)| *k == key);
            if let Some((_, lost)) = preloaded.clone().find(|(_, id)| !rows.contains(id)) {
                return Err(format!(
                    "node {JOINER} alone lacks row c{lost} of k{key}, written at ALL \
                     before it joined (it holds {rows:?})"
                ));
            }
            alone += preloaded.count();
        }
        let alone = match alone {
            0 => format!("node {JOINER} replicates none of the partitions"),
            n => format!("{n} preloaded rows held alone by node {JOINER}"),
        };
        Ok(format!(
            "{:?}, {:?}; {alone}; {}",
            self.fault,
            self.load.history.outcomes(),
            self.hits.join("; ")
        ))
    }
}
