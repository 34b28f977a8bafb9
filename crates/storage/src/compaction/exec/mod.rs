//! Running a [`CompactionTask`] chosen by a strategy: merge the inputs' partition streams,
//! purge what may go ([`purge`]), write outputs split at the task's size (at its level), then
//! swap inputs for outputs in the engine's view and delete the inputs — inside a transaction log
//! ([`txn`]) so a crash at any point leaves a consistent set. Fully expired inputs are dropped
//! without being read; uplevel tasks only rewrite the level. Pacing comes from the node-wide
//! [`Throttle`]; progress is published through a [`Tracker`]. Every job runs as one of the
//! table's [`Task`]s: a DROP or TRUNCATE cancels it between two partitions, and it removes its
//! outputs and stops with [`StorageError::Cancelled`].

mod merge;
mod progress;
mod purge;
mod throttle;
mod txn;

#[cfg(test)]
mod tests;

pub use progress::{CompactionProgress, CompactionRecord, CompactionTotals, Registry, Tracker};
pub(crate) use purge::Purger;
pub use throttle::Throttle;
pub use txn::recover;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::compaction::{CompactionTask, TaskKind};
use crate::engine::{LiveSstable, LsmEngine, PartitionSource, Task};
use crate::error::{Result, StorageError};
use crate::facade::in_ranges;
use crate::filter::ReadFilter;
use crate::sstable::{Loss, PartitionStream, RepairMark, SstableWriter, WriteOptions};
use merge::MergedPartitions;
use mutation::partition::PartitionData;
use mutation::shadow::{remove_shadowed, Granularity};
use mutation::{PartitionKey, TokenRange};
use txn::Txn;

/// Node-wide services a compaction uses.
pub struct Context<'a> {
    pub throttle: &'a Throttle,
    pub registry: &'a Registry,
    /// Set when the node stops: the compaction aborts, leaving its inputs in place.
    pub stop: &'a AtomicBool,
    /// Current time in seconds (Cassandra's `nowInSec`).
    pub now: i32,
}

