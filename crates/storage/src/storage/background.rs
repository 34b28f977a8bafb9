//! The node's background threads: the flush thread (memtable and commit-log pressure, checked
//! every [`PRESSURE_CHECK`]) and the compaction scheduler, which asks each table's strategy for
//! work and runs up to `concurrent_compactors` tasks, each on its own thread.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::core::Core;
use super::now_seconds;
use crate::compaction::exec;
use crate::compaction::CompactionTask;
use crate::engine::LsmEngine;
use crate::error::{Result, StorageError};

/// How often memtable and commit-log sizes are checked.
const PRESSURE_CHECK: Duration = Duration::from_millis(50);
/// The longest pause between flush attempts while they keep failing.
const MAX_FLUSH_RETRY: Duration = Duration::from_secs(10);
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
        .spawn(body)
        .map_err(|e| StorageError::Invalid(format!("cannot start the {name} thread: {e}")))
}

/// Sleeps up to `timeout` or until woken; `false` once the node stops.
fn nap(core: &Core, timeout: Duration) -> bool {
    let mut guard = core.wake.0.lock();
    if !core.stop.load(Ordering::Relaxed) {
        core.wake.1.wait_for(&mut guard, timeout);
    }
    !core.stop.load(Ordering::Relaxed)
}

/// Checks the pressure every [`PRESSURE_CHECK`]; after failures in a row (a full or broken
/// disk) waits longer between attempts, doubling up to [`MAX_FLUSH_RETRY`], and logs the
/// failure at the 1st, 2nd, 4th, 8th… attempt rather than at every one.
fn flush_loop(core: &Core) {
    let mut failures = 0u32;
    while nap(core, flush_pause(failures)) {
        match core.relieve_pressure() {
            Ok(()) if failures > 0 => {
                tracing::info!("background flush recovered after {failures} failed attempts");
                failures = 0;
            }
            Ok(()) => {}
            Err(error) => {
                failures = failures.saturating_add(1);
                if failures.is_power_of_two() {
                    let pause = flush_pause(failures);
                    tracing::error!(
                        "background flush failed ({failures} in a row; next attempt in {pause:?}): {error}"
                    );
                }
            }
        }
    }
}

/// The pause before the next pressure check after `failures` failed ones in a row.
fn flush_pause(failures: u32) -> Duration {
    PRESSURE_CHECK
        .saturating_mul(1 << failures.min(10))
        .min(MAX_FLUSH_RETRY)
}

fn schedule_loop(core: &Arc<Core>) {
    while nap(core, SCHEDULE_INTERVAL) {
        schedule(core);
    }
}

/// Starts background tasks until `concurrent_compactors` run or no table has work.
pub fn schedule(core: &Arc<Core>) {
    core.compaction_workers.lock().retain(|w| !w.is_finished());
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

/// Runs a task whose inputs are claimed, then releases them.
pub fn run_claimed(core: &Core, engine: &LsmEngine, task: &CompactionTask) {
    let context = core.compaction_context();
    let result = exec::run(engine, task, &context);
    engine.release(&task.inputs);
    match result {
        Err(StorageError::Closed) => tracing::info!("compaction of {:?} stopped", task.inputs),
        Err(error) => tracing::error!(
            "compaction of {:?} in {} failed: {error}",
            task.inputs,
            engine.dir().display()
        ),
        Ok(_) => {}
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
    fn flush_attempts_back_off_while_they_fail() {
        assert_eq!(flush_pause(0), PRESSURE_CHECK);
        assert_eq!(flush_pause(1), PRESSURE_CHECK * 2);
        assert_eq!(flush_pause(3), PRESSURE_CHECK * 8);
        assert_eq!(flush_pause(8), MAX_FLUSH_RETRY);
        assert_eq!(flush_pause(u32::MAX), MAX_FLUSH_RETRY);
    }
}
