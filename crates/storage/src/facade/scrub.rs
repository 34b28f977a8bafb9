//! `nodetool scrub` and `nodetool verify` through [`Storage`]. A scrub rewrites each SSTable of
//! a table alone, keeping every partition that can still be read and dropping the others
//! ([`Salvage`](crate::sstable::Salvage)); a verify reads every chunk and block of each SSTable
//! and reports the corrupt ones, marking them suspect (background compactions leave them alone
//! until a scrub replaces them). Both show in `nodetool compactionstats` while they run.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::garbage::one_by_one;
use super::Storage;
use crate::compaction::exec;
use crate::compaction::TaskKind;
use crate::engine::{LiveSstable, LsmEngine};
use crate::error::{Result, StorageError};
use crate::health::Operation;
use crate::sstable::{Component, Loss};
use mutation::TableId;

/// What the scrub of one table did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScrubReport {
    /// SSTables rewritten.
    pub sstables: usize,
    /// SSTables left alone because a compaction held them.
    pub skipped: usize,
    /// Partitions written to the new SSTables.
    pub partitions: u64,
    /// What could not be read back and was dropped.
    pub dropped: Loss,
}

/// What the verify of one table found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// SSTables checked.
    pub sstables: usize,
    pub corrupt: Vec<CorruptSstable>,
}

/// One SSTable that failed a verify.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorruptSstable {
    /// Its Data file.
    pub data_file: PathBuf,
    /// Each problem, naming its file and offset.
    pub problems: Vec<String>,
}

/// How to verify.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VerifyOptions {
    /// Also decode every partition and match it with the Index (`--extended-verify`).
    pub extended: bool,
    /// Apply `disk_failure_policy` to a corrupt SSTable found (`--dfp`).
    pub apply_policy: bool,
}

impl Storage {
    /// Flushes `table`, then rewrites each of its SSTables without what cannot be read.
    pub fn scrub(&self, table: TableId) -> Result<ScrubReport> {
        let engine = self.engine(table)?;
        self.core.flush(&engine)?;
        let mut report = ScrubReport::default();
        report.skipped = one_by_one(&self.core, &engine, TaskKind::Scrub, |task| {
            let context = self.core.compaction_context();
            let (record, loss) = exec::scrub(&engine, task, &context)?;
            if let Some(record) = record {
                report.sstables += 1;
                report.partitions += record.partitions_out;
            }
            report.dropped.partitions += loss.partitions;
            report.dropped.problems.extend(loss.problems);
            Ok(())
        })?;
        let settings = engine.settings();
        if report.dropped.partitions > 0 {
            tracing::warn!(
                "scrub of {}.{}: {} partitions kept, {} unreadable partitions dropped: {}",
                settings.keyspace,
                settings.name,
                report.partitions,
                report.dropped.partitions,
                report.dropped.problems.join("; ")
            );
        }
        Ok(report)
    }

    /// Checks every live SSTable of `table`; the corrupt ones are reported and marked suspect.
    /// An I/O failure ends the check (and goes through the disk failure policy).
    pub fn verify(&self, table: TableId, options: VerifyOptions) -> Result<VerifyReport> {
        let engine = self.engine(table)?;
        let mut report = VerifyReport::default();
        // Not the view itself: held for the whole check, it would keep every memtable flushed
        // meanwhile in memory.
        let sstables = engine.view().sstables.clone();
        for live in &sstables {
            let Some(problems) = self.verify_one(&engine, live, options.extended)? else {
                continue;
            };
            report.sstables += 1;
            let Some(first) = problems.first() else {
                continue;
            };
            live.mark_suspect();
            if options.apply_policy {
                self.core.disk_failure(Operation::Read, first);
            }
            report.corrupt.push(CorruptSstable {
                data_file: live.sstable.descriptor().path(Component::Data),
                problems: problems.iter().map(|p| p.to_string()).collect(),
            });
        }
        Ok(report)
    }

    /// Checks one SSTable as a task of its table, claimed meanwhile (after the compaction
    /// holding it, if any, is over) so that no compaction deletes its files under the check;
    /// `None` when a compaction or a truncation removed it first.
    fn verify_one(
        &self,
        engine: &LsmEngine,
        live: &LiveSstable,
        extended: bool,
    ) -> Result<Option<Vec<StorageError>>> {
        let work = engine.start_task()?;
        let generation = [live.generation()];
        if !engine.claim_waiting(&generation, &work)? {
            return Ok(None);
        }
        let settings = engine.settings();
        let total = live.sstable.stats().uncompressed_size;
        let registry = &self.core.registry;
        let tracker = registry.start(&settings.keyspace, &settings.name, TaskKind::Verify, total);
        let progress = |done| {
            tracker.bytes_done.store(done, Ordering::Relaxed);
            engine.check(&work)
        };
        let checked = live.sstable.verify(extended, &progress);
        registry.finish(&tracker, None);
        engine.release(&generation);
        checked
            .inspect_err(|e| self.core.disk_failure(Operation::Read, e))
            .map(Some)
    }
}
