//! LeveledCompactionStrategy: L1+ hold non-overlapping SSTables of `sstable_size_in_mb`, level n
//! targeting `sstable_size × fanout^n` bytes; L0 receives flushes (Cassandra's `LeveledManifest`).
//!
//! Selection, in order:
//! 1. if L0 holds more than 32 SSTables (`MAX_COMPACTING_L0`), a size-tiered task inside L0
//!    is prepared and runs before any higher level;
//! 2. levels from the highest down: the first whose score (idle bytes / target) exceeds 1.001
//!    compacts one SSTable — the first after the last compacted key, round-robin — with every
//!    SSTable of the next level it overlaps; outputs split at `sstable_size`;
//! 3. otherwise L0: its SSTables oldest first (max timestamp) with the L0 SSTables they overlap,
//!    at most `max_threshold`, none overlapping an L0 compaction in progress; when they exceed
//!    `sstable_size` the overlapping L1 SSTables join and the output goes to L1, otherwise the
//!    output stays in L0; at least two SSTables are needed;
//! 4. otherwise a tombstone compaction (see the module doc of `compaction`).
//!
//! Simplifications: the "last compacted key" of level n is inferred from the data instead of
//! being remembered — it is the first token of the newest SSTable of level n+1, exactly what
//! Cassandra derives on start-up; the starvation rule (`NO_COMPACTION_LIMIT`) that needs a
//! counter across calls is not applied.

use super::options::{check_thresholds, check_unknown, parse_common, CommonOptions, Options};
use super::overlap::{bounds, intersects, intersects_range};
use super::stcs::{buckets, major_all, most_interesting, parse_stcs, StcsOptions, STCS_KEYS};
use super::syntax::parse_java_int;
use super::tombstones::worth_dropping;
use super::{generations, CompactionStrategy, CompactionTask, SstableInfo, TaskKind};

/// Cassandra's `LeveledGenerations.MAX_LEVEL_COUNT`.
const LEVELS: usize = 9;
/// Cassandra's `LeveledManifest.MAX_COMPACTING_L0`.
const MAX_COMPACTING_L0: usize = 32;
const LCS_KEYS: &[&str] = &[
    "sstable_size_in_mb",
    "fanout_size",
    "single_sstable_uplevel",
];

/// The leveled strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct Leveled {
    common: CommonOptions,
    stcs: StcsOptions,
    sstable_size: u64,
    fanout: u32,
    single_sstable_uplevel: bool,
}

impl Leveled {
    /// Validates `options` as Cassandra's `LeveledCompactionStrategy.validateOptions`.
    pub fn from_options(options: &Options) -> Result<Self, String> {
        let mut common = parse_common(options)?;
        let size_mb = positive_int(options, "sstable_size_in_mb", 160)?;
        let fanout = positive_int(options, "fanout_size", 10)?;
        let stcs = parse_stcs(options)?;
        let mut own = LCS_KEYS.to_vec();
        own.extend_from_slice(STCS_KEYS);
        check_unknown(options, &own, "LeveledCompactionStrategy")?;
        check_thresholds(options, &mut common)?;
        let single_sstable_uplevel = options
            .get("single_sstable_uplevel")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        Ok(Self {
            common,
            stcs,
            sstable_size: size_mb << 20,
            fanout: fanout as u32,
            single_sstable_uplevel,
        })
    }

    /// Target bytes of `level` (`maxBytesForLevel`).
    fn max_bytes(&self, level: usize) -> f64 {
        if level == 0 {
            return 4.0 * self.sstable_size as f64;
        }
        f64::from(self.fanout).powi(level as i32) * self.sstable_size as f64
    }

    fn task(&self, set: &[&SstableInfo], output_level: u32, kind: TaskKind) -> CompactionTask {
        CompactionTask::new(
            generations(set),
            output_level,
            Some(self.sstable_size),
            kind,
        )
    }

    fn l0_stcs(&self, levels: &Levels) -> Option<CompactionTask> {
        if levels[0].len() <= MAX_COMPACTING_L0 {
            return None;
        }
        let candidates: Vec<&SstableInfo> = levels[0]
            .iter()
            .copied()
            .filter(|s| !s.being_compacted)
            .collect();
        let bucket = most_interesting(
            buckets(&candidates, &self.stcs),
            self.common.min_threshold,
            self.common.max_threshold,
        );
        (!bucket.is_empty())
            .then(|| CompactionTask::new(generations(&bucket), 0, None, TaskKind::Normal))
    }

