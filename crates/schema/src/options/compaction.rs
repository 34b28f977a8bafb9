//! The `compaction` option: strategy class names (short names expanded), the sub-options each
//! strategy understands, and the min/max thresholds Cassandra adds and checks.
use crate::error::SchemaError;
use std::collections::BTreeMap;

const PACKAGE: &str = "org.apache.cassandra.db.compaction.";

/// Sub-options every strategy understands.
const COMMON: &[&str] = &[
    "enabled",
    "tombstone_threshold",
    "tombstone_compaction_interval",
    "unchecked_tombstone_compaction",
    "only_purge_repaired_tombstones",
    "log_all",
    "provide_overlapping_tombstones",
];
const THRESHOLDS: &[&str] = &["min_threshold", "max_threshold"];
const SIZE_TIERED: &[&str] = &["min_sstable_size", "bucket_low", "bucket_high"];
const LEVELED: &[&str] = &[
    "sstable_size_in_mb",
    "fanout_size",
    "single_sstable_uplevel",
];
const TIME_WINDOW: &[&str] = &[
    "compaction_window_unit",
    "compaction_window_size",
    "timestamp_resolution",
    "expired_sstable_check_frequency_seconds",
    "unsafe_aggressive_sstable_expiration",
];
const UNIFIED: &[&str] = &[
    "scaling_parameters",
    "base_shard_count",
    "target_sstable_size",
    "min_sstable_size",
    "sstable_growth",
    "flush_size_override",
    "max_sstables_to_compact",
    "expired_sstable_check_frequency_seconds",
    "unsafe_aggressive_sstable_expiration",
    "overlap_inclusion_method",
    "survival_factors",
];

/// A known strategy: its simple class name and the sub-option groups it accepts.
struct Strategy {
    name: &'static str,
    options: &'static [&'static [&'static str]],
    thresholds: bool,
}

const STRATEGIES: &[Strategy] = &[
    Strategy {
        name: "SizeTieredCompactionStrategy",
        options: &[SIZE_TIERED],
        thresholds: true,
    },
    Strategy {
        name: "LeveledCompactionStrategy",
        options: &[LEVELED, SIZE_TIERED],
        thresholds: true,
    },
    Strategy {
        name: "TimeWindowCompactionStrategy",
        options: &[TIME_WINDOW, SIZE_TIERED],
        thresholds: true,
    },
    Strategy {
        name: "UnifiedCompactionStrategy",
        options: &[UNIFIED],
        thresholds: false,
    },
];

/// The default compaction map: size-tiered with thresholds 4 and 32.
pub(crate) fn default_compaction() -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "class".to_string(),
            format!("{PACKAGE}SizeTieredCompactionStrategy"),
        ),
        ("max_threshold".to_string(), "32".to_string()),
        ("min_threshold".to_string(), "4".to_string()),
    ])
}

/// Whether `compaction` is leveled (whose default bloom filter chance is 0.1, not 0.01).
pub(crate) fn is_leveled(compaction: &BTreeMap<String, String>) -> bool {
    compaction.get("class").map(String::as_str)
        == Some("org.apache.cassandra.db.compaction.LeveledCompactionStrategy")
}

/// Validates a `compaction = {...}` map and returns it as Cassandra stores it.
pub(crate) fn parse_compaction(
    entries: &[(String, String)],
) -> Result<BTreeMap<String, String>, SchemaError> {
    let mut map: BTreeMap<String, String> = entries.iter().cloned().collect();
    let class = map.remove("class").ok_or_else(|| {
        SchemaError::Config("Missing sub-option 'class' for the 'compaction' option".into())
    })?;
    let full = if class.contains('.') {
        class
    } else {
        format!("{PACKAGE}{class}")
    };
    let strategy = STRATEGIES
        .iter()
        .find(|s| full.strip_prefix(PACKAGE) == Some(s.name))
        .ok_or_else(|| {
            SchemaError::Config(format!("Unable to find compaction strategy class '{full}'"))
        })?;
    check_understood(strategy, &map)?;
    if strategy.thresholds {
        check_thresholds(&mut map)?;
    }
    check_int_options(&map)?;
    map.insert("class".into(), full);
    Ok(map)
}

fn check_understood(
    strategy: &Strategy,
    map: &BTreeMap<String, String>,
) -> Result<(), SchemaError> {
    let known = |key: &str| {
        COMMON.contains(&key)
            || (strategy.thresholds && THRESHOLDS.contains(&key))
            || strategy.options.iter().any(|group| group.contains(&key))
    };
    let unknown: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| !known(k))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(SchemaError::Config(format!(
        "Properties specified [{}] are not understood by {}",
        unknown.join(", "),
        strategy.name
    )))
}

