//! The options of UnifiedCompactionStrategy (Cassandra 5.0's UCS `Controller`), their defaults
//! (`T4`, 1 GiB target, 4 base shards, 100 MiB minimum, growth 0.333) and validation messages,
//! and the quantities derived from them: fan factor, threshold and shard count.

use super::options::Options;
use super::syntax::{
    is_true_or_false, parse_human_bytes, parse_java_int, parse_java_long, parse_percent,
    pretty_print_memory,
};

/// Option keys of UCS.
pub(crate) const UCS_KEYS: &[&str] = &[
    "scaling_parameters",
    "base_shard_count",
    "target_sstable_size",
    "flush_size_override",
    "max_sstables_to_compact",
    "expired_sstable_check_frequency_seconds",
    "unsafe_aggressive_sstable_expiration",
    "overlap_inclusion_method",
    "min_sstable_size",
    "sstable_growth",
];

const MIB: u64 = 1 << 20;
const MAX_SHARD_SHIFT: u32 = 20;
const SCALING_PATTERN: &str = "N|L[0-9]+|T[0-9]+|[+-]?[0-9]+";

/// Validated UCS options.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UcsOptions {
    /// Scaling parameters W per level; the last applies to every higher level.
    pub scaling: Vec<i32>,
    pub base_shard_count: u64,
    pub target_sstable_size: u64,
    pub min_sstable_size: u64,
    pub sstable_growth: f64,
    pub flush_size_override: u64,
    /// `max_sstables_to_compact`; 0 or less means unlimited.
    pub max_sstables_to_compact: usize,
    pub ignore_overlaps: bool,
}

impl Default for UcsOptions {
    fn default() -> Self {
        Self {
            scaling: vec![2],
            base_shard_count: 4,
            target_sstable_size: 1 << 30,
            min_sstable_size: 100 * MIB,
            sstable_growth: 0.333,
            flush_size_override: 0,
            max_sstables_to_compact: usize::MAX,
            ignore_overlaps: false,
        }
    }
}

impl UcsOptions {
    /// W for level `index`.
    fn w(&self, index: usize) -> i32 {
        self.scaling
            .get(index)
            .or(self.scaling.last())
            .copied()
            .unwrap_or(2)
    }

    /// The fan factor F of level `index` (`fanoutFromScalingParameter`).
    pub fn fanout(&self, index: usize) -> u64 {
        let w = i64::from(self.w(index));
        (if w < 0 { 2 - w } else { 2 + w }) as u64
    }

    /// The SSTable count that triggers a compaction on level `index`.
    pub fn threshold(&self, index: usize) -> usize {
        let w = i64::from(self.w(index));
        (if w <= 0 { 2 } else { 2 + w }) as usize
    }

    /// The number of shards outputs of `density` are split into (`Controller.getNumShards`).
    pub fn num_shards(&self, density: f64) -> u64 {
        let base = self.base_shard_count;
        if self.min_sstable_size > 0 {
            let count = density / self.min_sstable_size as f64;
            if count < base as f64 {
                let highest = prev_power_of_two((count as u64) | 1);
                return highest.min(base & base.wrapping_neg());
            }
        }
        if self.sstable_growth >= 1.0 {
            return base;
        }
        let count = density / (self.target_sstable_size as f64 * base as f64);
        let pow = count.log2() * (1.0 - self.sstable_growth) + 0.5;
        if pow >= f64::from(MAX_SHARD_SHIFT) {
            base << MAX_SHARD_SHIFT
        } else if pow >= 0.0 {
            base << (pow as u32)
        } else {
            base
        }
    }
}

fn prev_power_of_two(n: u64) -> u64 {
    1u64 << (63 - n.max(1).leading_zeros())
}

/// Validates the UCS keys of `options` in the order of Cassandra's `Controller.validateOptions`.
pub(crate) fn parse_ucs(options: &Options) -> Result<UcsOptions, String> {
    let mut ucs = UcsOptions::default();
    if let Some(v) = options.get("scaling_parameters") {
        ucs.scaling = v
            .split(',')
            .map(|w| parse_scaling_parameter(w.trim()))
            .collect::<Result<_, _>>()?;
    }
    if let Some(v) = options.get("base_shard_count") {
        ucs.base_shard_count = base_shard_count(v)?;
    }
    if let Some(v) = options.get("target_sstable_size") {
        ucs.target_sstable_size = at_least_1mib("target_sstable_size", v)?;
    }
    if let Some(v) = options.get("flush_size_override") {
        ucs.flush_size_override = at_least_1mib("flush_size_override", v)?;
    }
    if let Some(v) = options.get("max_sstables_to_compact") {
        ucs.max_sstables_to_compact = max_sstables(v)?;
    }
    parse_frequency_and_flags(options, &mut ucs)?;
    if let Some(v) = options.get("min_sstable_size") {
        ucs.min_sstable_size = min_sstable_size(v, ucs.target_sstable_size)?;
    }
    if let Some(v) = options.get("sstable_growth") {
        ucs.sstable_growth = sstable_growth(v)?;
    }
    Ok(ucs)
}

