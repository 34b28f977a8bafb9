//! Commit-log replay at start-up: every record at or after a table's replay floor is applied
//! to the tables registered since the last replay; what SSTables already hold is skipped.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::core::Core;
use crate::commitlog::{last_written, read_segment, Position, SegmentFile};
use crate::engine::{LsmEngine, TableEngine};
use crate::error::{Result, StorageError};
use crate::log_entry::{decode, LogEntry};
use mutation::TableId;

/// What one [`Storage::replay`](super::Storage::replay) call did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayStats {
    pub segments: usize,
    pub records: usize,
    pub mutations_applied: usize,
    /// Mutations for tables not (yet) registered or already replayed.
    pub mutations_skipped: usize,
    /// Mutations already in SSTables (before their table's replay floor).
    pub mutations_flushed: usize,
    pub truncations: usize,
    pub torn_bytes: u64,
    pub corrupt_segments_skipped: usize,
}

/// Segments written before this process started, and the tables already restored from them.
pub struct ReplayState {
    pub segments: Vec<SegmentFile>,
    pub replayed: HashSet<TableId>,
}

type Targets = HashMap<TableId, Arc<LsmEngine>>;

/// Replays the old segments into the tables registered since the last replay.
pub fn replay(core: &Core) -> Result<ReplayStats> {
    let mut state = core.replay.lock();
    let mut stats = ReplayStats::default();
    if core.replay_finished.load(Ordering::Relaxed) {
        return Ok(stats);
    }
    let targets: Targets = core
        .tables
        .load()
        .iter()
        .filter(|(id, _)| !state.replayed.contains(id))
        .map(|(id, engine)| (*id, engine.clone()))
        .collect();
    if targets.is_empty() {
        return Ok(stats);
    }
    let last = last_written(&state.segments)?;
    let result = state
        .segments
        .iter()
        .enumerate()
        .try_for_each(|(index, segment)| {
            replay_segment(core, segment, Some(index) == last, &targets, &mut stats)
        });
    core.replay_cursor.store(u64::MAX, Ordering::Relaxed);
    result?;
    state.replayed.extend(targets.keys());
    tracing::debug!("commit log replay: {stats:?}");
    Ok(stats)
}

fn replay_segment(
    core: &Core,
    segment: &SegmentFile,
    is_last: bool,
    targets: &Targets,
    stats: &mut ReplayStats,
) -> Result<()> {
    let contents = read_segment(&segment.path, is_last, core.config.ignore_corruption)?;
    stats.segments += 1;
    stats.torn_bytes += contents.torn_bytes;
    stats.corrupt_segments_skipped += usize::from(contents.skipped_corruption);
    let records = contents.records;
    for (index, record) in records.iter().enumerate() {
        let entry = decode(&record.payload).map_err(|e| StorageError::Corrupt {
            file: segment.path.clone(),
            offset: record.offset,
            reason: format!("undecodable record: {}", e.0),
        })?;
        stats.records += 1;
        let position = Position::new(segment.id, record.offset);
        let next = records
            .get(index + 1)
            .map_or(Position::new(segment.id + 1, 0), |r| {
                Position::new(segment.id, r.offset)
            });
        match entry {
            LogEntry::Mutations(mutations) => core.replay_record(next, || {
                apply_mutations(mutations, position, targets, stats);
            }),
            // Not under the write barrier: a truncation takes the table's flush lock.
            LogEntry::Truncate(table) | LogEntry::Drop(table) => {
                truncate(table, position, targets, stats)?;
                core.replay_record(next, || {});
            }
        }
    }
    Ok(())
}

fn apply_mutations(
    mutations: Vec<mutation::Mutation>,
    position: Position,
    targets: &Targets,
    stats: &mut ReplayStats,
) {
    for mutation in mutations {
        match targets.get(&mutation.table) {
            Some(engine) if position < engine.floor() => stats.mutations_flushed += 1,
            Some(engine) => {
                engine.apply_logged(&mutation.key, mutation.update, position);
                stats.mutations_applied += 1;
            }
            None => stats.mutations_skipped += 1,
        }
    }
}

fn truncate(
    table: TableId,
    position: Position,
    targets: &Targets,
    stats: &mut ReplayStats,
) -> Result<()> {
    if let Some(engine) = targets.get(&table).filter(|e| position >= e.floor()) {
        engine.truncate()?;
        stats.truncations += 1;
    }
    Ok(())
}
