//! SizeTieredCompactionStrategy: buckets of similar-sized SSTables, merged once a bucket holds
//! `min_threshold` of them; a single-SSTable tombstone compaction when nothing else is due.

use super::options::{check_thresholds, check_unknown, parse_common, CommonOptions, Options};
use super::syntax::{java_double, parse_java_float, parse_java_long};
use super::tombstones::tombstone_candidates;
use super::{generations, CompactionStrategy, CompactionTask, SstableInfo, TaskKind};

/// Keys of [`StcsOptions`].
pub(crate) const STCS_KEYS: &[&str] = &["min_sstable_size", "bucket_low", "bucket_high"];

/// `SizeTieredCompactionStrategyOptions`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StcsOptions {
    /// `min_sstable_size` (50 MiB, in bytes): SSTables below it share one bucket.
    pub min_sstable_size: u64,
    /// `bucket_low` (0.5).
    pub bucket_low: f64,
    /// `bucket_high` (1.5).
    pub bucket_high: f64,
}

impl Default for StcsOptions {
    fn default() -> Self {
        Self {
            min_sstable_size: 50 << 20,
            bucket_low: 0.5,
            bucket_high: 1.5,
        }
    }
}

/// Parses the size-tiered options with Cassandra's messages.
pub(crate) fn parse_stcs(options: &Options) -> Result<StcsOptions, String> {
    let mut stcs = StcsOptions::default();
    if let Some(v) = options.get("min_sstable_size") {
        let size = parse_java_long(v)
            .ok_or_else(|| format!("{v} is not a parsable int (base10) for min_sstable_size"))?;
        stcs.min_sstable_size = u64::try_from(size)
            .map_err(|_| format!("min_sstable_size must be non negative: {size}"))?;
    }
    stcs.bucket_low = parse_double(options, "bucket_low", 0.5)?;
    stcs.bucket_high = parse_double(options, "bucket_high", 1.5)?;
    if stcs.bucket_high <= stcs.bucket_low {
        return Err(format!(
            "bucket_high value ({}) is less than or equal to the bucket_low value ({})",
            java_double(stcs.bucket_high),
            java_double(stcs.bucket_low)
        ));
    }
    Ok(stcs)
}

fn parse_double(options: &Options, key: &str, default: f64) -> Result<f64, String> {
    match options.get(key) {
        None => Ok(default),
        Some(v) => {
            parse_java_float(v).ok_or_else(|| format!("{v} is not a parsable float for {key}"))
        }
    }
}

/// Groups SSTables into buckets of similar size (`SizeTieredCompactionStrategy.getBuckets`).
///
/// SSTables are visited by ascending size (then generation); each joins the first bucket whose
/// average `avg` satisfies `avg × bucket_low < size < avg × bucket_high`, or where both the
/// SSTable and the average are below `min_sstable_size`; otherwise it starts a new bucket.
pub(crate) fn buckets<'a>(
    sstables: &[&'a SstableInfo],
    stcs: &StcsOptions,
) -> Vec<Vec<&'a SstableInfo>> {
    let mut sorted = sstables.to_vec();
    sorted.sort_by_key(|s| (s.size_bytes, s.generation));
    let mut buckets: Vec<(u64, Vec<&SstableInfo>)> = Vec::new();
    for s in sorted {
        let size = s.size_bytes;
        let fits = |avg: u64| {
            let (avg_f, size_f) = (avg as f64, size as f64);
            (size_f > avg_f * stcs.bucket_low && size_f < avg_f * stcs.bucket_high)
                || (size < stcs.min_sstable_size && avg < stcs.min_sstable_size)
        };
        match buckets.iter_mut().find(|(avg, _)| fits(*avg)) {
            Some((avg, bucket)) => {
                let n = bucket.len() as u128;
                *avg = ((u128::from(*avg) * n + u128::from(size)) / (n + 1)) as u64;
                bucket.push(s);
            }
            None => buckets.push((size, vec![s])),
        }
    }
    buckets.into_iter().map(|(_, b)| b).collect()
}

