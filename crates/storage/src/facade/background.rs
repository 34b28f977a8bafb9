//! The node's background threads: the flush thread (memtable and commit-log pressure, checked
//! every [`PRESSURE_CHECK`]) and the compaction scheduler, which asks each table's strategy for
//! work and runs up to `concurrent_compactors` tasks, each on its own thread.
#![allow(unsafe_code)] // setpriority(2) and gettid(2) for the background threads' nice value

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::core::Core;
use super::now_seconds;
use crate::backoff::Backoff;
use crate::compaction::exec;
use crate::compaction::CompactionTask;
use crate::engine::LsmEngine;
use crate::error::{Result, StorageError};

/// How often memtable and commit-log sizes are checked.
const PRESSURE_CHECK: Duration = Duration::from_millis(50);
/// The pause after the first failed flush; it doubles with each failure in a row.
const FIRST_FLUSH_RETRY: Duration = Duration::from_millis(100);
/// The longest pause between flush attempts while they keep failing.
const MAX_FLUSH_RETRY: Duration = Duration::from_secs(10);
/// The CPU priority of flush and compaction threads (request threads run at 0).
const BACKGROUND_NICE: libc::c_int = 10;
/// How often strategies are asked for work when nothing wakes the scheduler.
const SCHEDULE_INTERVAL: Duration = Duration::from_secs(1);

/// Starts the flush and compaction-scheduler threads.
pub fn start(core: &Arc<Core>) -> Result<Vec<JoinHandle<()>>> {
    let flusher = core.clone();
    let scheduler = core.clone();
    Ok(vec![
        spawn("flush", move || flush_loop(&flusher))?,
        spawn("compaction", move || schedule_loop(&scheduler))?,
    ])
}

fn spawn(name: &str, body: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            yield_to_requests();
            body()
        })
        .map_err(|e| StorageError::Invalid(format!("cannot start the {name} thread: {e}")))
}