/// `UnifiedCompactionStrategy.parseScalingParameter`.
pub(crate) fn parse_scaling_parameter(v: &str) -> Result<i32, String> {
    let mismatch = || format!("Scaling parameter {v} must match {SCALING_PATTERN}");
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let fan = |s: &str| -> Result<i32, String> {
        let f: i32 = s.parse().map_err(|_| mismatch())?;
        if f < 2 {
            return Err(format!("Fan factor cannot be lower than 2 in {v}"));
        }
        Ok(f)
    };
    if v == "N" {
        return Ok(0);
    }
    if let Some(rest) = v.strip_prefix('L').filter(|r| digits(r)) {
        return Ok(2 - fan(rest)?);
    }
    if let Some(rest) = v.strip_prefix('T').filter(|r| digits(r)) {
        return Ok(fan(rest)? - 2);
    }
    let unsigned = v.strip_prefix(['+', '-']).unwrap_or(v);
    if digits(unsigned) {
        return v.parse().map_err(|_| mismatch());
    }
    Err(mismatch())
}

fn base_shard_count(v: &str) -> Result<u64, String> {
    let n = parse_java_int(v)
        .ok_or_else(|| format!("{v} is not a parsable int (base10) for base_shard_count"))?;
    if n <= 0 {
        return Err(format!(
            "Invalid configuration, base_shard_count should be positive: {n}"
        ));
    }
    Ok(n as u64)
}

fn at_least_1mib(key: &str, v: &str) -> Result<u64, String> {
    let bytes =
        parse_human_bytes(v).map_err(|e| format!("{key} {v} is not a valid size in bytes: {e}"))?;
    if bytes < MIB {
        return Err(format!(
            "{key} {v} is not acceptable, size must be at least {}",
            pretty_print_memory(MIB)
        ));
    }
    Ok(bytes)
}

fn max_sstables(v: &str) -> Result<usize, String> {
    let n = parse_java_int(v)
        .ok_or_else(|| format!("{v} is not a parsable int (base10) for max_sstables_to_compact"))?;
    Ok(if n <= 0 { usize::MAX } else { n as usize })
}

fn parse_frequency_and_flags(options: &Options, ucs: &mut UcsOptions) -> Result<(), String> {
    let key = "expired_sstable_check_frequency_seconds";
    if let Some(v) = options.get(key) {
        let n = parse_java_long(v)
            .ok_or_else(|| format!("{v} is not a parsable long (base10) for {key}"))?;
        if n <= 0 {
            return Err(format!(
                "Invalid configuration, {key} should be positive: {n}"
            ));
        }
    }
    if let Some(v) = options.get("unsafe_aggressive_sstable_expiration") {
        if !is_true_or_false(v) {
            return Err(format!(
                "unsafe_aggressive_sstable_expiration should either be 'true' or 'false', not {v}"
            ));
        }
        ucs.ignore_overlaps = v.eq_ignore_ascii_case("true");
    }
    if let Some(v) = options.get("overlap_inclusion_method") {
        if !matches!(v.to_uppercase().as_str(), "NONE" | "SINGLE" | "TRANSITIVE") {
            return Err(format!(
                "Invalid overlap inclusion method {v}. The valid options are [NONE, SINGLE, TRANSITIVE]."
            ));
        }
    }
    Ok(())
}

fn min_sstable_size(v: &str, target: u64) -> Result<u64, String> {
    let bytes = parse_human_bytes(v)
        .map_err(|_| format!("{v} is not a valid size in bytes for min_sstable_size"))?;
    let limit =
        ((target as f64 * std::f64::consts::FRAC_1_SQRT_2).ceil() as u64).min(i32::MAX as u64);
    if bytes >= limit {
        return Err(format!(
            "Invalid configuration, min_sstable_size ({}) should be less than the target size minimum: {}",
            pretty_print_memory(bytes),
            pretty_print_memory(limit)
        ));
    }
    Ok(bytes)
}

fn sstable_growth(v: &str) -> Result<f64, String> {
    let growth = parse_percent(v).ok_or_else(|| {
        format!("sstable_growth is not a valid number between 0 and 1: For input string: \"{v}\"")
    })?;
    if !(0.0..=1.0).contains(&growth) {
        return Err(format!("sstable_growth {v} must be between 0 and 1"));
    }
    Ok(growth)
}
