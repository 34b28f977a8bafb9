//! The sub-options every strategy shares (Cassandra's `AbstractCompactionStrategy` and
//! `CompactionParams`), with Cassandra's defaults, value syntax and validation messages.

use std::collections::BTreeMap;

use super::syntax::{is_true_or_false, java_float_f, parse_java_float, parse_java_long};

/// The table's `compaction` map as stored in `system_schema.tables`.
pub type Options = BTreeMap<String, String>;

/// Keys accepted by every strategy besides its own.
const COMMON_KEYS: &[&str] = &[
    "class",
    "enabled",
    "tombstone_threshold",
    "tombstone_compaction_interval",
    "unchecked_tombstone_compaction",
    "only_purge_repaired_tombstones",
    "log_all",
    "provide_overlapping_tombstones",
    "min_threshold",
    "max_threshold",
];

/// Common options after validation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommonOptions {
    /// `min_threshold` (4): fewest SSTables a size-tiered bucket needs.
    pub min_threshold: usize,
    /// `max_threshold` (32): most SSTables merged by one background task.
    pub max_threshold: usize,
    /// `enabled` (true): background compactions run.
    pub enabled: bool,
    /// `tombstone_threshold` (0.2): droppable ratio above which a single-SSTable tombstone
    /// compaction is considered.
    pub tombstone_threshold: f64,
    /// `tombstone_compaction_interval` (86400 s): minimum SSTable age for a tombstone compaction.
    pub tombstone_interval_s: i64,
    /// `unchecked_tombstone_compaction` (false): skip the overlap estimate.
    pub unchecked_tombstone_compaction: bool,
    /// `only_purge_repaired_tombstones` (true in Helenus, false in Cassandra): purge
    /// tombstones only from repaired SSTables.
    pub only_purge_repaired_tombstones: bool,
}

impl Default for CommonOptions {
    fn default() -> Self {
        Self {
            min_threshold: 4,
            max_threshold: 32,
            enabled: true,
            tombstone_threshold: 0.2,
            tombstone_interval_s: 86_400,
            unchecked_tombstone_compaction: false,
            only_purge_repaired_tombstones: true,
        }
    }
}

/// Parses the common options in Cassandra's order (`AbstractCompactionStrategy.validateOptions`).
/// Threshold checks run later, in [`check_thresholds`], as `CompactionParams.validate` does.
pub(crate) fn parse_common(options: &Options) -> Result<CommonOptions, String> {
    let mut common = CommonOptions::default();
    if let Some(v) = options.get("tombstone_threshold") {
        common.tombstone_threshold = tombstone_threshold(v)?;
    }
    if let Some(v) = options.get("tombstone_compaction_interval") {
        common.tombstone_interval_s = tombstone_interval(v)?;
    }
    if let Some(v) = options.get("unchecked_tombstone_compaction") {
        common.unchecked_tombstone_compaction = strict_bool(v, |v| {
            format!(
                "'unchecked_tombstone_compaction' should be either 'true' or 'false', not '{v}'"
            )
        })?;
    }
    if let Some(v) = options.get("log_all") {
        strict_bool(v, |v| {
            format!("'log_all' should either be 'true' or 'false', not {v}")
        })?;
    }
    if let Some(v) = options.get("enabled") {
        common.enabled = strict_bool(v, |v| {
            format!("enabled should either be 'true' or 'false', not {v}")
        })?;
    }
    if let Some(v) = options.get("provide_overlapping_tombstones") {
        overlapping_tombstones(v)?;
    }
    common.only_purge_repaired_tombstones = only_purge_repaired_tombstones(options);
    Ok(common)
}

/// `only_purge_repaired_tombstones`: on unless the map says otherwise (any value but `true`,
/// as Java's `Boolean.parseBoolean` reads it, turns it off). Helenus's default is on, where
/// Cassandra's is off: a replica that missed a delete cannot bring the row back after a
/// compaction purged the tombstone elsewhere.
pub(crate) fn only_purge_repaired_tombstones(options: &Options) -> bool {
    options
        .get("only_purge_repaired_tombstones")
        .is_none_or(|v| v.eq_ignore_ascii_case("true"))
}

fn tombstone_threshold(v: &str) -> Result<f64, String> {
    let value = parse_java_float(v)
        .ok_or_else(|| format!("{v} is not a parsable int (base10) for tombstone_threshold"))?;
    if value < 0.0 {
        return Err(format!(
            "tombstone_threshold must be greater than 0, but was {}",
            java_float_f(value)
        ));
    }
    Ok(value)
}

fn tombstone_interval(v: &str) -> Result<i64, String> {
    let value = parse_java_long(v).ok_or_else(|| {
        format!("{v} is not a parsable int (base10) for tombstone_compaction_interval")
    })?;
    if value < 0 {
        return Err(format!(
            "tombstone_compaction_interval must be greater than 0, but was {value}"
        ));
    }
    Ok(value)
}

fn strict_bool(v: &str, message: impl Fn(&str) -> String) -> Result<bool, String> {
    if is_true_or_false(v) {
        Ok(v.eq_ignore_ascii_case("true"))
    } else {
        Err(message(v))
    }
}

fn overlapping_tombstones(v: &str) -> Result<(), String> {
    match v.to_ascii_uppercase().as_str() {
        "NONE" | "ROW" | "CELL" => Ok(()),
        other => Err(format!(
            "No enum constant org.apache.cassandra.schema.CompactionParams.TombstoneOption.{other}"
        )),
    }
}

/// Rejects keys neither common nor in `own`, with Cassandra's message.
pub(crate) fn check_unknown(options: &Options, own: &[&str], class: &str) -> Result<(), String> {
    let unknown: Vec<&str> = options
        .keys()
        .map(String::as_str)
        .filter(|k| !COMMON_KEYS.contains(k) && !own.contains(k))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(format!(
        "Properties specified [{}] are not understood by {class}",
        unknown.join(", ")
    ))
}

/// `min_threshold` / `max_threshold` validation from `CompactionParams.validate`.
pub(crate) fn check_thresholds(
    options: &Options,
    common: &mut CommonOptions,
) -> Result<(), String> {
    let min = threshold(options, "min_threshold", 4)?;
    let max = threshold(options, "max_threshold", 32)?;
    if min <= 0 || max <= 0 {
        return Err(
            "Disabling compaction by setting compaction thresholds to 0 has been removed, \
                    set the compaction option 'enabled' to false instead."
                .to_string(),
        );
    }
    if min <= 1 {
        return Err(format!(
            "Min compaction threshold cannot be less than 2 (got {min})"
        ));
    }
    if min > max {
        return Err(format!(
            "Min compaction threshold (got {min}) cannot be greater than max compaction threshold (got {max})"
        ));
    }
    common.min_threshold = usize::try_from(min).unwrap_or(usize::MAX);
    common.max_threshold = usize::try_from(max).unwrap_or(usize::MAX);
    Ok(())
}

fn threshold(options: &Options, key: &str, default: i32) -> Result<i32, String> {
    let Some(v) = options.get(key) else {
        return Ok(default);
    };
    let numeric = !v.is_empty() && v.chars().all(|c| c.is_ascii_digit());
    match v.parse::<i32>() {
        Ok(n) if numeric => Ok(n),
        _ => Err(format!(
            "Invalid value {v} for '{key}' compaction sub-option - must be an integer"
        )),
    }
}
