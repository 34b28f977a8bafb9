//! `nodetool garbagecollect`: each live SSTable of a table rewritten alone, oldest data first,
//! without what the table's other SSTables and memtables shadow
//! ([`garbage`](crate::compaction::garbage)) and without purgeable tombstones.

use super::core::Core;
use super::Storage;
use crate::compaction::exec;
use crate::compaction::garbage::Granularity;
use crate::compaction::{CompactionTask, TaskKind};
use crate::engine::LsmEngine;
use crate::error::Result;
use mutation::TableId;

impl Storage {
    /// Garbage-collects every live SSTable of `table`; answers how many were rewritten (those
    /// a running compaction holds are skipped, as Cassandra skips them).
    pub fn garbage_collect(&self, table: TableId, granularity: Granularity) -> Result<usize> {
        let engine = self.engine(table)?;
        collect(&self.core, &engine, granularity)
    }
}

fn collect(core: &Core, engine: &LsmEngine, granularity: Granularity) -> Result<usize> {
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
    let mut rewritten = 0;
    for (_, generation, level) in sstables {
        let task = CompactionTask {
            inputs: vec![generation],
            fully_expired: Vec::new(),
            output_level: level,
            max_output_bytes: None,
            kind: TaskKind::GarbageCollect,
        };
        if !engine.claim(&task.inputs) {
            continue;
        }
        let context = core.compaction_context();
        let result = exec::garbage_collect(engine, &task, &context, granularity);
        engine.release(&task.inputs);
        if result?.is_some() {
            rewritten += 1;
        }
    }
    Ok(rewritten)
}
