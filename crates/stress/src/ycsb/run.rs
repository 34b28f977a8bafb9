//! Running a YCSB phase: schema, prepared statements, `threadcount` workers (throttled to
//! `target` ops/s), and YCSB's report.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Consistency;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use super::generator::{key, KeyChooser};
use super::status::{self, Status};
use super::workload::YcsbOp;
use super::{Config, Phase};
use crate::client;
use crate::cpu;
use crate::javarand::JavaRandom;
use crate::metrics::{Measurement, OpStats, Recorder};
use crate::settings::Mode;

/// What the workers share.
struct Job {
    session: Session,
    insert: PreparedStatement,
    read: PreparedStatement,
    update: Vec<PreparedStatement>,
    scan: PreparedStatement,
    mix: Vec<(YcsbOp, f64)>,
    distribution: String,
    operations: u64,
    issued: AtomicU64,
    inserted: AtomicU64,
    field_length: usize,
    max_scan: u64,
    interval_ns: Option<u64>,
    start: Instant,
    recorder: Recorder,
}

/// Runs the phase; status lines (`-s`) go to `status_sink`.
pub async fn run(
    config: &Config,
    status_sink: Box<dyn Write + Send>,
) -> Result<Vec<String>, String> {
    let p = &config.props;
    let records: u64 = p.num("recordcount", 1000)?;
    let fields: usize = p.num("fieldcount", 10)?;
    let threads: u32 = p.num("threadcount", 1)?;
    let target: u64 = p.num("target", 0)?;
    let mix = match config.phase {
        Phase::Load => vec![(YcsbOp::Insert, 1.0)],
        Phase::Run => p.mix()?,
    };
    let read_cl = p.consistency("cassandra.readconsistencylevel")?;
    let write_cl = p.consistency("cassandra.writeconsistencylevel")?;
    let session = connect(p).await?;
    create_schema(&session, fields).await?;
    let prep = |q: String, cl: Consistency| {
        let s = &session;
        async move {
            let mut p = s
                .prepare(q.as_str())
                .await
                .map_err(|e| format!("Failed to prepare {q}: {e}"))?;
            // Results decoded with the metadata from PREPARE (the server may omit it).
            p.set_use_cached_result_metadata(true);
            p.set_consistency(cl);
            Ok::<_, String>(p)
        }
    };
    let names: Vec<String> = (0..fields).map(|i| format!("field{i}")).collect();
    let insert = prep(
        format!(
            "INSERT INTO ycsb.usertable (y_id,{}) VALUES (?{})",
            names.join(","),
            ",?".repeat(fields)
        ),
        write_cl,
    )
    .await?;
    let read = prep(
        "SELECT * FROM ycsb.usertable WHERE y_id = ?".into(),
        read_cl,
    )
    .await?;
    let mut update = Vec::new();
    for n in &names {
        update.push(
            prep(
                format!("UPDATE ycsb.usertable SET {n} = ? WHERE y_id = ?"),
                write_cl,
            )
            .await?,
        );
    }
    let scan = prep(
        "SELECT * FROM ycsb.usertable WHERE token(y_id) >= token(?) LIMIT ?".into(),
        read_cl,
    )
    .await?;
    let (operations, first) = match config.phase {
        Phase::Load => (p.num("insertcount", records)?, p.num("insertstart", 0)?),
        Phase::Run => (p.num("operationcount", 1000)?, records),
    };
    let job = Arc::new(Job {
        session,
        insert,
        read,
        update,
        scan,
        mix,
        distribution: p.str_or("requestdistribution", "uniform").to_string(),
        operations,
        issued: AtomicU64::new(0),
        inserted: AtomicU64::new(first),
        field_length: p.num("fieldlength", 100)?,
        max_scan: p.num("maxscanlength", 1000)?,
        interval_ns: (target > 0).then(|| 1_000_000_000 / target),
        start: Instant::now(),
        recorder: Recorder::new((threads as usize).min(16), YcsbOp::ALL.len()),
    });
    KeyChooser::new(&job.distribution, records.max(1))?;
    let status_every = match p.str_or("status", "false") {
        "true" => Some(Duration::from_secs(p.num("status.interval", 10u64)?.max(1))),
        _ => None,
    };
    let (done, finished) = oneshot::channel();
    let status = status_every.map(|every| {
        let sink = StatusSink {
            out: status_sink,
            every,
            label: p.str_or("status.label", "").to_string(),
        };
        let (ready, started) = oneshot::channel();
        let task = tokio::spawn(report_status(Arc::clone(&job), sink, finished, ready));
        (task, started)
    });
    let status = match status {
        Some((task, started)) => {
            let _ = started.await;
            Some(task)
        }
        None => None,
    };
    let cpu_start = cpu::now();
    let mut workers = JoinSet::new();
    for id in 0..threads.max(1) {
        workers.spawn(worker(Arc::clone(&job), id as usize, records.max(1)));
    }
    while workers.join_next().await.is_some() {}
    let elapsed = job.start.elapsed();
    let cpu_used = cpu::since(cpu_start);
    let _ = done.send(());
    let mut totals = match status {
        Some(task) => task
            .await
            .map_err(|e| format!("Status reporting failed: {e}"))?,
        None => status::empty(),
    };
    job.recorder.drain(&mut totals);
    Ok(report(&totals, elapsed, cpu_used))
}

