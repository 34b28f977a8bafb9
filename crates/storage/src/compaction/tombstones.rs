//! Tombstone-driven selection shared by the strategies: Cassandra's `worthDroppingTombstones`
//! (single-SSTable tombstone compactions) and `getFullyExpiredSSTables`.

use super::options::CommonOptions;
use super::overlap::{intersects, uncovered_fraction};
use super::SstableInfo;

/// Whether a single-SSTable tombstone compaction of `target` is expected to purge enough.
///
/// The rule, as Cassandra's `AbstractCompactionStrategy.worthDroppingTombstones`:
/// 1. the SSTable is at least `tombstone_compaction_interval` seconds old (`created_at_ms`),
///    so an estimate that turns out wrong cannot loop compactions;
/// 2. its droppable-tombstone ratio at `gc_before` is above `tombstone_threshold`;
/// 3. with `unchecked_tombstone_compaction` that suffices; otherwise it suffices when no other
///    SSTable overlaps its token range, or when it is fully expired;
/// 4. otherwise the part of its keys outside the token ranges of the *blocking* overlapping
///    SSTables is estimated (Cassandra samples its index summary; here keys are taken as uniform
///    over the token range, so the estimate is the fraction of the range no blocker covers) and
///    the compaction is worth it when `uncovered_fraction × droppable_ratio > tombstone_threshold`.
///    SSTables with fewer than two keys are skipped, as Cassandra skips those with fewer than
///    two index samples.
///
/// Helenus refinement of step 4: an overlapping SSTable blocks only if it may hold data older
/// than the target's newest timestamp (`other.min_timestamp <= target.max_timestamp`). A
/// tombstone is purged when it is older than every overlapping SSTable's oldest data (the rule
/// of Cassandra's `CompactionController` purge evaluator), so SSTables holding only newer data
/// never prevent the purge. Cassandra counts them anyway; since with hashed partitioners every
/// flush spans almost the whole ring, its check then rejects the one old huge SSTable of the
/// `002` failure forever, which this refinement prevents by default.
///
/// With `only_purge_repaired_tombstones`, unrepaired SSTables never qualify (nothing would be
/// purged).
pub(crate) fn worth_dropping(
    target: &SstableInfo,
    all: &[SstableInfo],
    common: &CommonOptions,
    now_ms: i64,
    gc_before: i64,
) -> bool {
    if common.only_purge_repaired_tombstones && !target.repaired {
        return false;
    }
    let interval_ms = common.tombstone_interval_s.saturating_mul(1000);
    if now_ms < target.created_at_ms.saturating_add(interval_ms) {
        return false;
    }
    if target.droppable_tombstones <= common.tombstone_threshold {
        return false;
    }
    if common.unchecked_tombstone_compaction {
        return true;
    }
    let overlaps: Vec<&SstableInfo> = all
        .iter()
        .filter(|o| o.generation != target.generation && intersects(target, o))
        .collect();
    if overlaps.is_empty() || is_expired_among(target, &overlaps, gc_before) {
        return true;
    }
    let blockers: Vec<&SstableInfo> = overlaps
        .into_iter()
        .filter(|o| o.min_timestamp <= target.max_timestamp)
        .collect();
    if blockers.is_empty() {
        return true;
    }
    if target.key_count < 2 {
        return false;
    }
    uncovered_fraction(target, &blockers) * target.droppable_tombstones > common.tombstone_threshold
}

/// `target` is expired and nothing it may shadow in `overlaps` is older than its newest cell.
fn is_expired_among(target: &SstableInfo, overlaps: &[&SstableInfo], gc_before: i64) -> bool {
    let min_live = overlaps
        .iter()
        .filter(|o| o.max_local_deletion_time >= gc_before)
        .map(|o| o.min_timestamp)
        .min()
        .unwrap_or(i64::MAX);
    target.max_local_deletion_time < gc_before && target.max_timestamp < min_live
}

/// The generations of SSTables that can be dropped whole at `gc_before`, as Cassandra's
/// `CompactionController.getFullyExpiredSSTables` with every SSTable not being compacted as a
/// candidate and every SSTable overlapping a candidate as the overlap set.
///
/// An SSTable is fully expired when all its content expired or was deleted before `gc_before`
/// (`max_local_deletion_time < gc_before`) and its newest timestamp is older than the oldest
/// timestamp of every overlapping SSTable that still holds live data — so its tombstones shadow
/// nothing that survives. Memtables are not visible here: the executor must repeat the check
/// against them before deleting files, as Cassandra's `CompactionController` does.
pub fn fully_expired(sstables: &[SstableInfo], gc_before: i64) -> Vec<u64> {
    expired_generations(sstables, gc_before, false)
}

/// [`fully_expired`], or with `ignore_overlaps` (`unsafe_aggressive_sstable_expiration`) every
/// candidate past `gc_before` regardless of overlaps.
pub(crate) fn expired_generations(
    sstables: &[SstableInfo],
    gc_before: i64,
    ignore_overlaps: bool,
) -> Vec<u64> {
    let candidates: Vec<&SstableInfo> = sstables.iter().filter(|s| !s.being_compacted).collect();
    let past_gc = candidates
        .iter()
        .filter(|s| s.max_local_deletion_time < gc_before);
    if ignore_overlaps {
        return sorted(past_gc.map(|s| s.generation).collect());
    }
    let min_live = sstables
        .iter()
        .filter(|s| s.max_local_deletion_time >= gc_before)
        .filter(|s| candidates.iter().any(|c| intersects(c, s)))
        .map(|s| s.min_timestamp)
        .min()
        .unwrap_or(i64::MAX);
    sorted(
        past_gc
            .filter(|s| s.max_timestamp < min_live)
            .map(|s| s.generation)
            .collect(),
    )
}

fn sorted(mut generations: Vec<u64>) -> Vec<u64> {
    generations.sort_unstable();
    generations
}

/// The SSTables among `candidates` worth a tombstone compaction, in generation order.
pub(crate) fn tombstone_candidates<'a>(
    candidates: &[&'a SstableInfo],
    all: &[SstableInfo],
    common: &CommonOptions,
    now_ms: i64,
    gc_before: i64,
) -> Vec<&'a SstableInfo> {
    candidates
        .iter()
        .copied()
        .filter(|s| worth_dropping(s, all, common, now_ms, gc_before))
        .collect()
}
