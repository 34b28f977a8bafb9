//! Commands that rewrite a table's SSTables one at a time: `nodetool garbagecollect` (each
//! live SSTable without what the table's other SSTables and memtables shadow
//! ([`garbage`](crate::compaction::garbage)) and without purgeable tombstones) and, through the
//! same [`one_by_one`], `nodetool scrub` (see `scrub`).

use super::core::Core;
use super::Storage;
use crate::compaction::exec;
use crate::compaction::{CompactionTask, TaskKind};
use crate::engine::LsmEngine;
use crate::error::Result;
use mutation::shadow::Granularity;
use mutation::TableId;

impl Storage {
    /// Garbage-collects every live SSTable of `table`; answers how many were rewritten (those
    /// a running compaction holds are skipped, as Cassandra skips them).
    pub fn garbage_collect(&self, table: TableId, granularity: Granularity) -> Result<usize> {
        let engine = self.engine(table)?;
        let mut rewritten = 0;
        one_by_one(&self.core, &engine, TaskKind::GarbageCollect, |task| {
            let context = self.core.compaction_context();
            if exec::garbage_collect(&engine, task, &context, granularity)?.is_some() {
                rewritten += 1;
            }
            Ok(())
        })?;
        Ok(rewritten)
    }
}

/// Runs `job` on each live SSTable of `engine` alone, oldest data first, as a task of `kind`
/// keeping the SSTable's level. SSTables a running compaction holds are skipped; answers how
/// many were. A failure goes through the disk failure policy and ends the run.
pub(super) fn one_by_one(
    core: &Core,
    engine: &LsmEngine,
    kind: TaskKind,
    mut job: impl FnMut(&CompactionTask) -> Result<()>,
) -> Result<usize> {
    let mut sstables: Vec<(i64, u64, u32)> = engine
        .view()
        .sstables
        .iter()
        .map(|s| {
            let sstable = &s.sstable;
            (
                sstable.stats().max_timestamp,
                s.generation(),
                sstable.level(),
            )
        })
        .collect();
    sstables.sort_unstable();
    let mut skipped = 0;
    for (_, generation, level) in sstables {
        let task = CompactionTask {
            inputs: vec![generation],
            fully_expired: Vec::new(),
            output_level: level,
            max_output_bytes: None,
            kind,
        };
        if !engine.claim(&task.inputs) {
            skipped += 1;
            continue;
        }
        let result = job(&task);
        engine.release(&task.inputs);
        if let Err(error) = &result {
            core.compaction_failed(engine, &task.inputs, error);
        }
        result?;
    }
    Ok(skipped)
}