/// Where and how often status lines are written.
struct StatusSink {
    out: Box<dyn Write + Send>,
    every: Duration,
    label: String,
}

/// YCSB's status thread: a line at once, then every `every`, and a last one when the
/// workers are done; returns the totals it accumulated. Times count from its own start.
async fn report_status(
    job: Arc<Job>,
    mut sink: StatusSink,
    mut finished: oneshot::Receiver<()>,
    ready: oneshot::Sender<()>,
) -> Vec<crate::metrics::OpStats> {
    let mut interval = status::empty();
    let mut status = Status::new(&sink.label);
    let every = sink.every;
    let mut deadline = Instant::now() + every;
    // The first line, before any worker has run: "0 sec: 0 operations; ".
    let _ = writeln!(sink.out, "{}", status.tick(&interval, job.operations));
    let _ = ready.send(());
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(deadline.into()) => deadline += every,
            _ = &mut finished => break,
        }
        job.recorder.drain(&mut interval);
        let _ = writeln!(sink.out, "{}", status.tick(&interval, job.operations));
        interval.iter_mut().for_each(|s| s.reset());
    }
    job.recorder.drain(&mut interval);
    let _ = writeln!(sink.out, "{}", status.tick(&interval, job.operations));
    let _ = sink.out.flush();
    status.totals
}

async fn connect(p: &super::Properties) -> Result<Session, String> {
    let hosts: Vec<String> = p
        .str_or("hosts", "127.0.0.1")
        .split(',')
        .map(str::to_string)
        .collect();
    let port: u16 = p.num("port", 9042)?;
    let mode = Mode {
        protocol_version: 4,
        compression: None,
        user: p.get("cassandra.username").map(str::to_string),
        password: p.get("cassandra.password").map(str::to_string),
        max_pending: 128,
        connections_per_host: 1,
    };
    client::connect(&hosts, port, &mode).await
}

async fn create_schema(session: &Session, fields: usize) -> Result<(), String> {
    let cols: String = (0..fields).map(|i| format!(", field{i} varchar")).collect();
    for q in [
        "CREATE KEYSPACE IF NOT EXISTS ycsb WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}".to_string(),
        format!("CREATE TABLE IF NOT EXISTS ycsb.usertable (y_id varchar PRIMARY KEY{cols})"),
    ] {
        session.query_unpaged(q.as_str(), ()).await.map_err(|e| format!("Cannot create ycsb.usertable: {e}"))?;
    }
    Ok(())
}

fn choose(mix: &[(YcsbOp, f64)], rng: &mut JavaRandom) -> YcsbOp {
    let total: f64 = mix.iter().map(|(_, p)| p).sum();
    let mut x = rng.next_double() * total;
    for &(op, p) in mix {
        if x < p {
            return op;
        }
        x -= p;
    }
    mix[mix.len() - 1].0
}

/// One worker: its RNG, key chooser and a reusable field value.
struct Local {
    rng: JavaRandom,
    chooser: KeyChooser,
    value: String,
}

impl Local {
    fn fill(&mut self, len: usize) -> &str {
        self.value.clear();
        for _ in 0..len {
            let c = b' ' + (self.rng.next_double() * 95.0) as u8;
            self.value.push(char::from(c.min(b'~')));
        }
        &self.value
    }
}

async fn worker(job: Arc<Job>, id: usize, records: u64) {
    let seed = (id as i64).wrapping_mul(0x9E37_79B9) ^ i64::from(std::process::id());
    let Ok(chooser) = KeyChooser::new(&job.distribution, records) else {
        return;
    };
    let mut local = Local {
        rng: JavaRandom::new(seed),
        chooser,
        value: String::new(),
    };
    loop {
        let i = job.issued.fetch_add(1, Ordering::Relaxed);
        if i >= job.operations {
            break;
        }
        if let Some(ns) = job.interval_ns {
            tokio::time::sleep_until(
                (job.start + Duration::from_nanos(i.saturating_mul(ns))).into(),
            )
            .await;
        }
        let op = choose(&job.mix, &mut local.rng);
        let started = Instant::now();
        let result = execute(&job, op, &mut local, id).await;
        measure(&job, id, op, started, result.is_ok());
    }
}