    fn higher_level_task(
        &self,
        levels: &Levels,
        l0_stcs: &Option<CompactionTask>,
    ) -> Option<Option<CompactionTask>> {
        for i in (1..LEVELS).rev() {
            let remaining: u64 = levels[i]
                .iter()
                .filter(|s| !s.being_compacted)
                .map(|s| s.size_bytes)
                .sum();
            if levels[i].is_empty()
                || remaining as f64 / self.max_bytes(i) <= 1.001
                || i == LEVELS - 1
            {
                continue;
            }
            if l0_stcs.is_some() {
                return Some(l0_stcs.clone());
            }
            if let Some(candidates) = self.candidates_above_l0(levels, i) {
                return Some(Some(self.promote(&candidates)));
            }
        }
        None
    }

    /// The round-robin pick of level `i` with its overlaps in level `i + 1`.
    fn candidates_above_l0<'a>(
        &self,
        levels: &Levels<'a>,
        i: usize,
    ) -> Option<Vec<&'a SstableInfo>> {
        let next = &levels[i + 1];
        round_robin(&levels[i], last_compacted(next))
            .into_iter()
            .find_map(|s| {
                let mut set: Vec<&SstableInfo> = vec![s];
                set.extend(next.iter().copied().filter(|n| intersects(s, n)));
                set.iter().all(|c| !c.being_compacted).then_some(set)
            })
    }

    fn candidates_l0<'a>(&self, levels: &Levels<'a>) -> Vec<&'a SstableInfo> {
        let compacting: Vec<&SstableInfo> = levels[0]
            .iter()
            .copied()
            .filter(|s| s.being_compacted)
            .collect();
        let busy = bounds(compacting.iter().copied());
        let mut candidates = l0_overlap_closure(&levels[0], busy, self.common.max_threshold);
        let total: u64 = candidates.iter().map(|s| s.size_bytes).sum();
        if total > self.sstable_size {
            let Some((lo, hi)) = bounds(candidates.iter().copied()) else {
                return Vec::new();
            };
            let l1: Vec<&SstableInfo> = levels[1]
                .iter()
                .copied()
                .filter(|s| intersects_range(s, lo, hi))
                .collect();
            let blocked = compacting.iter().any(|c| intersects_range(c, lo, hi));
            if blocked || l1.iter().any(|s| s.being_compacted) {
                return Vec::new();
            }
            candidates.extend(l1);
        }
        if candidates.len() < 2 {
            return Vec::new();
        }
        candidates
    }

    /// The task for `candidates`, at Cassandra's `getNextLevel`.
    fn promote(&self, candidates: &[&SstableInfo]) -> CompactionTask {
        let min = candidates.iter().map(|s| s.level).min().unwrap_or(0);
        let max = candidates.iter().map(|s| s.level).max().unwrap_or(0);
        let total: u64 = candidates.iter().map(|s| s.size_bytes).sum();
        let level = match (min, max) {
            (0, 0) if total < self.sstable_size => 0,
            _ if min == max => max + 1,
            _ => max,
        };
        if candidates.len() == 1 && self.single_sstable_uplevel && level > min {
            return self.task(candidates, level, TaskKind::Uplevel);
        }
        self.task(candidates, level, TaskKind::Normal)
    }

    /// `findDroppableSSTable`: highest level first, highest droppable ratio first.
    fn tombstone_task(
        &self,
        levels: &Levels,
        all: &[SstableInfo],
        now_ms: i64,
        gc_before: i64,
    ) -> Option<CompactionTask> {
        for level in (0..LEVELS).rev() {
            let mut sorted = levels[level].clone();
            sorted.sort_by(|a, b| {
                b.droppable_tombstones
                    .total_cmp(&a.droppable_tombstones)
                    .then(a.generation.cmp(&b.generation))
            });
            for s in sorted {
                if s.droppable_tombstones <= self.common.tombstone_threshold {
                    break;
                }
                if !s.being_compacted && worth_dropping(s, all, &self.common, now_ms, gc_before) {
                    return Some(self.task(&[s], s.level, TaskKind::Tombstone));
                }
            }
        }
        None
    }
}

type Levels<'a> = Vec<Vec<&'a SstableInfo>>;

/// SSTables per level (levels above the last one are clamped to it).
fn levels(sstables: &[SstableInfo]) -> Levels<'_> {
    let mut levels: Levels = vec![Vec::new(); LEVELS];
    for s in sstables {
        levels[(s.level as usize).min(LEVELS - 1)].push(s);
    }
    levels
}

