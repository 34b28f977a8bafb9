//! UnifiedCompactionStrategy (Cassandra 5.0's default in `cassandra_latest.yaml`).
//!
//! SSTables are placed in levels by *density* — size divided by the fraction of the token ring
//! they span (spans under 2⁻⁴⁸ count as the whole ring, as Cassandra's `ShardManager` does).
//! Level 0 holds densities below `base × F₀` where `base = max(1 MiB, flush size) × (1 − 0.9/F₀)`;
//! level i+1 starts where level i ends and is `Fᵢ₊₁` times wider. The scaling parameter `W` of a
//! level gives its fan factor `F` (`T`n: F = n, tiered; `L`n: F = n, leveled; `N`: F = 2) and its
//! threshold (`T`n: n; `L`n and `N`: 2). A level compacts when some token is covered by at least
//! `threshold` of its SSTables.
//!
//! Selection: fully expired SSTables first (dropped whole); else, among all levels, the group of
//! transitively overlapping SSTables with the deepest overlap (ties: lower level, then lower
//! token) — the whole group, or when it exceeds `max(max_sstables_to_compact, F)` SSTables only
//! those covering its deepest point; outputs split so each covers `1 / shards` of the ring
//! (`Controller.getNumShards` with `base_shard_count`, `target_sstable_size`, `sstable_growth`,
//! `min_sstable_size`); else the largest SSTable worth a tombstone compaction (a Helenus
//! addition, see the `compaction` module doc).
//!
//! Simplifications: the flush size is `flush_size_override`, else the mean size of the SSTables
//! marked level 0 (written by flushes) rounded up to a MiB, instead of a running metric; the
//! overlap inclusion method is always `TRANSITIVE` (the default; the option is validated);
//! concurrent-compaction reservations and the random choice among equal picks are replaced by
//! the deterministic order above; no shard boundaries are enforced on inputs. Outputs carry
//! `output_level = level + 1` so that flushed SSTables stay recognisable.

use super::options::{check_thresholds, check_unknown, parse_common, CommonOptions, Options};
use super::overlap::{bounds, components, deepest_overlap, span_fraction};
use super::stcs::idle;
use super::tombstones::{expired_generations, tombstone_candidates};
use super::ucs_options::{parse_ucs, UcsOptions, UCS_KEYS};
use super::{generations, CompactionStrategy, CompactionTask, SstableInfo, TaskKind};

const MIB: f64 = 1_048_576.0;
/// Cassandra's `ShardManager.MINIMUM_TOKEN_COVERAGE` (2⁻⁴⁸).
const MINIMUM_TOKEN_COVERAGE: f64 = 3.552713678800501e-15;
const MAX_LEVELS: usize = 32;

/// The unified strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct Unified {
    common: CommonOptions,
    ucs: UcsOptions,
}

/// A compactable group of one level.
struct Pick<'a> {
    level: usize,
    depth: usize,
    group: Vec<&'a SstableInfo>,
}

impl Unified {
    /// Validates `options` as Cassandra's `UnifiedCompactionStrategy.validateOptions`.
    /// `min_threshold` / `max_threshold` are accepted and ignored, as UCS ignores them.
    pub fn from_options(options: &Options) -> Result<Self, String> {
        let mut common = parse_common(options)?;
        let ucs = parse_ucs(options)?;
        check_unknown(options, UCS_KEYS, "UnifiedCompactionStrategy")?;
        check_thresholds(options, &mut common)?;
        Ok(Self { common, ucs })
    }

    /// The upper density bound of every level, lowest first.
    fn level_bounds(&self, sstables: &[&SstableInfo]) -> Vec<f64> {
        let f0 = self.ucs.fanout(0) as f64;
        let base = flush_size(&self.ucs, sstables).max(MIB) * (1.0 - 0.9 / f0);
        let mut max = (base * f0).floor();
        let mut bounds = vec![max];
        for i in 1..MAX_LEVELS {
            max = (max * self.ucs.fanout(i) as f64).floor();
            bounds.push(max);
        }
        bounds
    }

