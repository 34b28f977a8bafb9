//! One measured run ("phase"): `threads` worker tasks issue operations, each waiting for
//! its previous one (as cassandra-stress's threads do) and, under `-rate fixed=`/`throttle=`,
//! for its slot in a uniform schedule (a [`Pacer`] permit); the reporting loop prints a row per interval and
//! stops the workers at the count, duration or uncertainty target. What an operation does is
//! the [`Workload`]'s business: the predefined commands and user profiles each implement it.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::task::JoinSet;

use crate::dist::Sampler;
use crate::javarand::JavaRandom;
use crate::metrics::{Measurement, OpStats, Recorder, Span, Uncertainty};
use crate::output::Output;
use crate::pacer::{Lateness, Pacer};
use crate::report;
use crate::settings::{Limit, Population, Settings, Stop};

/// What one finished operation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    pub partitions: u64,
    pub rows: u64,
}

/// The future of one operation.
pub type OpFuture<'a> = Pin<Box<dyn Future<Output = Result<Done, String>> + Send + 'a>>;

/// The operations a run can issue; each worker task gets its own [`OpWorker`].
pub trait Workload: Send + Sync {
    fn worker(&self, seed: i64) -> Box<dyn OpWorker>;
}

/// One worker's generators and buffers.
pub trait OpWorker: Send {
    /// How many population seeds (partitions) operation `op`'s next run takes.
    fn seeds_wanted(&mut self, _op: usize) -> usize {
        1
    }

    /// Runs operation `op` once on the partitions of `seeds`.
    fn execute<'a>(&'a mut self, op: usize, seeds: &'a [i64]) -> OpFuture<'a>;

    /// The keys of `seeds`, for error messages.
    fn keys(&mut self, seeds: &[i64]) -> String;
}

/// One operation of a phase: the workload's operation `id`, its printed name and weight.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseOp {
    pub id: usize,
    pub name: String,
    pub weight: f64,
}

/// What one phase runs.
#[derive(Debug, Clone)]
pub struct Phase {
    pub ops: Vec<PhaseOp>,
    pub threads: u32,
    pub stop: Stop,
    pub limit: Option<Limit>,
}

/// A finished phase: the whole run and each operation type (by name).
pub struct Outcome {
    pub total: Span,
    pub per_op: Vec<(String, Span)>,
    pub error: Option<String>,
    /// Under `-rate fixed=`/`throttle=`, how late operations started after their due time.
    pub pacing: Option<Lateness>,
}

/// State the workers share.
struct Shared {
    stop: AtomicBool,
    issued: AtomicU64,
    sequence: AtomicU64,
    pacer: Option<Arc<Pacer>>,
    recorder: Recorder,
    error: Mutex<Option<String>>,
}

/// Everything a worker needs, shared by all workers of a phase.
struct Job {
    settings: Arc<Settings>,
    workload: Arc<dyn Workload>,
    phase: Phase,
    shared: Shared,
}

/// Runs one phase, printing its interval rows to `out`.
pub async fn run(
    settings: Arc<Settings>,
    workload: Arc<dyn Workload>,
    phase: Phase,
    out: &mut Output<'_>,
) -> Outcome {
    let pacer = phase
        .limit
        .map(|l| Arc::new(Pacer::new(l.per_second, Instant::now())));
    let pacing_thread = match pacer.as_ref().map(Pacer::spawn).transpose() {
        Ok(t) => t,
        Err(e) => return failed(format!("cannot start the pacing thread: {e}")),
    };
    let shared = Shared {
        stop: AtomicBool::new(false),
        issued: AtomicU64::new(0),
        sequence: AtomicU64::new(0),
        pacer,
        recorder: Recorder::new((phase.threads as usize).min(16), phase.ops.len()),
        error: Mutex::new(None),
    };
    let job = Arc::new(Job {
        settings,
        workload,
        phase,
        shared,
    });
    let mut workers = JoinSet::new();
    for id in 0..job.phase.threads {
        workers.spawn(worker(Arc::clone(&job), id as usize));
    }
    let (total, per_op) = report_loop(&job, &mut workers, out).await;
    halt(&job.shared);
    if let Some(t) = pacing_thread {
        // The thread sleeps at most a few milliseconds before it sees the stop.
        let _ = tokio::task::spawn_blocking(move || t.join()).await;
    }
    let error = job.shared.error.lock().take();
    Outcome {
        total,
        per_op,
        error,
        pacing: job.shared.pacer.as_ref().map(|p| p.lateness()),
    }
}

fn failed(error: String) -> Outcome {
    let empty = Span {
        stats: OpStats::new(),
        elapsed: Duration::ZERO,
        fixed: false,
    };
    Outcome {
        total: empty,
        per_op: Vec::new(),
        error: Some(error),
        pacing: None,
    }
}

/// Stops the workers: no more claims, and those waiting for a permit give up.
fn halt(shared: &Shared) {
    shared.stop.store(true, Ordering::Relaxed);
    if let Some(p) = &shared.pacer {
        p.stop();
    }
}

