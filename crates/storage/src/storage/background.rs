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

fn flush_loop(core: &Core) {
    while nap(core, PRESSURE_CHECK) {
        if let Err(error) = core.relieve_pressure() {
            tracing::error!("background flush failed: {error}");
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