/// Runs the calling thread at a lower CPU priority (nice 10) than the threads that serve
/// requests, as Cassandra runs its compaction threads: a flush or a compaction then uses
/// the time they leave idle instead of keeping a request waiting for a core. It still gets
/// a share of a busy machine, and writers wait for memtable space when it falls behind.
fn yield_to_requests() {
    // SAFETY: a plain system call on the calling thread, with no memory passed.
    let failed =
        unsafe { libc::setpriority(libc::PRIO_PROCESS, this_thread(), BACKGROUND_NICE) != 0 };
    if failed {
        tracing::debug!(
            "cannot lower the priority of a background thread: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// The calling thread's id, which per-thread system calls such as `setpriority` take.
fn this_thread() -> libc::id_t {
    // SAFETY: gettid takes no argument and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as libc::id_t }
}

/// Sleeps up to `timeout` or until woken; `false` once the node stops.
fn nap(core: &Core, timeout: Duration) -> bool {
    let mut guard = core.wake.0.lock();
    if !core.stop.load(Ordering::Relaxed) {
        core.wake.1.wait_for(&mut guard, timeout);
    }
    !core.stop.load(Ordering::Relaxed)
}

/// Sleeps the whole of `pause`, however often woken meanwhile; `false` once the node stops.
fn sleep(core: &Core, pause: Duration) -> bool {
    let deadline = Instant::now() + pause;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || !nap(core, left) {
            return !core.stop.load(Ordering::Relaxed);
        }
    }
}

/// Checks the pressure every [`PRESSURE_CHECK`] (sooner when woken); after failures in a row
/// (a full or broken disk) sleeps the whole [`Backoff`] pause, which writers waiting for memtable
/// space do not cut short, and logs the failure at the 1st, 2nd, 4th, 8th… attempt.
fn flush_loop(core: &Core) {
    let mut backoff = Backoff::new(FIRST_FLUSH_RETRY, MAX_FLUSH_RETRY);
    loop {
        let rested = match backoff.failures() {
            0 => nap(core, PRESSURE_CHECK),
            _ => sleep(core, backoff.pause()),
        };
        if !rested {
            return;
        }
        match core.relieve_pressure() {
            Ok(()) => {
                let failures = backoff.succeeded();
                if failures > 0 {
                    tracing::info!("background flush recovered after {failures} failed attempts");
                }
            }
            Err(error) => {
                if backoff.failed(Instant::now()) {
                    tracing::error!(
                        "background flush failed ({} in a row; next attempt in {:?}): {error}",
                        backoff.failures(),
                        backoff.pause()
                    );
                }
            }
        }
    }
}

fn schedule_loop(core: &Arc<Core>) {
    while nap(core, SCHEDULE_INTERVAL) {
        schedule(core);
    }
}

/// Starts background tasks until `concurrent_compactors` run or no table has work.
pub fn schedule(core: &Arc<Core>) {
    core.compaction_workers.lock().retain(|w| !w.is_finished());
    if !core.compaction_backoff.lock().ready(Instant::now()) {
        return;
    }
    while core.running_compactions.load(Ordering::Relaxed)
        < core.concurrent_compactors.load(Ordering::Relaxed)
    {
        let Some((engine, task)) = pick(core) else {
            return;
        };
        core.running_compactions.fetch_add(1, Ordering::Relaxed);
        let worker = core.clone();
        let started = spawn("compactor", move || {
            run_claimed(&worker, &engine, &task);
            worker.running_compactions.fetch_sub(1, Ordering::Relaxed);
            worker.wake_all();
        });
        match started {
            Ok(handle) => core.compaction_workers.lock().push(handle),
            Err(error) => {
                core.running_compactions.fetch_sub(1, Ordering::Relaxed);
                tracing::error!("{error}");
                return;
            }
        }
    }
}

/// The first table (in registry order) whose strategy has a task, with its inputs claimed.
fn pick(core: &Core) -> Option<(Arc<LsmEngine>, CompactionTask)> {
    let (now_ms, now) = (now_millis(), now_seconds());
    core.engines()
        .into_iter()
        .filter(|e| e.autocompaction())
        .find_map(|engine| engine.next_task(now_ms, now).map(|task| (engine, task)))
}

/// Runs a task whose inputs are claimed, then releases them. A failure applies the disk
/// failure policy and holds back the next background compactions ([`Backoff`]); a compaction
/// cancelled by a DROP or TRUNCATE did not fail.
pub fn run_claimed(core: &Core, engine: &LsmEngine, task: &CompactionTask) {
    let context = core.compaction_context();
    let result = exec::run(engine, task, &context);
    engine.release(&task.inputs);
    match result {
        Err(StorageError::Closed) => tracing::info!("compaction of {:?} stopped", task.inputs),
        Err(StorageError::Cancelled(why)) => {
            tracing::info!("compaction of {:?} cancelled: {why}", task.inputs)
        }
        Err(error) => {
            core.compaction_failed(engine, &task.inputs, &error);
            if core.compaction_backoff.lock().failed(Instant::now()) {
                tracing::error!(
                    "compaction of {:?} in {} failed: {error}",
                    task.inputs,
                    engine.dir().display()
                );
            }
        }
        Ok(_) => {
            core.compaction_backoff.lock().succeeded();
        }
    }
}

/// Runs a major compaction of `engine` in the calling thread; returns the tasks run.
pub fn major(core: &Core, engine: &LsmEngine) -> Result<usize> {
    let mut done = 0;
    for task in engine.major_tasks(now_seconds()) {
        if !engine.claim(&task.inputs) {
            continue;
        }
        let context = core.compaction_context();
        let result = exec::run(engine, &task, &context);
        engine.release(&task.inputs);
        if let Err(error) = &result {
            core.compaction_failed(engine, &task.inputs, error);
        }
        result?;
        done += 1;
    }
    Ok(done)
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_threads_run_below_the_request_threads() {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = spawn("niced", move || {
            // SAFETY: a plain system call on the calling thread.
            let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, this_thread()) };
            let _ = tx.send(nice);
        })
        .unwrap();
        thread.join().unwrap();
        // At least BACKGROUND_NICE: a test run already niced further stays as it is.
        assert!(rx.recv().unwrap() >= BACKGROUND_NICE);
    }
}