/// The newest SSTable of the level above: the end of the last compaction into it.
fn last_compacted<'a>(next_level: &[&'a SstableInfo]) -> Option<&'a SstableInfo> {
    next_level
        .iter()
        .copied()
        .max_by_key(|s| (s.created_at_ms, s.generation))
}

/// Level SSTables by first token, starting after `marker`'s first token and wrapping around.
fn round_robin<'a>(
    level: &[&'a SstableInfo],
    marker: Option<&SstableInfo>,
) -> Vec<&'a SstableInfo> {
    let mut sorted = level.to_vec();
    sorted.sort_by_key(|s| (s.min_token, s.generation));
    let start = marker.map_or(0, |m| {
        sorted
            .iter()
            .position(|s| (s.min_token, s.generation) > (m.min_token, m.generation))
            .unwrap_or(0)
    });
    sorted.rotate_left(start);
    sorted
}

/// L0 candidates: oldest first, each with the L0 SSTables it overlaps, skipping those touching
/// a running L0 compaction (`busy`), limited to the `max_threshold` oldest.
fn l0_overlap_closure<'a>(
    l0: &[&'a SstableInfo],
    busy: Option<(i64, i64)>,
    max_threshold: usize,
) -> Vec<&'a SstableInfo> {
    let mut by_age = l0.to_vec();
    by_age.sort_by_key(|s| (s.max_timestamp, s.generation));
    let mut remaining = by_age.clone();
    let mut candidates: Vec<&SstableInfo> = Vec::new();
    for s in by_age {
        if candidates.iter().any(|c| c.generation == s.generation) {
            continue;
        }
        let group: Vec<&SstableInfo> = remaining
            .iter()
            .copied()
            .filter(|r| r.generation == s.generation || intersects(s, r))
            .collect();
        if group.iter().any(|g| g.being_compacted) {
            continue;
        }
        let free = |g: &&SstableInfo| busy.is_none_or(|(lo, hi)| !intersects_range(g, lo, hi));
        candidates.extend(group.iter().copied().filter(free));
        remaining.retain(|r| !group.iter().any(|g| g.generation == r.generation));
        if candidates.len() > max_threshold {
            candidates.sort_by_key(|c| (c.max_timestamp, c.generation));
            candidates.truncate(max_threshold);
            break;
        }
    }
    candidates
}

fn positive_int(options: &Options, key: &str, default: i32) -> Result<u64, String> {
    let Some(v) = options.get(key) else {
        return Ok(default as u64);
    };
    let n =
        parse_java_int(v).ok_or_else(|| format!("{v} is not a parsable int (base10) for {key}"))?;
    if n < 1 {
        return Err(format!("{key} must be larger than 0, but was {n}"));
    }
    Ok(n as u64)
}

impl CompactionStrategy for Leveled {
    fn next_task(
        &self,
        sstables: &[SstableInfo],
        now_ms: i64,
        gc_before: i64,
    ) -> Option<CompactionTask> {
        if !self.common.enabled {
            return None;
        }
        let levels = levels(sstables);
        let l0_stcs = self.l0_stcs(&levels);
        if let Some(task) = self.higher_level_task(&levels, &l0_stcs) {
            return task;
        }
        let l0 = if levels[0].is_empty() {
            Vec::new()
        } else {
            self.candidates_l0(&levels)
        };
        if !l0.is_empty() {
            return Some(self.promote(&l0));
        }
        l0_stcs.or_else(|| self.tombstone_task(&levels, sstables, now_ms, gc_before))
    }

    fn major_tasks(&self, sstables: &[SstableInfo]) -> Vec<CompactionTask> {
        major_all(sstables, 1, Some(self.sstable_size))
    }

    fn pending_tasks(&self, sstables: &[SstableInfo]) -> usize {
        let levels = levels(sstables);
        let mut tasks: usize = (0..LEVELS)
            .map(|i| {
                let bytes: u64 = levels[i].iter().map(|s| s.size_bytes).sum();
                let excess = (bytes as f64 - (self.max_bytes(i) * 1.001).floor()).max(0.0);
                (excess / self.sstable_size as f64).ceil() as usize
            })
            .sum();
        if levels[0].len() > self.common.max_threshold {
            tasks += levels[0].len() / self.common.max_threshold.max(1);
        }
        tasks
    }

    fn name(&self) -> &'static str {
        "LeveledCompactionStrategy"
    }
}