fn check_thresholds(map: &mut BTreeMap<String, String>) -> Result<(), SchemaError> {
    let min = threshold(map, "min_threshold", 4)?;
    let max = threshold(map, "max_threshold", 32)?;
    if min < 2 {
        return Err(SchemaError::Config(format!(
            "Min compaction threshold cannot be less than 2 (got {min})"
        )));
    }
    if min > max {
        return Err(SchemaError::Config(format!(
            "Min compaction threshold (got {min}) cannot be greater than max compaction \
             threshold (got {max})"
        )));
    }
    Ok(())
}

/// The threshold `key`, inserting `default` when absent.
fn threshold(
    map: &mut BTreeMap<String, String>,
    key: &str,
    default: i32,
) -> Result<i32, SchemaError> {
    let text = map
        .entry(key.to_string())
        .or_insert_with(|| default.to_string());
    text.parse().map_err(|_| {
        SchemaError::Config(format!(
            "Invalid value {text} for '{key}' compaction sub-option - must be an integer"
        ))
    })
}

fn check_int_options(map: &BTreeMap<String, String>) -> Result<(), SchemaError> {
    for key in [
        "sstable_size_in_mb",
        "fanout_size",
        "compaction_window_size",
    ] {
        if let Some(text) = map.get(key) {
            if text.parse::<i32>().is_err() {
                return Err(SchemaError::Config(format!(
                    "{text} is not a parsable int (base10) for {key}"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(entries: &[(&str, &str)]) -> Result<BTreeMap<String, String>, SchemaError> {
        parse_compaction(&crate::options::owned_pairs(entries))
    }

    fn message(result: Result<BTreeMap<String, String>, SchemaError>) -> String {
        result.err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn short_names_expand_and_thresholds_are_added() -> Result<(), SchemaError> {
        assert_eq!(
            parse(&[("class", "SizeTieredCompactionStrategy")])?,
            default_compaction()
        );
        let leveled = parse(&[
            ("class", "LeveledCompactionStrategy"),
            ("sstable_size_in_mb", "100"),
        ])?;
        assert!(is_leveled(&leveled));
        assert_eq!(
            leveled.get("sstable_size_in_mb").map(String::as_str),
            Some("100")
        );
        assert_eq!(leveled.get("min_threshold").map(String::as_str), Some("4"));
        Ok(())
    }

    #[test]
    fn unified_gets_no_thresholds() -> Result<(), SchemaError> {
        let ucs = parse(&[("class", "UnifiedCompactionStrategy")])?;
        assert_eq!(ucs.len(), 1);
        assert_eq!(
            message(parse(&[
                ("class", "UnifiedCompactionStrategy"),
                ("min_threshold", "2")
            ])),
            "Properties specified [min_threshold] are not understood by UnifiedCompactionStrategy"
        );
        Ok(())
    }

    #[test]
    fn errors_match_cassandra() {
        assert_eq!(
            message(parse(&[("max_threshold", "3")])),
            "Missing sub-option 'class' for the 'compaction' option"
        );
        assert_eq!(
            message(parse(&[("class", "Foo")])),
            "Unable to find compaction strategy class 'org.apache.cassandra.db.compaction.Foo'"
        );
        assert_eq!(
            message(parse(&[
                ("class", "SizeTieredCompactionStrategy"),
                ("bogus", "1")
            ])),
            "Properties specified [bogus] are not understood by SizeTieredCompactionStrategy"
        );
        assert_eq!(
            message(parse(&[
                ("class", "SizeTieredCompactionStrategy"),
                ("min_threshold", "1")
            ])),
            "Min compaction threshold cannot be less than 2 (got 1)"
        );
        assert_eq!(
            message(parse(&[
                ("class", "SizeTieredCompactionStrategy"),
                ("max_threshold", "2"),
                ("min_threshold", "3")
            ])),
            "Min compaction threshold (got 3) cannot be greater than max compaction threshold (got 2)"
        );
        assert_eq!(
            message(parse(&[
                ("class", "SizeTieredCompactionStrategy"),
                ("min_threshold", "x")
            ])),
            "Invalid value x for 'min_threshold' compaction sub-option - must be an integer"
        );
        assert_eq!(
            message(parse(&[
                ("class", "LeveledCompactionStrategy"),
                ("sstable_size_in_mb", "abc")
            ])),
            "abc is not a parsable int (base10) for sstable_size_in_mb"
        );
    }
}