fn choose(ops: &[PhaseOp], rng: &mut JavaRandom) -> usize {
    let sum: f64 = ops.iter().map(|o| o.weight).sum();
    let mut x = rng.next_double() * sum;
    for (i, o) in ops.iter().enumerate() {
        if x < o.weight {
            return i;
        }
        x -= o.weight;
    }
    ops.len() - 1
}

/// The next population seed, or `None` when a non-wrapping sequence is used up.
fn next_seed(job: &Job, dist: &mut Option<Sampler>) -> Option<i64> {
    if let Some(d) = dist {
        return Some(d.next());
    }
    match job.settings.population {
        Population::Seq { start, end, wrap } => {
            let total = (end - start + 1) as u64;
            let i = job.shared.sequence.fetch_add(1, Ordering::Relaxed);
            (wrap || i < total).then(|| start + (i % total) as i64)
        }
        Population::Dist(_) => None,
    }
}

fn claim(job: &Job) -> bool {
    if job.shared.stop.load(Ordering::Relaxed) {
        return false;
    }
    match job.phase.stop {
        Stop::Count(n) => job.shared.issued.fetch_add(1, Ordering::Relaxed) < n,
        _ => true,
    }
}

/// Draws the seeds operation `op` takes into `seeds`; false when the population is used up.
fn draw_seeds(
    job: &Job,
    w: &mut dyn OpWorker,
    op: usize,
    dist: &mut Option<Sampler>,
    seeds: &mut Vec<i64>,
) -> bool {
    seeds.clear();
    // 0 when the operation only continues partitions it already holds (user `visits`).
    let wanted = w.seeds_wanted(job.phase.ops[op].id);
    for _ in 0..wanted {
        match next_seed(job, dist) {
            Some(seed) => seeds.push(seed),
            None => break,
        }
    }
    wanted == 0 || !seeds.is_empty()
}

async fn worker(job: Arc<Job>, id: usize) {
    let s = &job.settings;
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    let seed =
        (id as i64).wrapping_mul(0x2545_F491_4F6C_DD1D) ^ i64::from(std::process::id()) ^ clock;
    let mut w = job.workload.worker(seed);
    let mut rng = JavaRandom::new(seed.wrapping_mul(0x9E37_79B9));
    let mut dist = match &s.population {
        Population::Dist(d) => Some(Sampler::new(d.clone(), rng.next_long())),
        Population::Seq { .. } => None,
    };
    let mut seeds = Vec::new();
    while claim(&job) {
        let op = choose(&job.phase.ops, &mut rng);
        if !draw_seeds(&job, w.as_mut(), op, &mut dist, &mut seeds) {
            break;
        }
        let intended = match &job.shared.pacer {
            Some(p) => match p.wait().await {
                Some(t) => Some(t),
                None => break,
            },
            None => None,
        };
        let started = Instant::now();
        let mut result = Err(String::new());
        for _ in 0..s.errors.tries.max(1) {
            result = w.execute(job.phase.ops[op].id, &seeds).await;
            if result.is_ok() {
                break;
            }
        }
        let done = *result.as_ref().unwrap_or(&Done {
            partitions: seeds.len() as u64,
            rows: 0,
        });
        let m = Measurement {
            intended,
            started,
            ended: Instant::now(),
            partitions: done.partitions,
            rows: done.rows,
            error: result.is_err(),
        };
        job.shared.recorder.record(id, op, &m);
        if let Err(e) = result {
            if !s.errors.ignore {
                let msg = format!(
                    "Operation x{} on key(s) [{}]: Error executing: ({e})",
                    s.errors.tries,
                    w.keys(&seeds)
                );
                job.shared.error.lock().get_or_insert(msg);
                halt(&job.shared);
                break;
            }
        }
    }
}

/// Per-interval reporting until the workers finish; returns the whole-run spans.
async fn report_loop(
    job: &Job,
    workers: &mut JoinSet<()>,
    out: &mut Output<'_>,
) -> (Span, Vec<(String, Span)>) {
    let fixed = job.phase.limit.is_some_and(|l| l.fixed);
    let interval = job.settings.log.interval;
    let start = Instant::now();
    let deadline = match job.phase.stop {
        Stop::Duration { time, .. } => Some(start + time),
        _ => None,
    };
    let mut table = Table::new(job, fixed, start);
    let mut next_tick = start + interval;
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(next_tick.into()) => {
                table.interval(&job.shared.recorder, next_tick, out);
                next_tick += interval;
                let done = deadline.is_some_and(|d| Instant::now() >= d) || table.converged(&job.phase.stop);
                if done {
                    halt(&job.shared);
                }
            }
            joined = workers.join_next() => {
                if joined.is_none() {
                    break;
                }
            }
        }
    }
    table.interval(&job.shared.recorder, Instant::now(), out);
    table.finish(Instant::now())
}

/// The interval table being printed and the run's running totals.
struct Table<'a> {
    ops: &'a [PhaseOp],
    fixed: bool,
    start: Instant,
    last: Instant,
    current: Vec<OpStats>,
    totals: Vec<OpStats>,
    uncertainty: Uncertainty,
}