/// The bucket to compact (`mostInterestingBucket`): each bucket trimmed to its `max_threshold`
/// smallest SSTables; among those with at least `min_threshold`, the one with the most SSTables,
/// ties going to the smallest average size (then the lowest generation). Empty when none.
pub(crate) fn most_interesting(
    buckets: Vec<Vec<&SstableInfo>>,
    min_threshold: usize,
    max_threshold: usize,
) -> Vec<&SstableInfo> {
    buckets
        .into_iter()
        .map(|mut b| {
            b.sort_by_key(|s| (s.size_bytes, s.generation));
            b.truncate(max_threshold);
            b
        })
        .filter(|b| b.len() >= min_threshold)
        .min_by_key(|b| {
            let total: u128 = b.iter().map(|s| u128::from(s.size_bytes)).sum();
            let first = b.iter().map(|s| s.generation).min().unwrap_or(0);
            (
                std::cmp::Reverse(b.len()),
                total / b.len().max(1) as u128,
                first,
            )
        })
        .unwrap_or_default()
}

/// Cassandra's estimate for a set of buckets: `ceil(len / max_threshold)` per bucket holding at
/// least `min_threshold` SSTables.
pub(crate) fn estimate(buckets: &[Vec<&SstableInfo>], common: &CommonOptions) -> usize {
    buckets
        .iter()
        .filter(|b| b.len() >= common.min_threshold)
        .map(|b| b.len().div_ceil(common.max_threshold.max(1)))
        .sum()
}

/// The size-tiered strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeTiered {
    common: CommonOptions,
    stcs: StcsOptions,
}

impl SizeTiered {
    /// Validates `options` (the table's `compaction` map) as Cassandra does.
    pub fn from_options(options: &Options) -> Result<Self, String> {
        let mut common = parse_common(options)?;
        let stcs = parse_stcs(options)?;
        check_unknown(options, STCS_KEYS, "SizeTieredCompactionStrategy")?;
        check_thresholds(options, &mut common)?;
        Ok(Self { common, stcs })
    }

    fn tombstone_task(
        &self,
        candidates: &[&SstableInfo],
        all: &[SstableInfo],
        now_ms: i64,
        gc_before: i64,
    ) -> Option<CompactionTask> {
        let worth = tombstone_candidates(candidates, all, &self.common, now_ms, gc_before);
        let largest = worth
            .into_iter()
            .max_by_key(|s| (s.size_bytes, std::cmp::Reverse(s.generation)))?;
        Some(CompactionTask::new(
            vec![largest.generation],
            0,
            None,
            TaskKind::Tombstone,
        ))
    }
}

impl CompactionStrategy for SizeTiered {
    fn next_task(
        &self,
        sstables: &[SstableInfo],
        now_ms: i64,
        gc_before: i64,
    ) -> Option<CompactionTask> {
        if !self.common.enabled {
            return None;
        }
        let candidates = idle(sstables);
        let bucket = most_interesting(
            buckets(&candidates, &self.stcs),
            self.common.min_threshold,
            self.common.max_threshold,
        );
        if !bucket.is_empty() {
            return Some(CompactionTask::new(
                generations(&bucket),
                0,
                None,
                TaskKind::Normal,
            ));
        }
        self.tombstone_task(&candidates, sstables, now_ms, gc_before)
    }

    fn major_tasks(&self, sstables: &[SstableInfo]) -> Vec<CompactionTask> {
        major_all(sstables, 0, None)
    }

    fn pending_tasks(&self, sstables: &[SstableInfo]) -> usize {
        estimate(&buckets(&idle(sstables), &self.stcs), &self.common)
    }

    fn name(&self) -> &'static str {
        "SizeTieredCompactionStrategy"
    }
}

/// The SSTables not being compacted.
pub(crate) fn idle(sstables: &[SstableInfo]) -> Vec<&SstableInfo> {
    sstables.iter().filter(|s| !s.being_compacted).collect()
}

/// One major task over every idle SSTable (none when there are none).
pub(crate) fn major_all(
    sstables: &[SstableInfo],
    output_level: u32,
    max_output_bytes: Option<u64>,
) -> Vec<CompactionTask> {
    let candidates = idle(sstables);
    if candidates.is_empty() {
        return Vec::new();
    }
    vec![CompactionTask::new(
        generations(&candidates),
        output_level,
        max_output_bytes,
        TaskKind::Major,
    )]
}
