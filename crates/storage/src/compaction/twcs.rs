//! TimeWindowCompactionStrategy: SSTables grouped in windows of `compaction_window_size ×
//! compaction_window_unit` by their newest timestamp (Cassandra's `TimeWindowCompactionStrategy`).
//!
//! Selection: fully expired SSTables (see [`super::fully_expired`]) are always added to the task
//! so they can be dropped; windows are visited newest first — the newest window (the highest
//! window any SSTable falls in, not the wall clock) compacts size-tiered once it holds
//! `min_threshold` SSTables; an older window holding at least two SSTables is merged into one
//! (its `max_threshold` smallest); otherwise the smallest SSTable worth a tombstone compaction.
//!
//! Simplifications: `expired_sstable_check_frequency_seconds` is validated but expiry is checked
//! on every call (this module keeps no clock); `unsafe_aggressive_sstable_expiration` needs no
//! JVM system property to be enabled.

use std::collections::BTreeMap;

use super::options::{check_thresholds, check_unknown, parse_common, CommonOptions, Options};
use super::stcs::{buckets, idle, major_all, most_interesting, parse_stcs, StcsOptions, STCS_KEYS};
use super::syntax::{is_true_or_false, parse_java_int, parse_java_long};
use super::tombstones::{expired_generations, tombstone_candidates};
use super::{generations, CompactionStrategy, CompactionTask, SstableInfo, TaskKind};

const TWCS_KEYS: &[&str] = &[
    "compaction_window_unit",
    "compaction_window_size",
    "timestamp_resolution",
    "expired_sstable_check_frequency_seconds",
    "unsafe_aggressive_sstable_expiration",
];

/// The time-window strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeWindow {
    common: CommonOptions,
    stcs: StcsOptions,
    window_seconds: i64,
    /// Unit of the SSTables' timestamps (`timestamp_resolution`).
    resolution: Resolution,
    ignore_overlaps: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Resolution {
    Seconds,
    Milliseconds,
    Microseconds,
    Nanoseconds,
}

impl Resolution {
    fn parse(v: &str) -> Result<Self, String> {
        match v {
            "SECONDS" => Ok(Self::Seconds),
            "MILLISECONDS" => Ok(Self::Milliseconds),
            "MICROSECONDS" => Ok(Self::Microseconds),
            "NANOSECONDS" => Ok(Self::Nanoseconds),
            _ => Err(format!("{v} is not valid for timestamp_resolution")),
        }
    }

    /// `TimeUnit.MILLISECONDS.convert(t, self)`.
    fn to_millis(self, t: i64) -> i64 {
        match self {
            Self::Seconds => t.saturating_mul(1000),
            Self::Milliseconds => t,
            Self::Microseconds => t / 1000,
            Self::Nanoseconds => t / 1_000_000,
        }
    }
}

fn window_unit_seconds(v: &str) -> Result<i64, String> {
    match v {
        "MINUTES" => Ok(60),
        "HOURS" => Ok(3600),
        "DAYS" => Ok(86_400),
        _ => Err(format!("{v} is not valid for compaction_window_unit")),
    }
}

impl TimeWindow {
    /// Validates `options` as Cassandra's `TimeWindowCompactionStrategyOptions.validateOptions`.
    pub fn from_options(options: &Options) -> Result<Self, String> {
        let mut common = parse_common(options)?;
        let resolution = options
            .get("timestamp_resolution")
            .map_or(Ok(Resolution::Microseconds), |v| Resolution::parse(v))?;
        let unit = options
            .get("compaction_window_unit")
            .map_or(Ok(86_400), |v| window_unit_seconds(v))?;
        let size = window_size(options)?;
        check_frequency(options)?;
        let ignore_overlaps = aggressive_expiration(options)?;
        let stcs = parse_stcs(options)?;
        let mut own = TWCS_KEYS.to_vec();
        own.extend_from_slice(STCS_KEYS);
        check_unknown(options, &own, "TimeWindowCompactionStrategy")?;
        check_thresholds(options, &mut common)?;
        Ok(Self {
            common,
            stcs,
            window_seconds: unit * size,
            resolution,
            ignore_overlaps,
        })
    }

    /// The lower bound (ms) of the window holding `timestamp` (`getWindowBoundsInMillis`).
    fn window_of(&self, timestamp: i64) -> i64 {
        let seconds = self.resolution.to_millis(timestamp) / 1000;
        (seconds - seconds % self.window_seconds).saturating_mul(1000)
    }