/// What a job does beyond merging and purging its inputs.
#[derive(Clone, Copy)]
enum Rewrite<'a> {
    Merge,
    /// Also drop what the table's other sources shadow (`nodetool garbagecollect`).
    GarbageCollect(Granularity),
    /// Read the inputs through [`Salvage`](crate::sstable::Salvage), which drops what cannot
    /// be read and records it here (`nodetool scrub`).
    Scrub(&'a Mutex<Loss>),
    /// Keep only the partitions whose token lies in one of these ranges (`nodetool cleanup`).
    Cleanup(&'a [TokenRange]),
    /// Write the partitions whose token lies in one of these ranges apart, pending for an
    /// incremental repair session (the task's repair state), and the others unrepaired.
    Anticompact(&'a [TokenRange]),
}

/// Runs `task` on `engine`, whose inputs the caller has claimed. `Ok(None)` when the inputs
/// changed meanwhile and nothing was done; [`StorageError::Cancelled`] when the table was
/// dropped or truncated.
pub fn run(
    engine: &LsmEngine,
    task: &CompactionTask,
    ctx: &Context<'_>,
) -> Result<Option<CompactionRecord>> {
    run_job(engine, task, ctx, Rewrite::Merge, None)
}

/// Runs `task` (one SSTable) as [`run`] does, also dropping what the table's other sources
/// shadow at `granularity` (`nodetool garbagecollect`).
pub fn garbage_collect(
    engine: &LsmEngine,
    task: &CompactionTask,
    ctx: &Context<'_>,
    granularity: Granularity,
) -> Result<Option<CompactionRecord>> {
    run_job(
        engine,
        task,
        ctx,
        Rewrite::GarbageCollect(granularity),
        None,
    )
}

/// Runs `task` (one SSTable) as [`run`] does, keeping only the partitions whose token lies in
/// one of `owned` (`nodetool cleanup`).
pub fn cleanup(
    engine: &LsmEngine,
    task: &CompactionTask,
    ctx: &Context<'_>,
    owned: &[TokenRange],
) -> Result<Option<CompactionRecord>> {
    run_job(engine, task, ctx, Rewrite::Cleanup(owned), None)
}

/// Runs `task` (one unrepaired SSTable) as [`run`] does, writing the partitions of `ranges`
/// pending for incremental repair `session` and the others unrepaired (Cassandra's
/// anticompaction).
pub fn anticompact(
    engine: &LsmEngine,
    task: &CompactionTask,
    ctx: &Context<'_>,
    ranges: &[TokenRange],
    session: uuid::Uuid,
) -> Result<Option<CompactionRecord>> {
    run_job(
        engine,
        task,
        ctx,
        Rewrite::Anticompact(ranges),
        Some(RepairMark::pending(session)),
    )
}

/// Runs `task` (one SSTable) as [`run`] does, keeping every partition that can still be read;
/// answers what could not be.
pub fn scrub(
    engine: &LsmEngine,
    task: &CompactionTask,
    ctx: &Context<'_>,
) -> Result<(Option<CompactionRecord>, Loss)> {
    let loss = Mutex::new(Loss::default());
    let record = run_job(engine, task, ctx, Rewrite::Scrub(&loss), None)?;
    Ok((record, loss.into_inner()))
}

/// Runs a job; its outputs take `repair` as their repair state, or their inputs' when `None`.
fn run_job(
    engine: &LsmEngine,
    task: &CompactionTask,
    ctx: &Context<'_>,
    rewrite: Rewrite<'_>,
    repair: Option<RepairMark>,
) -> Result<Option<CompactionRecord>> {
    let work = engine.start_task()?;
    // The view is dropped at once: held for the whole compaction, it would keep every memtable
    // flushed meanwhile in memory until the compaction ends.
    let (inputs, memtable_min) = {
        let view = engine.view();
        let inputs: Vec<Arc<LiveSstable>> = view
            .sstables
            .iter()
            .filter(|s| task.inputs.contains(&s.generation()))
            .cloned()
            .collect();
        let memtable_min = view.memtables().map(|m| m.min_timestamp()).min();
        (inputs, memtable_min.unwrap_or(i64::MAX))
    };
    if inputs.len() != task.inputs.len() {
        return Ok(None);
    }
    let settings = engine.settings();
    let total = inputs
        .iter()
        .map(|s| s.sstable.stats().uncompressed_size)
        .sum();
    let tracker = ctx
        .registry
        .start(&settings.keyspace, &settings.name, task.kind, total);
    let started = Instant::now();
    let result = if task.kind == TaskKind::Uplevel {
        uplevel(&inputs, task.output_level)
    } else {
        let job = Job {
            engine,
            task,
            work: &work,
            ctx,
            tracker: &tracker,
            options: WriteOptions {
                level: task.output_level,
                repair: repair.unwrap_or_else(|| merged_repair(&inputs)),
                ..settings.write.clone()
            },
            gc_before: settings.compaction_gc_before(
                ctx.now,
                inputs.iter().all(|s| s.sstable.repair().is_repaired()),
            ),
            dropped: &settings.dropped_columns,
            rewrite,
        };
        job.run(&inputs, memtable_min)
    };
    let record =
        result.map(|outputs| outputs.map(|outputs| record(&tracker, &inputs, &outputs, started)));
    ctx.registry
        .finish(&tracker, record.as_ref().ok().cloned().flatten());
    if let Ok(Some(r)) = &record {
        log(r, started);
    }
    record
}

/// The repair state of what merging `inputs` writes: the pending session they share, or the
/// oldest repair time when all were repaired (Cassandra's minimum `repairedAt`), otherwise
/// unrepaired (compaction does not mix them, see [`RepairGroup`](crate::compaction::RepairGroup)).
fn merged_repair(inputs: &[Arc<LiveSstable>]) -> RepairMark {
    let marks: Vec<RepairMark> = inputs.iter().map(|s| s.sstable.repair()).collect();
    let Some(first) = marks.first() else {
        return RepairMark::UNREPAIRED;
    };
    if first.pending_repair.is_some() && marks.iter().all(|m| m == first) {
        return *first;
    }
    if marks.iter().all(|m| m.is_repaired()) {
        let oldest = marks.iter().map(|m| m.repaired_at).min().unwrap_or(0);
        return RepairMark::repaired(oldest);
    }
    RepairMark::UNREPAIRED
}

fn uplevel(inputs: &[Arc<LiveSstable>], level: u32) -> Result<Option<Vec<Arc<LiveSstable>>>> {
    for input in inputs {
        input.sstable.set_level(level)?;
    }
    Ok(Some(inputs.to_vec()))
}

/// One merging compaction in progress.
struct Job<'a> {
    engine: &'a LsmEngine,
    task: &'a CompactionTask,
    work: &'a Task<'a>,
    ctx: &'a Context<'a>,
    tracker: &'a Tracker,
    options: WriteOptions,
    gc_before: i32,
    dropped: &'a BTreeMap<String, i64>,
    rewrite: Rewrite<'a>,
}

impl<'a> Job<'a> {
    /// Writes the outputs and installs them; `None` when a truncation removed the inputs. A
    /// fully expired input is dropped unmerged when the memtables (oldest write
    /// `memtable_min`) cannot hold data its tombstones shadow.
    fn run(
        &self,
        inputs: &[Arc<LiveSstable>],
        memtable_min: i64,
    ) -> Result<Option<Vec<Arc<LiveSstable>>>> {
        let merged: Vec<&Arc<LiveSstable>> = inputs
            .iter()
            .filter(|s| {
                !(self.task.fully_expired.contains(&s.generation())
                    && s.sstable.stats().max_timestamp < memtable_min)
            })
            .collect();
        let dir = self.engine.dir();
        let mut txn = Txn::begin(dir, self.task.inputs[0], &self.task.inputs)?;
        let outputs = match self.write_outputs(&merged, &mut txn) {
            Ok(outputs) => outputs,
            Err(error) => {
                txn.finish()?;
                return Err(error);
            }
        };
        txn.commit()?;
        let installed = self.engine.replace(&self.task.inputs, outputs.clone())?;
        txn.finish()?;
        Ok(installed.then_some(outputs))
    }

    /// Merges and purges the inputs into new SSTables; on failure removes those finished.
    fn write_outputs(
        &self,
        inputs: &[&Arc<LiveSstable>],
        txn: &mut Txn,
    ) -> Result<Vec<Arc<LiveSstable>>> {
        let mut outputs = Vec::new();
        let result = self.write_into(inputs, txn, &mut outputs);
        if result.is_err() {
            for output in &outputs {
                output.sstable.descriptor().delete()?;
            }
        }
        result.map(|()| outputs)
    }

    fn write_into(
        &self,
        inputs: &[&Arc<LiveSstable>],
        txn: &mut Txn,
        outputs: &mut Vec<Arc<LiveSstable>>,
    ) -> Result<()> {
        let mut merged = MergedPartitions::new(self.streams(inputs));
        let mut writers: [Option<SstableWriter>; 2] = [None, None];
        let mut read = 0;
        while let Some(item) = merged.next() {
            self.check()?;
            let (key, data) = item?;
            let purger = Purger::new(self.ctx.now, self.gc_before, || self.horizon(&key))
                .with_dropped(self.dropped);
            let kept = match self.rewrite {
                Rewrite::Cleanup(owned) if !in_ranges(owned, key.token) => None,
                _ => self.without_garbage(&key, data)?,
            };
            if let Some(data) = kept.and_then(|data| purger.partition(data)) {
                let slot = self.slot(&key);
                let current = match &mut writers[slot] {
                    Some(w) => w,
                    None => writers[slot].insert(self.new_output(txn, slot)?),
                };
                current.append(&key, &data)?;
                if self
                    .task
                    .max_output_bytes
                    .is_some_and(|max| current.bytes_written() >= max)
                {
                    outputs.extend(finish(writers[slot].take())?);
                }
            }
            let now_read = merged.bytes_read();
            self.ctx
                .throttle
                .acquire(now_read - read, || self.check().is_err());
            read = now_read;
            self.tracker.bytes_done.store(read, Ordering::Relaxed);
        }
        for writer in writers {
            outputs.extend(finish(writer)?);
        }
        Ok(())
    }

    /// The output a partition goes to: 0, or 1 for the partitions an anticompaction leaves
    /// unrepaired.
    fn slot(&self, key: &PartitionKey) -> usize {
        match self.rewrite {
            Rewrite::Anticompact(ranges) if !in_ranges(ranges, key.token) => 1,
            _ => 0,
        }
    }

    /// Fails once the node stops ([`StorageError::Closed`]) or the table is dropped or
    /// truncated ([`StorageError::Cancelled`]).
    fn check(&self) -> Result<()> {
        if self.ctx.stop.load(Ordering::Relaxed) {
            return Err(StorageError::Closed);
        }
        self.engine.check(self.work)
    }

    /// The inputs' partition streams: salvaged for a scrub, as written otherwise.
    fn streams<'s>(&self, inputs: &[&'s Arc<LiveSstable>]) -> Vec<Box<dyn PartitionStream + 's>>
    where
        'a: 's,
    {
        inputs
            .iter()
            .map(|s| -> Box<dyn PartitionStream + 's> {
                match self.rewrite {
                    Rewrite::Scrub(loss) => Box::new(s.sstable.salvage(loss)),
                    Rewrite::Merge
                    | Rewrite::GarbageCollect(_)
                    | Rewrite::Cleanup(_)
                    | Rewrite::Anticompact(_) => Box::new(s.sstable.iter()),
                }
            })
            .collect()
    }

    /// A writer for output `slot` (see [`slot`](Self::slot)).
    fn new_output(&self, txn: &mut Txn, slot: usize) -> Result<SstableWriter> {
        let generation = self.engine.next_generation();
        txn.add_output(generation)?;
        let expected = self
            .task
            .max_output_bytes
            .unwrap_or(self.tracker.bytes_total);
        let mut options = self.options.clone();
        if slot == 1 {
            options.repair = RepairMark::UNREPAIRED;
        }
        self.engine.create_writer(generation, options, expected)
    }

    /// `data` without what the other sources shadow, when garbage collecting.
    fn without_garbage(
        &self,
        key: &PartitionKey,
        data: PartitionData,
    ) -> Result<Option<PartitionData>> {
        let Rewrite::GarbageCollect(granularity) = self.rewrite else {
            return Ok(Some(data));
        };
        let view = self.engine.view();
        let mut others = PartitionData::default();
        for memtable in view.memtables() {
            others.merge(
                memtable
                    .partition(key, &ReadFilter::all())?
                    .unwrap_or_default(),
            );
        }
        for live in &view.sstables {
            if !self.task.inputs.contains(&live.generation()) {
                let theirs = live.sstable.read(key, &ReadFilter::all())?;
                others.merge(theirs.unwrap_or_default());
            }
        }
        Ok(remove_shadowed(data, &others, granularity))
    }

    /// The oldest timestamp that sources outside this compaction may hold for `key`: tombstones
    /// at or above it may still shadow data there.
    fn horizon(&self, key: &PartitionKey) -> i64 {
        let view = self.engine.view();
        let memtables = view
            .memtables()
            .filter(|m| m.contains(key))
            .map(|m| m.min_timestamp());
        let sstables = view
            .sstables
            .iter()
            .filter(|s| !self.task.inputs.contains(&s.generation()) && s.sstable.may_contain(key))
            .map(|s| s.sstable.stats().min_timestamp);
        memtables.chain(sstables).min().unwrap_or(i64::MAX)
    }
}

