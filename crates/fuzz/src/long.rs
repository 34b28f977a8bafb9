//! The long mode: runs every target in child processes (`helenus-fuzz worker`) for a share of
//! the time, up to `jobs` at once. A child that dies of a signal (a stack overflow aborts) or
//! stops making progress (a hang) has its current input saved and is restarted with another
//! seed; at the end a summary of iterations and failures per target is printed. A child's
//! standard error (an abort's message, new failures as found) goes to `<out>/<target>.log`.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::driver::Target;
use crate::worker::{save_failure, Progress};

pub struct Options {
    pub seconds: f64,
    pub jobs: usize,
    pub out: PathBuf,
    pub seed: u64,
    /// A child whose input has not changed for this long is hung.
    pub hang: Duration,
    pub targets: Vec<&'static Target>,
}

/// What happened to one target.
#[derive(Debug, Default)]
pub struct Tally {
    pub name: &'static str,
    pub seconds: f64,
    pub iterations: u64,
    /// Panics and broken properties, caught inside the child.
    pub failures: u64,
    pub aborts: u64,
    pub hangs: u64,
}

/// One target's child process being watched.
struct Running {
    target: &'static Target,
    child: Child,
    progress: PathBuf,
    deadline: Instant,
    started: Instant,
    last_count: u64,
    last_change: Instant,
    restarts: u64,
    tally: Tally,
    /// Iterations and failures of children already finished.
    done_iterations: u64,
    done_failures: u64,
}

pub fn run(options: &Options) -> Vec<Tally> {
    if let Err(e) = fs::create_dir_all(&options.out) {
        eprintln!("cannot create {}: {e}", options.out.display());
        std::process::exit(2);
    }
    let jobs = options.jobs.clamp(1, options.targets.len().max(1));
    let share = options.seconds * jobs as f64 / options.targets.len().max(1) as f64;
    let mut queue: Vec<&'static Target> = options.targets.iter().rev().copied().collect();
    let mut running: Vec<Running> = Vec::new();
    let mut tallies = Vec::new();
    while !queue.is_empty() || !running.is_empty() {
        while running.len() < jobs {
            let Some(target) = queue.pop() else { break };
            running.push(start(options, target, share));
        }
        std::thread::sleep(Duration::from_millis(200));
        let mut still = Vec::new();
        for mut r in running.drain(..) {
            match watch(options, &mut r) {
                true => still.push(r),
                false => tallies.push(finish(options, r)),
            }
        }
        running = still;
    }
    tallies
}

fn start(options: &Options, target: &'static Target, seconds: f64) -> Running {
    let now = Instant::now();
    let progress = options.out.join(format!(".{}.progress", target.name));
    let mut r = Running {
        target,
        child: spawn(options, target, options.seed, seconds, &progress),
        progress,
        deadline: now + Duration::from_secs_f64(seconds),
        started: now,
        last_count: 0,
        last_change: now,
        restarts: 0,
        tally: Tally {
            name: target.name,
            ..Tally::default()
        },
        done_iterations: 0,
        done_failures: 0,
    };
    r.tally.seconds = seconds;
    r
}

fn spawn(options: &Options, target: &Target, seed: u64, seconds: f64, progress: &Path) -> Child {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("helenus-fuzz"));
    let log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(options.out.join(format!("{}.log", target.name)));
    let stderr = match log {
        Ok(file) => Stdio::from(file),
        Err(_) => Stdio::inherit(),
    };
    let scratch = scratch(options, target);
    if let Err(e) = fs::create_dir_all(&scratch) {
        eprintln!("cannot create {}: {e}", scratch.display());
        std::process::exit(2);
    }
    let spawned = Command::new(exe)
        .stderr(stderr)
        .env("TMPDIR", &scratch)
        .args(["worker", target.name, "--seed", &seed.to_string()])
        .args(["--seconds", &format!("{seconds:.3}")])
        .arg("--progress")
        .arg(progress)
        .arg("--out")
        .arg(&options.out)
        .spawn();
    spawned.unwrap_or_else(|e| {
        eprintln!("cannot start a worker: {e}");
        std::process::exit(2)
    })
}