    /// SSTables per window (newest timestamp) and the newest window.
    fn windows<'a>(&self, set: &[&'a SstableInfo]) -> (BTreeMap<i64, Vec<&'a SstableInfo>>, i64) {
        let mut windows: BTreeMap<i64, Vec<&SstableInfo>> = BTreeMap::new();
        for s in set {
            windows
                .entry(self.window_of(s.max_timestamp))
                .or_default()
                .push(s);
        }
        let newest = windows.keys().next_back().copied().unwrap_or(i64::MIN);
        (windows, newest)
    }

    /// `newestBucket`: the SSTables to merge, newest window first.
    fn pick<'a>(&self, set: &[&'a SstableInfo]) -> Vec<&'a SstableInfo> {
        let (windows, newest) = self.windows(set);
        for (key, bucket) in windows.into_iter().rev() {
            if key >= newest && bucket.len() >= self.common.min_threshold {
                let picked = most_interesting(
                    buckets(&bucket, &self.stcs),
                    self.common.min_threshold,
                    self.common.max_threshold,
                );
                if !picked.is_empty() {
                    return picked;
                }
            } else if key < newest && bucket.len() >= 2 {
                let mut bucket = bucket;
                bucket.sort_by_key(|s| (s.size_bytes, s.generation));
                bucket.truncate(self.common.max_threshold);
                return bucket;
            }
        }
        Vec::new()
    }

    fn expired(&self, sstables: &[SstableInfo], gc_before: i64) -> Vec<u64> {
        let mut expired = expired_generations(sstables, gc_before, self.ignore_overlaps);
        if self.common.only_purge_repaired_tombstones {
            expired.retain(|g| sstables.iter().any(|s| s.generation == *g && s.repaired));
        }
        expired
    }

    fn live<'a>(&self, sstables: &'a [SstableInfo], expired: &[u64]) -> Vec<&'a SstableInfo> {
        idle(sstables)
            .into_iter()
            .filter(|s| !expired.contains(&s.generation))
            .collect()
    }
}

fn window_size(options: &Options) -> Result<i64, String> {
    let Some(v) = options.get("compaction_window_size") else {
        return Ok(1);
    };
    let n = parse_java_int(v)
        .ok_or_else(|| format!("{v} is not a parsable int (base10) for compaction_window_size"))?;
    if n < 1 {
        return Err(format!(
            "{n} must be greater than 1 for compaction_window_size"
        ));
    }
    Ok(i64::from(n))
}

fn check_frequency(options: &Options) -> Result<(), String> {
    let key = "expired_sstable_check_frequency_seconds";
    let Some(v) = options.get(key) else {
        return Ok(());
    };
    let n = parse_java_long(v)
        .ok_or_else(|| format!("{v} is not a parsable int (base10) for {key}"))?;
    if n < 0 {
        return Err(format!("{key} must not be negative, but was {n}"));
    }
    Ok(())
}

fn aggressive_expiration(options: &Options) -> Result<bool, String> {
    let Some(v) = options.get("unsafe_aggressive_sstable_expiration") else {
        return Ok(false);
    };
    if !is_true_or_false(v) {
        return Err(format!(
            "unsafe_aggressive_sstable_expiration is not 'true' or 'false' ({v})"
        ));
    }
    Ok(v.eq_ignore_ascii_case("true"))
}

impl CompactionStrategy for TimeWindow {
    fn next_task(
        &self,
        sstables: &[SstableInfo],
        now_ms: i64,
        gc_before: i64,
    ) -> Option<CompactionTask> {
        if !self.common.enabled {
            return None;
        }
        let expired = self.expired(sstables, gc_before);
        let live = self.live(sstables, &expired);
        let mut kind = TaskKind::Normal;
        let mut picked = generations(&self.pick(&live));
        if picked.is_empty() {
            let worth = tombstone_candidates(&live, sstables, &self.common, now_ms, gc_before);
            if let Some(s) = worth
                .into_iter()
                .min_by_key(|s| (s.size_bytes, s.generation))
            {
                picked.push(s.generation);
                kind = TaskKind::Tombstone;
            }
        }
        if picked.is_empty() && expired.is_empty() {
            return None;
        }
        picked.extend(&expired);
        let mut task = CompactionTask::new(picked, 0, None, kind);
        task.fully_expired = expired;
        Some(task)
    }

    fn major_tasks(&self, sstables: &[SstableInfo]) -> Vec<CompactionTask> {
        major_all(sstables, 0, None)
    }

    fn pending_tasks(&self, sstables: &[SstableInfo]) -> usize {
        let (windows, newest) = self.windows(&idle(sstables));
        windows
            .iter()
            .filter(|(key, b)| {
                (**key >= newest && b.len() >= self.common.min_threshold)
                    || (**key < newest && b.len() >= 2)
            })
            .count()
    }

    fn name(&self) -> &'static str {
        "TimeWindowCompactionStrategy"
    }
}
