//! Issue 31: lightweight transactions stay linearizable under the seed's kills, restarts,
//! partitions, one-way cuts, clock jumps and pauses. Clients bound to different nodes each
//! send, one at a time, conditional inserts (`IF NOT EXISTS`), updates (`IF v = x`, `x` the
//! value the client last saw), deletes (`IF EXISTS`) and SERIAL reads of a few rows through
//! their node's query processor. Each operation is recorded with its call and return (a
//! counter, the simulation runs on one thread); a statement with no answer (a timeout, its
//! node killed) is recorded as of unknown outcome, returning never; a failed read and an
//! Unavailable are left out (nothing was done). The history is checked with
//! `paxos::linearizability` (Wing–Gong–Lowe over the `Row` model), and must hold applied
//! statements.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use net::SimRng;
use paxos::linearizability::{check_rows, Operation, RowInput, RowOutput};
use query::QueryProcessor;
use types::error::CqlError;
use types::request::QueryOptions;
use types::result::{QueryResult, Rows};
use types::Consistency;

use crate::cluster::{addr, Cluster};
use crate::scenario::simulate;
use crate::workload::create_schema;

const NODES: usize = 3;
const CLIENTS: usize = 4;
/// The rows the clients work on.
const ROWS: u32 = 3;
/// Steps of the schedule: each sends what idle clients ask, may make a fault, and waits.
const STEPS: u64 = 250;
/// How long the end of a run waits for the operations still running.
const FINISH_LIMIT: Duration = Duration::from_secs(30);
const MAX_JUMP_MICROS: u64 = 5_000_000;
/// How long the checker may search before the run fails undecided.
const CHECK_LIMIT: Duration = Duration::from_secs(60);
const TABLE: &str = "CREATE TABLE IF NOT EXISTS sim.lwt (k int PRIMARY KEY, v int)";

/// One operation of the history: a row's key and what was done to it.
type Recorded = Operation<(u32, RowInput), RowOutput>;

/// What came of a statement: its output, nothing done, or no answer.
enum Answer {
    Output(RowOutput),
    NothingDone,
    Unknown,
}

/// Runs the scenario on `seed`: a summary, or why the check failed.
pub fn run(seed: u64) -> Result<String, String> {
    simulate(seed, async move {
        let cluster = Cluster::start(NODES, NODES, seed).await;
        create_schema(&cluster, seed, &[TABLE]).await;
        let clients = (0..CLIENTS).map(Client::new).collect();
        let lwt = Lwt {
            rng: SimRng::new(seed),
            cluster,
            clients,
            ticks: Arc::default(),
            history: Vec::new(),
            cuts: Vec::new(),
            faults: Vec::new(),
        };
        lwt.play().await
    })
}

struct Client {
    id: usize,
    node: usize,
    /// The value this client last saw in each row.
    seen: Vec<Option<i64>>,
    sent: u32,
    running: Option<Running>,
}

/// A statement under way: its row and input, when it was called, and its task (which
/// returns when it answered, and what).
struct Running {
    key: u32,
    input: RowInput,
    call: u64,
    task: tokio::task::JoinHandle<(u64, Answer)>,
}

impl Client {
    fn new(id: usize) -> Client {
        Client {
            id,
            node: id % NODES,
            seen: vec![None; ROWS as usize],
            sent: 0,
            running: None,
        }
    }

    /// The next statement: on a random row, an update expecting what the client saw there.
    fn choose(&mut self, rng: &mut SimRng) -> (u32, RowInput) {
        self.sent += 1;
        let key = rng.below(u64::from(ROWS)) as u32;
        let unique = (self.id as i64 + 1) * 1_000_000 + i64::from(self.sent);
        let input = match (rng.below(10), self.seen[key as usize]) {
            (0..=2, _) => RowInput::Read,
            (3..=7, Some(v)) => RowInput::UpdateIf {
                expect: v,
                new: unique,
            },
            (8, _) => RowInput::DeleteIfExists,
            _ => RowInput::InsertIfNotExists(unique),
        };
        (key, input)
    }

    /// Remembers the row's value after an answered statement, as far as it tells.
    fn learn(&mut self, key: u32, input: RowInput, output: RowOutput) {
        let after = match (input, output) {
            (_, RowOutput::Value(v) | RowOutput::NotApplied(v)) => Some(v),
            (RowInput::InsertIfNotExists(v), RowOutput::Applied) => Some(Some(v)),
            (RowInput::UpdateIf { new, .. }, RowOutput::Applied) => Some(Some(new)),
            (RowInput::DeleteIfExists, RowOutput::Applied) => Some(None),
            _ => None,
        };
        if let Some(value) = after {
            self.seen[key as usize] = value;
        }
    }
}