fn finish(writer: Option<SstableWriter>) -> Result<Option<Arc<LiveSstable>>> {
    let Some(writer) = writer else {
        return Ok(None);
    };
    let desc = writer.finish()?;
    Ok(Some(Arc::new(LiveSstable::open(&desc)?)))
}

fn record(
    tracker: &Tracker,
    inputs: &[Arc<LiveSstable>],
    outputs: &[Arc<LiveSstable>],
    started: Instant,
) -> CompactionRecord {
    let size = |set: &[Arc<LiveSstable>]| set.iter().map(|s| s.sstable.size_on_disk()).sum();
    let finished_at_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    CompactionRecord {
        id: tracker.id,
        keyspace: tracker.keyspace.clone(),
        table: tracker.table.clone(),
        kind: tracker.kind,
        finished_at_ms,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        sstables_in: inputs.len(),
        sstables_out: outputs.len(),
        bytes_in: size(inputs),
        bytes_out: size(outputs),
        partitions_out: outputs.iter().map(|s| s.sstable.stats().partitions).sum(),
    }
}

fn log(r: &CompactionRecord, started: Instant) {
    let seconds = started.elapsed().as_secs_f64().max(1e-6);
    tracing::info!(
        "compacted {}.{} ({:?}): {} SSTables, {} bytes -> {} SSTables, {} bytes, {} partitions in {:.3}s ({:.1} MB/s)",
        r.keyspace,
        r.table,
        r.kind,
        r.sstables_in,
        r.bytes_in,
        r.sstables_out,
        r.bytes_out,
        r.partitions_out,
        seconds,
        r.bytes_in as f64 / seconds / 1e6
    );
}