impl<'a> Table<'a> {
    fn new(job: &'a Job, fixed: bool, start: Instant) -> Table<'a> {
        let n = job.phase.ops.len();
        Table {
            ops: &job.phase.ops,
            fixed,
            start,
            last: start,
            current: (0..n).map(|_| OpStats::new()).collect(),
            totals: (0..n).map(|_| OpStats::new()).collect(),
            uncertainty: Uncertainty::default(),
        }
    }

    fn span(&self, stats: OpStats, elapsed: Duration) -> Span {
        Span {
            stats,
            elapsed,
            fixed: self.fixed,
        }
    }

    fn interval(&mut self, recorder: &Recorder, now: Instant, out: &mut Output<'_>) {
        recorder.drain(&mut self.current);
        let elapsed = now
            .saturating_duration_since(self.last)
            .max(Duration::from_micros(1));
        self.last = now;
        let mut sum = OpStats::new();
        // Per-type rows in name order, as cassandra-stress's TreeMap prints them.
        let mut order: Vec<usize> = (0..self.current.len()).collect();
        order.sort_by_key(|&i| self.ops[i].name.as_str());
        for i in order {
            self.totals[i].add(&self.current[i]);
            sum.add(&self.current[i]);
            let span = Span {
                stats: self.current[i].clone(),
                elapsed,
                fixed: self.fixed,
            };
            out.record_op(&self.ops[i].name, &span);
            if self.ops.len() > 1 && span.ops() > 0 {
                out.line(&self.row(
                    &self.ops[i].name,
                    &span,
                    self.totals[i].latency(self.fixed).len(),
                    now,
                ));
            }
            self.current[i].reset();
        }
        let span = self.span(sum, elapsed);
        if span.ops() == 0 {
            return;
        }
        self.uncertainty.update(span.adjusted_row_rate());
        out.record_total(now - self.start, &span);
        let total_ops = self
            .totals
            .iter()
            .map(|t| t.latency(self.fixed).len())
            .sum();
        out.line(&self.row("total", &span, total_ops, now));
    }

    fn row(&self, kind: &str, span: &Span, total_ops: u64, now: Instant) -> String {
        report::row(
            kind,
            span,
            total_ops,
            now - self.start,
            self.uncertainty.value,
        )
    }

    fn converged(&self, stop: &Stop) -> bool {
        match *stop {
            Stop::Uncertainty { target, min, max } => {
                let n = self.uncertainty.measurements;
                (self.uncertainty.value < target && n >= min) || n >= max
            }
            _ => false,
        }
    }

    fn finish(self, end: Instant) -> (Span, Vec<(String, Span)>) {
        let elapsed = end - self.start;
        let mut sum = OpStats::new();
        let mut per_op = Vec::new();
        for (i, t) in self.totals.iter().enumerate() {
            sum.add(t);
            per_op.push((self.ops[i].name.clone(), self.span(t.clone(), elapsed)));
        }
        per_op.sort_by(|a, b| a.0.cmp(&b.0));
        (self.span(sum, elapsed), per_op)
    }
}

/// cassandra-stress's warm-up length: a quarter of the run, at most 50,000 per node.
pub fn warmup_iterations(count: Option<u64>, nodes: usize) -> u64 {
    let base = count.map_or(50_000, |n| ((n as f64 * 0.25) as u64).min(50_000));
    base * nodes as u64
}

/// The `Running …` line's description of the stop condition.
pub fn describe_stop(stop: &Stop) -> String {
    match stop {
        Stop::Count(n) => format!("for {n} iteration"),
        Stop::Duration { amount, unit, .. } => format!("{amount} {unit}"),
        Stop::Uncertainty { target, .. } => format!("until stderr of mean < {target}"),
    }
}

/// The name cassandra-stress gives a set of operations.
pub fn describe_ops(ops: &[PhaseOp]) -> String {
    match ops {
        [op] => op.name.clone(),
        _ => {
            let names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
            format!("[{}]", names.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(id: usize, name: &str, weight: f64) -> PhaseOp {
        PhaseOp {
            id,
            name: name.into(),
            weight,
        }
    }

    #[test]
    fn choose_follows_the_ratio() {
        let ops = [op(0, "WRITE", 1.0), op(1, "READ", 3.0)];
        let mut rng = JavaRandom::new(1);
        let reads = (0..40_000).filter(|_| choose(&ops, &mut rng) == 1).count();
        assert!((29_000..31_000).contains(&reads), "{reads}");
    }

    #[test]
    fn warmup_is_a_quarter_up_to_fifty_thousand() {
        assert_eq!(warmup_iterations(Some(10_000), 1), 2_500);
        assert_eq!(warmup_iterations(Some(10_000_000), 1), 50_000);
        assert_eq!(warmup_iterations(None, 2), 100_000);
    }

    #[test]
    fn descriptions() {
        assert_eq!(describe_stop(&Stop::Count(10)), "for 10 iteration");
        assert_eq!(describe_ops(&[op(0, "WRITE", 1.0)]), "WRITE");
        assert_eq!(
            describe_ops(&[op(0, "WRITE", 1.0), op(1, "READ", 3.0)]),
            "[WRITE, READ]"
        );
    }
}