struct Lwt {
    rng: SimRng,
    cluster: Cluster,
    clients: Vec<Client>,
    ticks: Arc<AtomicU64>,
    history: Vec<Recorded>,
    cuts: Vec<(usize, usize)>,
    faults: Vec<String>,
}

impl Lwt {
    async fn play(mut self) -> Result<String, String> {
        for _ in 0..STEPS {
            self.collect().await;
            self.send();
            self.fault().await;
            let pause = self.rng.below(20);
            tokio::time::sleep(Duration::from_millis(pause)).await;
        }
        self.heal().await;
        self.finish().await;
        self.final_reads().await;
        self.check()
    }

    /// Each idle client whose node runs sends its next statement.
    fn send(&mut self) {
        for c in 0..self.clients.len() {
            let client = &mut self.clients[c];
            if client.running.is_some() || !self.cluster.running().contains(&client.node) {
                continue;
            }
            let (key, input) = client.choose(&mut self.rng);
            let node = client.node;
            self.clients[c].running = self.spawn(node, key, input);
        }
    }

    fn spawn(&self, node: usize, key: u32, input: RowInput) -> Option<Running> {
        let ticks = self.ticks.clone();
        let call = ticks.fetch_add(1, Ordering::SeqCst);
        let task = self.cluster.spawn_on(node, move |processor| async move {
            let answer = execute(&processor, key, input).await;
            (ticks.fetch_add(1, Ordering::SeqCst), answer)
        })?;
        Some(Running {
            key,
            input,
            call,
            task,
        })
    }

    /// Records the statements that ended (a task dropped with its node: no answer).
    async fn collect(&mut self) {
        for c in 0..self.clients.len() {
            let done = self.clients[c]
                .running
                .as_ref()
                .is_some_and(|r| r.task.is_finished());
            if let Some(running) = self.clients[c].running.take_if(|_| done) {
                self.record(c, running).await;
            }
        }
    }

    async fn record(&mut self, client: usize, running: Running) {
        let Running {
            key,
            input,
            call,
            task,
        } = running;
        let (ret, answer) = task.await.unwrap_or((u64::MAX, Answer::Unknown));
        let output = match answer {
            Answer::Output(output) => {
                self.clients[client].learn(key, input, output);
                output
            }
            Answer::NothingDone => return,
            Answer::Unknown if input == RowInput::Read => return,
            Answer::Unknown => RowOutput::Unknown,
        };
        let ret = (output != RowOutput::Unknown).then_some(ret);
        self.history.push(Operation {
            input: (key, input),
            output,
            call,
            ret,
        });
    }

    async fn fault(&mut self) {
        match self.rng.below(100) {
            0..=2 => self.crash().await,
            3..=7 => self.restart().await,
            8..=10 => self.isolate(),
            11..=12 => self.cut_one_way(),
            13..=18 => self.repair_links(),
            19..=21 => self.jump_clock(),
            22..=24 => {
                let pause = self.rng.below(500);
                tokio::time::sleep(Duration::from_millis(pause)).await;
            }
            _ => {}
        }
    }

    /// Kills a running node while a majority stays up.
    async fn crash(&mut self) {
        let running = self.cluster.running();
        if running.len() <= NODES / 2 + 1 {
            return;
        }
        let node = running[self.rng.below(running.len() as u64) as usize];
        self.faults.push(format!("crash node {node}"));
        self.cluster.crash(node).await;
    }

    async fn restart(&mut self) {
        let down = self.cluster.down();
        if let Some(&node) = down.first() {
            self.faults.push(format!("restart node {node}"));
            self.cluster.restart(node).await;
        }
    }

    fn isolate(&mut self) {
        let node = self.rng.below(NODES as u64) as usize;
        self.faults.push(format!("isolate node {node}"));
        for other in (0..NODES).filter(|o| *o != node) {
            turmoil::partition(addr(node), addr(other));
            self.cuts.extend([(node, other), (other, node)]);
        }
    }

    fn cut_one_way(&mut self) {
        let from = self.rng.below(NODES as u64) as usize;
        let to = (from + 1 + self.rng.below(NODES as u64 - 1) as usize) % NODES;
        self.faults.push(format!("cut node {from} -> node {to}"));
        turmoil::partition_oneway(addr(from), addr(to));
        self.cuts.push((from, to));
    }

    fn repair_links(&mut self) {
        for (from, to) in std::mem::take(&mut self.cuts) {
            turmoil::repair_oneway(addr(from), addr(to));
        }
    }

