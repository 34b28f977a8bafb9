//! Incremental repair's way in (Cassandra's `PendingAntiCompaction`, `LocalSessions` and
//! `mutateRepaired`): the unrepaired SSTables of a session's ranges marked pending for the
//! session (those holding data outside the ranges split first: anticompaction), the data of
//! one repair state validated alone, and the session's SSTables promoted to repaired when it
//! succeeds or returned to unrepaired when it fails.

use super::estimates::right_end;
use super::garbage::one_by_one;
use super::Storage;
use crate::compaction::exec;
use crate::compaction::TaskKind;
use crate::engine::LsmEngine;
use crate::error::Result;
use crate::filter::KeyRange;
use crate::sstable::{RepairMark, Sstable};
use mutation::scan::ScanSource;
use mutation::{TableId, TokenRange};
use uuid::Uuid;

/// The data a validation reads, by repair state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepairScope {
    /// Everything: memtables and every SSTable (full repair).
    All,
    /// The memtables and the unrepaired SSTables (an incremental repair's preview).
    Unrepaired,
    /// The repaired SSTables (`--validate`).
    Repaired,
    /// The SSTables pending for one incremental repair session.
    Pending(Uuid),
}

impl RepairScope {
    fn memtables(self) -> bool {
        matches!(self, RepairScope::All | RepairScope::Unrepaired)
    }

    fn keeps(self, sstable: &Sstable) -> bool {
        let mark = sstable.repair();
        match self {
            RepairScope::All => true,
            RepairScope::Unrepaired => mark == RepairMark::UNREPAIRED,
            RepairScope::Repaired => mark.is_repaired(),
            RepairScope::Pending(session) => mark.pending_repair == Some(session),
        }
    }
}

/// What marking a table's data pending did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PendingReport {
    /// SSTables marked pending whole.
    pub marked: usize,
    /// SSTables split in a pending and an unrepaired part.
    pub split: usize,
}

impl Storage {
    /// Flushes `table`, then marks its unrepaired data of `ranges` (non-wrapping, see
    /// [`TokenRange`]) pending for incremental repair `session`: an SSTable lying inside the
    /// ranges is marked as it is, one holding partitions outside them is split first. An
    /// SSTable a running compaction holds is left unrepaired (a later repair covers it).
    pub fn mark_pending(
        &self,
        table: TableId,
        ranges: &[TokenRange],
        session: Uuid,
    ) -> Result<PendingReport> {
        let engine = self.engine(table)?;
        self.core.flush(&engine)?;
        let mut report = PendingReport::default();
        let candidates = unrepaired_touching(&engine, ranges);
        one_by_one(&self.core, &engine, TaskKind::Anticompaction, |task| {
            let Some((generation, inside)) = candidates
                .iter()
                .find(|(g, _)| task.inputs == [*g])
                .copied()
            else {
                return Ok(());
            };
            if inside {
                set_repair(&engine, generation, RepairMark::pending(session))?;
                report.marked += 1;
                return Ok(());
            }
            let context = self.core.compaction_context();
            if exec::anticompact(&engine, task, &context, ranges, session)?.is_some() {
                report.split += 1;
            }
            Ok(())
        })?;
        Ok(report)
    }

    /// Gives the SSTables pending for `session` the state `to`: repaired at the session's
    /// time when it succeeded, unrepaired when it failed. Answers how many changed. Each is
    /// claimed while it changes, so no compaction starts on it; one a running compaction holds
    /// is waited for, and that compaction's output (pending for the session as its inputs
    /// were) changes in turn, so nothing is left pending for an ended session. Blocking.
    pub fn finish_pending(&self, table: TableId, session: Uuid, to: RepairMark) -> Result<usize> {
        let engine = self.engine(table)?;
        let mut changed = 0;
        loop {
            let pending = pending_for(&engine, session);
            if pending.is_empty() {
                break;
            }
            let mut busy = false;
            for generation in pending {
                if !engine.claim(&[generation]) {
                    busy = true;
                    continue;
                }
                let result = set_repair(&engine, generation, to);
                engine.release(&[generation]);
                result?;
                changed += 1;
            }
            if busy {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        if changed > 0 {
            self.core.wake_background();
        }
        Ok(changed)
    }

    /// Returns every pending SSTable of every table to unrepaired: at start-up, no session of
    /// a previous run can still end (its coordinator's messages failed while this node was
    /// down, so it releases), and data left pending would never be compared again. Answers
    /// how many SSTables changed.
    pub fn release_all_pending(&self) -> Result<usize> {
        let mut released = 0;
        for engine in self.core.engines() {
            for live in &engine.view().sstables {
                if live.sstable.repair().pending_repair.is_some() {
                    live.sstable.set_repair(RepairMark::UNREPAIRED)?;
                    released += 1;
                }
            }
        }
        Ok(released)
    }

    /// The incremental repair sessions some SSTable of `table` is pending for.
    pub fn pending_sessions(&self, table: TableId) -> Result<Vec<Uuid>> {
        let engine = self.engine(table)?;
        let mut sessions: Vec<Uuid> = engine
            .view()
            .sstables
            .iter()
            .filter_map(|live| live.sstable.repair().pending_repair)
            .collect();
        sessions.sort_unstable();
        sessions.dedup();
        Ok(sessions)
    }

    /// Up to `limit` partitions of `range` in `scope`, as [`validation_page`](Self::validation_page)
    /// reads them.
    pub(crate) fn scoped_page(
        &self,
        engine: &LsmEngine,
        range: &KeyRange,
        scope: RepairScope,
        limit: usize,
    ) -> Result<ScanSource> {
        self.checked_read(
            engine,
            engine.scan_source_of(range, limit, scope.memtables(), |s| scope.keeps(s)),
        )
    }
}

/// The unrepaired SSTables of `engine` holding tokens of `ranges`, each with whether all its
/// tokens lie inside one of them.
fn unrepaired_touching(engine: &LsmEngine, ranges: &[TokenRange]) -> Vec<(u64, bool)> {
    engine
        .view()
        .sstables
        .iter()
        .filter(|live| live.sstable.repair() == RepairMark::UNREPAIRED)
        .filter_map(|live| {
            let stats = live.sstable.stats();
            let (min, max) = (stats.min_token()?, stats.max_token()?);
            let touches = ranges.iter().any(|r| r.0 < max && min <= right_end(*r));
            let inside = ranges.iter().any(|r| r.0 < min && max <= right_end(*r));
            touches.then_some((live.generation(), inside))
        })
        .collect()
}

/// The generations of `engine`'s SSTables pending for `session`.
fn pending_for(engine: &LsmEngine, session: Uuid) -> Vec<u64> {
    engine
        .view()
        .sstables
        .iter()
        .filter(|live| live.sstable.repair().pending_repair == Some(session))
        .map(|live| live.generation())
        .collect()
}

fn set_repair(engine: &LsmEngine, generation: u64, mark: RepairMark) -> Result<()> {
    match engine
        .view()
        .sstables
        .iter()
        .find(|s| s.generation() == generation)
    {
        Some(live) => live.sstable.set_repair(mark),
        None => Ok(()),
    }
}