/// Records one operation's latency (YCSB's `DBWrapper` measures every call).
fn measure(job: &Job, worker: usize, op: YcsbOp, started: Instant, ok: bool) {
    let m = Measurement {
        intended: None,
        started,
        ended: Instant::now(),
        partitions: 1,
        rows: 1,
        error: !ok,
    };
    let slot = YcsbOp::ALL.iter().position(|o| *o == op).unwrap_or(0);
    job.recorder.record(worker, slot, &m);
}

async fn execute(job: &Job, op: YcsbOp, local: &mut Local, id: usize) -> Result<(), String> {
    let err = |e: scylla::errors::ExecutionError| e.to_string();
    let records = job.inserted.load(Ordering::Relaxed).max(1);
    match op {
        YcsbOp::Insert => {
            let n = job.inserted.fetch_add(1, Ordering::Relaxed);
            let k = key(n);
            let mut values: Vec<String> = Vec::with_capacity(job.update.len());
            for _ in 0..job.update.len() {
                values.push(local.fill(job.field_length).to_string());
            }
            let mut params: Vec<&str> = vec![k.as_str()];
            params.extend(values.iter().map(String::as_str));
            job.session
                .execute_unpaged(&job.insert, &params[..])
                .await
                .map_err(err)?;
        }
        YcsbOp::Read => {
            let k = key(local.chooser.next(records, &mut local.rng));
            job.session
                .execute_unpaged(&job.read, (k.as_str(),))
                .await
                .map_err(err)?;
        }
        YcsbOp::Update => update(job, local, records).await?,
        YcsbOp::Scan => {
            let k = key(local.chooser.next(records, &mut local.rng));
            let len = 1 + (local.rng.next_double() * job.max_scan as f64) as i32;
            job.session
                .execute_unpaged(&job.scan, (k.as_str(), len))
                .await
                .map_err(err)?;
        }
        YcsbOp::ReadModifyWrite => {
            // As YCSB: the read and the update are measured on their own too, and the
            // update is sent whatever the read returned.
            let n = local.chooser.next(records, &mut local.rng);
            let started = Instant::now();
            let read = job
                .session
                .execute_unpaged(&job.read, (key(n).as_str(),))
                .await;
            measure(job, id, YcsbOp::Read, started, read.is_ok());
            let started = Instant::now();
            let updated = update_key(job, local, n).await;
            measure(job, id, YcsbOp::Update, started, updated.is_ok());
            read.map_err(err)?;
            updated?;
        }
    }
    Ok(())
}

async fn update(job: &Job, local: &mut Local, records: u64) -> Result<(), String> {
    let n = local.chooser.next(records, &mut local.rng);
    update_key(job, local, n).await
}

/// `writeallfields=false`: one random field gets a new value.
async fn update_key(job: &Job, local: &mut Local, n: u64) -> Result<(), String> {
    let field =
        (local.rng.next_double() * job.update.len() as f64) as usize % job.update.len().max(1);
    let k = key(n);
    let len = job.field_length;
    let v = local.fill(len);
    job.session
        .execute_unpaged(&job.update[field], (v, k.as_str()))
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// YCSB's measurement summary.
fn report(stats: &[OpStats], elapsed: Duration, cpu_used: crate::report::CpuUse) -> Vec<String> {
    let ops = status::ops_of(stats);
    let ms = elapsed.as_millis();
    let cpu = (cpu_used.user + cpu_used.system).as_secs_f64() * 1e6 / ops.max(1) as f64;
    let mut out = vec![
        format!("[OVERALL], RunTime(ms), {ms}"),
        format!(
            "[OVERALL], Throughput(ops/sec), {}",
            ops as f64 * 1000.0 / ms.max(1) as f64
        ),
        format!("[OVERALL], ClientCpuPerOp(us), {cpu:.1}"),
    ];
    for (op, s) in YcsbOp::ALL.iter().zip(stats) {
        let h = &s.service;
        if h.is_empty() {
            continue;
        }
        let n = op.name();
        out.push(format!("[{n}], Operations, {}", h.len()));
        out.push(format!("[{n}], AverageLatency(us), {}", h.mean()));
        out.push(format!("[{n}], MinLatency(us), {}", h.min()));
        out.push(format!("[{n}], MaxLatency(us), {}", h.max()));
        out.push(format!(
            "[{n}], 95thPercentileLatency(us), {}",
            h.value_at_quantile(0.95)
        ));
        out.push(format!(
            "[{n}], 99thPercentileLatency(us), {}",
            h.value_at_quantile(0.99)
        ));
        out.push(format!("[{n}], Return=OK, {}", h.len() - s.errors));
        if s.errors > 0 {
            out.push(format!("[{n}], Return=ERROR, {}", s.errors));
        }
    }
    out
}