    fn jump_clock(&mut self) {
        let node = self.rng.below(NODES as u64) as usize;
        let micros = self.rng.below(2 * MAX_JUMP_MICROS) as i64 - MAX_JUMP_MICROS as i64;
        self.faults
            .push(format!("jump node {node}'s clock by {micros} us"));
        self.cluster.jump_clock(node, micros);
    }

    /// Links repaired and killed nodes back.
    async fn heal(&mut self) {
        self.repair_links();
        for node in self.cluster.down() {
            self.cluster.restart(node).await;
        }
    }

    /// Waits for the statements still running (those that never end stay of unknown outcome).
    async fn finish(&mut self) {
        let deadline = tokio::time::Instant::now() + FINISH_LIMIT;
        while self.clients.iter().any(|c| c.running.is_some())
            && tokio::time::Instant::now() < deadline
        {
            self.collect().await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for c in 0..self.clients.len() {
            if let Some(running) = self.clients[c].running.take() {
                running.task.abort();
                self.record(c, running).await;
            }
        }
    }

    /// A SERIAL read of every row through node 0, recorded too.
    async fn final_reads(&mut self) {
        for key in 0..ROWS {
            for _ in 0..10 {
                let Some(running) = self.spawn(0, key, RowInput::Read) else {
                    break;
                };
                let before = self.history.len();
                self.record(0, running).await;
                if self.history.len() > before {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }

    fn check(&self) -> Result<String, String> {
        let applied = self
            .history
            .iter()
            .filter(|op| op.output == RowOutput::Applied)
            .count();
        let unknown = self
            .history
            .iter()
            .filter(|op| op.output == RowOutput::Unknown)
            .count();
        let summary = format!(
            "{} operations, {applied} applied, {unknown} of unknown outcome; faults: {}",
            self.history.len(),
            self.faults.join(", ")
        );
        if !linearizable(&self.history)? {
            return Err(format!(
                "the history is not linearizable ({summary}):\n{:#?}",
                self.history
            ));
        }
        if applied == 0 {
            return Err(format!("no statement applied ({summary})"));
        }
        let Some(stale) = with_stale_read(&without_unseen_unknowns(&self.history, false)) else {
            return Ok(format!("{summary}; no stale read to add"));
        };
        match any_linearizable(vec![stale])? {
            true => Err("the checker accepts a stale SERIAL read added to the history".into()),
            false => Ok(format!("{summary}; a stale read added is caught")),
        }
    }
}

/// Whether `history` is linearizable, or `Err` if the search takes longer than
/// [`CHECK_LIMIT`]. The search grows exponentially with the operations of unknown outcome on
/// a row (each may take effect anywhere after its call), so it first tries the history
/// without the unknown writes whose value no operation saw and without the unknown deletes,
/// then with those deletes: if one is linearizable so is the whole (the unknown operations
/// left out take effect at the very end, where nothing sees them, or never). Only if neither
/// is, is the whole history searched.
fn linearizable(history: &[Recorded]) -> Result<bool, String> {
    any_linearizable(vec![
        without_unseen_unknowns(history, false),
        without_unseen_unknowns(history, true),
        history.to_vec(),
    ])
}

/// Whether one of `tries` is linearizable, or `Err` past [`CHECK_LIMIT`].
fn any_linearizable(tries: Vec<Vec<Recorded>>) -> Result<bool, String> {
    let (sender, answer) = std::sync::mpsc::channel();
    // The search cannot be stopped: on a timeout its thread is left to the process's end.
    std::thread::spawn(move || {
        let _ = sender.send(tries.iter().any(|h| check_rows(h)));
    });
    answer
        .recv_timeout(CHECK_LIMIT)
        .map_err(|_| format!("the checker did not decide within {CHECK_LIMIT:?}"))
}

/// `history` without its inserts and updates of unknown outcome whose value no operation saw,
/// and without its deletes of unknown outcome unless `deletes`.
fn without_unseen_unknowns(history: &[Recorded], deletes: bool) -> Vec<Recorded> {
    let seen = |value: i64| {
        history.iter().any(|op| {
            let output = match op.output {
                RowOutput::Value(v) | RowOutput::NotApplied(v) => v,
                _ => None,
            };
            let expected = match op.input.1 {
                RowInput::UpdateIf { expect, .. } => Some(expect),
                _ => None,
            };
            output == Some(value) || expected == Some(value)
        })
    };
    let kept = |op: &&Recorded| match (op.output, op.input.1) {
        (
            RowOutput::Unknown,
            RowInput::InsertIfNotExists(v) | RowInput::UpdateIf { new: v, .. },
        ) => seen(v),
        (RowOutput::Unknown, RowInput::DeleteIfExists) => deletes,
        _ => true,
    };
    history.iter().filter(kept).cloned().collect()
}

/// `history` with a stale SERIAL read: it returns the value an applied statement wrote just
/// after a later statement, called once the first had returned, applied a change (every
/// value is written once, so no order explains it). It is put early, where the search
/// proves it wrong quickly; the ticks are doubled to make room for it. `None` without two
/// such statements.
fn with_stale_read(history: &[Recorded]) -> Option<Vec<Recorded>> {
    let written = |op: &Recorded| match (op.input.1, op.output, op.ret) {
        (
            RowInput::InsertIfNotExists(v) | RowInput::UpdateIf { new: v, .. },
            RowOutput::Applied,
            Some(ret),
        ) => Some((op.input.0, v, ret)),
        _ => None,
    };
    let changed_after = |key: u32, after: u64| {
        let later = history
            .iter()
            .filter(|op| op.input.0 == key && op.output == RowOutput::Applied && op.call > after);
        later.filter_map(|op| op.ret).min()
    };
    let (key, value, at) = history
        .iter()
        .filter_map(written)
        .filter_map(|(key, v, ret)| Some((key, v, changed_after(key, ret)?)))
        .min_by_key(|(_, _, at)| *at)?;
    let mut stale: Vec<Recorded> = history
        .iter()
        .map(|op| Operation {
            call: op.call * 2,
            ret: op.ret.map(|r| r * 2),
            ..op.clone()
        })
        .collect();
    stale.push(Operation {
        input: (key, RowInput::Read),
        output: RowOutput::Value(Some(value)),
        call: at * 2 + 1,
        ret: Some(at * 2 + 1),
    });
    Some(stale)
}

/// Runs one statement through `processor`: QUORUM for the write, SERIAL for its Paxos round
/// and for reads.
async fn execute(processor: &QueryProcessor, key: u32, input: RowInput) -> Answer {
    let text = match input {
        RowInput::Read => format!("SELECT v FROM sim.lwt WHERE k = {key}"),
        RowInput::InsertIfNotExists(v) => {
            format!("INSERT INTO sim.lwt (k, v) VALUES ({key}, {v}) IF NOT EXISTS")
        }
        RowInput::UpdateIf { expect, new } => {
            format!("UPDATE sim.lwt SET v = {new} WHERE k = {key} IF v = {expect}")
        }
        RowInput::DeleteIfExists => format!("DELETE FROM sim.lwt WHERE k = {key} IF EXISTS"),
    };
    let options = QueryOptions {
        consistency: match input {
            RowInput::Read => Consistency::Serial,
            _ => Consistency::Quorum,
        },
        serial_consistency: Some(Consistency::Serial),
        ..QueryOptions::default()
    };
    match processor.query(None, &text, options).await {
        Ok(outcome) => match outcome.result {
            QueryResult::Rows(rows) => output(input, &rows).map_or(Answer::Unknown, Answer::Output),
            _ => Answer::Unknown,
        },
        Err(CqlError::Unavailable { .. }) => Answer::NothingDone,
        Err(_) => Answer::Unknown,
    }
}

/// A read's value, or a conditional statement's `[applied]` and the `v` it saw.
fn output(input: RowInput, rows: &Rows) -> Option<RowOutput> {
    let cells = first_row(rows)?;
    let column = |name: &str| {
        let at = rows.columns.iter().position(|c| c.name == name)?;
        cells.get(at).cloned()
    };
    let int = |cell: Option<Vec<u8>>| -> Option<i64> {
        let bytes: [u8; 4] = cell?.try_into().ok()?;
        Some(i64::from(i32::from_be_bytes(bytes)))
    };
    if input == RowInput::Read {
        return Some(RowOutput::Value(int(column("v").flatten())));
    }
    match column("[applied]").flatten()?.first()? {
        0 => Some(RowOutput::NotApplied(int(column("v").flatten()))),
        _ => Some(RowOutput::Applied),
    }
}

/// The cells of the first row (`None` for a null), or no cells when there is no row.
fn first_row(rows: &Rows) -> Option<Vec<Option<Vec<u8>>>> {
    let mut cells = Vec::new();
    if rows.row_count == 0 {
        return Some(cells);
    }
    let mut rest = &rows.content[..];
    for _ in 0..rows.columns.len() {
        let (len, tail) = rest.split_at_checked(4)?;
        let len = i32::from_be_bytes(len.try_into().ok()?);
        rest = tail;
        if len < 0 {
            cells.push(None);
            continue;
        }
        let (value, tail) = rest.split_at_checked(len as usize)?;
        cells.push(Some(value.to_vec()));
        rest = tail;
    }
    Some(cells)
}
