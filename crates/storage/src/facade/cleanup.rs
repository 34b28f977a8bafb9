//! `nodetool cleanup` through [`Storage`]: after a flush, each SSTable of a table holding a
//! partition outside the ranges the node replicates is rewritten alone without those
//! partitions (Cassandra's cleanup compaction); an SSTable left with nothing is removed, and
//! one whose tokens all lie in a single owned range is left as it is. It shows in
//! `nodetool compactionstats` as Cleanup while it runs.

use std::collections::HashSet;

use super::estimates::{contains, right_end};
use super::garbage::one_by_one;
use super::Storage;
use crate::compaction::exec;
use crate::compaction::TaskKind;
use crate::error::Result;
use mutation::{TableId, TokenRange};

/// What the cleanup of one table did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CleanupReport {
    /// SSTables rewritten (or removed, when none of their partitions was kept).
    pub sstables: usize,
    /// SSTables left alone because a compaction held them.
    pub skipped: usize,
    /// Partitions of the rewritten SSTables kept, and dropped as not owned.
    pub partitions_kept: u64,
    pub partitions_dropped: u64,
}

/// Whether `token` lies in one of `ranges` (left-exclusive, right-inclusive, see
/// [`TokenRange`]).
pub(crate) fn in_ranges(ranges: &[TokenRange], token: i64) -> bool {
    ranges.iter().any(|range| contains(*range, token))
}

/// Whether every token from `min` to `max` lies in one of `ranges`.
fn spans_within(ranges: &[TokenRange], min: i64, max: i64) -> bool {
    ranges
        .iter()
        .any(|range| range.0 < min && max <= right_end(*range))
}

impl Storage {
    /// Flushes `table`, then rewrites each SSTable that may hold a partition outside `owned`
    /// without such partitions.
    pub fn cleanup(&self, table: TableId, owned: &[TokenRange]) -> Result<CleanupReport> {
        let engine = self.engine(table)?;
        self.core.flush(&engine)?;
        let needed: HashSet<u64> = engine
            .view()
            .sstables
            .iter()
            .filter(|live| {
                let stats = live.sstable.stats();
                match (stats.min_token(), stats.max_token()) {
                    (Some(min), Some(max)) => !spans_within(owned, min, max),
                    _ => false,
                }
            })
            .map(|live| live.generation())
            .collect();
        let mut report = CleanupReport::default();
        report.skipped = one_by_one(&self.core, &engine, TaskKind::Cleanup, |task| {
            if !task.inputs.iter().all(|g| needed.contains(g)) {
                return Ok(());
            }
            let before = partitions_of(&engine, &task.inputs);
            let context = self.core.compaction_context();
            if let Some(record) = exec::cleanup(&engine, task, &context, owned)? {
                report.sstables += 1;
                report.partitions_kept += record.partitions_out;
                report.partitions_dropped += before.saturating_sub(record.partitions_out);
            }
            Ok(())
        })?;
        let settings = engine.settings();
        tracing::info!(
            "cleanup of {}.{}: {} SSTables rewritten, {} partitions kept, {} not owned dropped",
            settings.keyspace,
            settings.name,
            report.sstables,
            report.partitions_kept,
            report.partitions_dropped
        );
        Ok(report)
    }
}

/// The partitions the SSTables of these generations hold.
fn partitions_of(engine: &crate::engine::LsmEngine, generations: &[u64]) -> u64 {
    engine
        .view()
        .sstables
        .iter()
        .filter(|live| generations.contains(&live.generation()))
        .map(|live| live.sstable.stats().partitions)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_hold_their_right_end_and_the_end_of_the_ring() {
        let ranges = [(-100, 0), (500, i64::MIN)];
        assert!(!in_ranges(&ranges, -100));
        assert!(in_ranges(&ranges, -99));
        assert!(in_ranges(&ranges, 0));
        assert!(!in_ranges(&ranges, 1));
        assert!(!in_ranges(&ranges, 500));
        assert!(in_ranges(&ranges, i64::MAX));
    }

    #[test]
    fn an_sstable_needs_no_cleanup_only_inside_one_range() {
        let ranges = [(-100, 0), (0, 100)];
        assert!(spans_within(&ranges, -99, 0));
        assert!(spans_within(&ranges, 1, 100));
        // both tokens are owned, but they straddle two ranges: what lies between is not known
        assert!(!spans_within(&ranges, -50, 50));
        assert!(!spans_within(&ranges, -100, 0));
        assert!(!spans_within(&[], 1, 1));
    }
}