    /// SSTables per level by density.
    fn levels<'a>(&self, set: &[&'a SstableInfo]) -> Vec<Vec<&'a SstableInfo>> {
        let bounds = self.level_bounds(set);
        let mut levels = vec![Vec::new(); MAX_LEVELS];
        for s in set {
            let d = density(s);
            let level = bounds
                .iter()
                .position(|max| d < *max)
                .unwrap_or(MAX_LEVELS - 1);
            levels[level].push(*s);
        }
        levels
    }

    /// Every group that reached its level's threshold.
    fn picks<'a>(&self, set: &[&'a SstableInfo]) -> Vec<Pick<'a>> {
        let mut picks = Vec::new();
        for (level, members) in self.levels(set).into_iter().enumerate() {
            for group in components(&members) {
                let depth = deepest_overlap(&group).len();
                if depth >= self.ucs.threshold(level) {
                    picks.push(Pick {
                        level,
                        depth,
                        group,
                    });
                }
            }
        }
        picks
    }

    fn limit(&self, level: usize) -> usize {
        self.ucs
            .max_sstables_to_compact
            .max(self.ucs.fanout(level) as usize)
    }

    fn task(&self, set: &[&SstableInfo], output_level: u32, kind: TaskKind) -> CompactionTask {
        let total: u64 = set.iter().map(|s| s.size_bytes).sum();
        let span = bounds(set.iter().copied()).map_or(1.0, |(lo, hi)| coverage(lo, hi));
        let d = total as f64 / span;
        let per_shard = (d / self.ucs.num_shards(d) as f64).ceil().max(MIB) as u64;
        CompactionTask::new(generations(set), output_level, Some(per_shard), kind)
    }

    fn compaction_task(&self, pick: Pick) -> CompactionTask {
        let inputs = if pick.group.len() > self.limit(pick.level) {
            let mut deepest = deepest_overlap(&pick.group);
            deepest.truncate(self.limit(pick.level));
            deepest
        } else {
            pick.group
        };
        self.task(&inputs, pick.level as u32 + 1, TaskKind::Normal)
    }

    fn expired_task(&self, sstables: &[SstableInfo], gc_before: i64) -> Option<CompactionTask> {
        let mut expired = expired_generations(sstables, gc_before, self.ucs.ignore_overlaps);
        if self.common.only_purge_repaired_tombstones {
            expired.retain(|g| sstables.iter().any(|s| s.generation == *g && s.repaired));
        }
        if expired.is_empty() {
            return None;
        }
        let mut task = CompactionTask::new(expired.clone(), 1, None, TaskKind::Normal);
        task.fully_expired = expired;
        Some(task)
    }
}

/// Size per unit of ring covered.
fn density(s: &SstableInfo) -> f64 {
    s.size_bytes as f64 / coverage(s.min_token, s.max_token)
}

fn coverage(min: i64, max: i64) -> f64 {
    let span = span_fraction(min, max);
    if span >= MINIMUM_TOKEN_COVERAGE {
        span
    } else {
        1.0
    }
}

/// `flush_size_override`, else the mean size of flushed (level 0) SSTables rounded up to a MiB.
fn flush_size(ucs: &UcsOptions, sstables: &[&SstableInfo]) -> f64 {
    if ucs.flush_size_override > 0 {
        return ucs.flush_size_override as f64;
    }
    let flushed: Vec<u64> = sstables
        .iter()
        .filter(|s| s.level == 0)
        .map(|s| s.size_bytes)
        .collect();
    if flushed.is_empty() {
        return 0.0;
    }
    let mean = flushed.iter().map(|b| *b as f64).sum::<f64>() / flushed.len() as f64;
    (mean / MIB).ceil() * MIB
}

impl CompactionStrategy for Unified {
    fn next_task(
        &self,
        sstables: &[SstableInfo],
        now_ms: i64,
        gc_before: i64,
    ) -> Option<CompactionTask> {
        if !self.common.enabled {
            return None;
        }
        if let Some(task) = self.expired_task(sstables, gc_before) {
            return Some(task);
        }
        let candidates = idle(sstables);
        let best = self.picks(&candidates).into_iter().min_by_key(|p| {
            let first = p.group.first().map_or(i64::MIN, |s| s.min_token);
            (std::cmp::Reverse(p.depth), p.level, first)
        });
        if let Some(pick) = best {
            return Some(self.compaction_task(pick));
        }
        let worth = tombstone_candidates(&candidates, sstables, &self.common, now_ms, gc_before);
        let largest = worth
            .into_iter()
            .max_by_key(|s| (s.size_bytes, std::cmp::Reverse(s.generation)))?;
        Some(self.task(&[largest], largest.level.max(1), TaskKind::Tombstone))
    }

    fn major_tasks(&self, sstables: &[SstableInfo]) -> Vec<CompactionTask> {
        components(&idle(sstables))
            .iter()
            .map(|group| self.task(group, 1, TaskKind::Major))
            .collect()
    }

    fn pending_tasks(&self, sstables: &[SstableInfo]) -> usize {
        self.picks(&idle(sstables))
            .iter()
            .map(|p| p.group.len().div_ceil(self.limit(p.level)))
            .sum()
    }

    fn name(&self) -> &'static str {
        "UnifiedCompactionStrategy"
    }
}