/// The worker's temporary directory (its `TMPDIR`): what a worker killed for a hang or dead
/// of an abort left there (a node's data, files to corrupt) is removed with it.
fn scratch(options: &Options, target: &Target) -> PathBuf {
    options.out.join(format!(".{}.tmp", target.name))
}

/// Checks one child: `false` once its target is finished.
fn watch(options: &Options, r: &mut Running) -> bool {
    let state = Progress::read(&r.progress);
    if state.started != r.last_count {
        r.last_count = state.started;
        r.last_change = Instant::now();
    }
    match r.child.try_wait() {
        Ok(Some(status)) => on_exit(options, r, status),
        Ok(None) if r.last_change.elapsed() > options.hang => {
            let _ = r.child.kill();
            let _ = r.child.wait();
            r.tally.hangs += 1;
            record(options, r, "hang: no progress");
            restart(options, r)
        }
        Ok(None) => true,
        Err(e) => {
            eprintln!("{}: cannot wait for the worker: {e}", r.target.name);
            false
        }
    }
}

fn on_exit(options: &Options, r: &mut Running, status: ExitStatus) -> bool {
    if status.success() {
        let state = Progress::read(&r.progress);
        r.done_iterations += state.started;
        r.done_failures += state.failures;
        return false;
    }
    r.tally.aborts += 1;
    record(
        options,
        r,
        &format!("abort: the worker died ({})", describe(status)),
    );
    restart(options, r)
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (_, Some(signal)) => format!("signal {signal}"),
        (Some(code), None) => format!("exit code {code}"),
        (None, None) => "unknown status".to_string(),
    }
}

/// Saves the input the child was running and counts what it had done.
fn record(options: &Options, r: &mut Running, what: &str) {
    let state = Progress::read(&r.progress);
    r.done_iterations += state.started;
    r.done_failures += state.failures;
    let message = format!("{what} after {} inputs", state.started);
    eprintln!("{}: {message}", r.target.name);
    if let Err(e) = save_failure(&options.out, r.target.name, &state.input, &message) {
        eprintln!("cannot save the input: {e}");
    }
}

/// Starts another child with the next seed for the time left; `false` when none is left.
fn restart(options: &Options, r: &mut Running) -> bool {
    let left = r.deadline.saturating_duration_since(Instant::now());
    if left < Duration::from_millis(500) {
        return false;
    }
    r.restarts += 1;
    let seed = options.seed.wrapping_add(r.restarts);
    let _ = fs::remove_file(&r.progress);
    let _ = fs::remove_dir_all(scratch(options, r.target));
    r.child = spawn(options, r.target, seed, left.as_secs_f64(), &r.progress);
    r.last_count = 0;
    r.last_change = Instant::now();
    true
}

fn finish(options: &Options, mut r: Running) -> Tally {
    let _ = fs::remove_file(&r.progress);
    let _ = fs::remove_dir_all(scratch(options, r.target));
    r.tally.seconds = r.started.elapsed().as_secs_f64();
    r.tally.iterations = r.done_iterations;
    r.tally.failures = r.done_failures;
    r.tally
}

/// The summary table.
pub fn summary(tallies: &[Tally]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12} {:>9} {:>11} {:>9} {:>9} {:>7} {:>6}",
        "target", "seconds", "iterations", "per sec", "failures", "aborts", "hangs"
    );
    for t in tallies {
        let rate = t.iterations as f64 / t.seconds.max(0.001);
        let _ = writeln!(
            out,
            "{:<12} {:>9.0} {:>11} {:>9.1} {:>9} {:>7} {:>6}",
            t.name, t.seconds, t.iterations, rate, t.failures, t.aborts, t.hangs
        );
    }
    let total = |f: fn(&Tally) -> u64| tallies.iter().map(f).sum::<u64>();
    let _ = writeln!(
        out,
        "{:<12} {:>9.0} {:>11} {:>9} {:>9} {:>7} {:>6}",
        "total",
        tallies.iter().map(|t| t.seconds).sum::<f64>(),
        total(|t| t.iterations),
        "",
        total(|t| t.failures),
        total(|t| t.aborts),
        total(|t| t.hangs)
    );
    out
}
