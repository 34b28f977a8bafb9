//! Option parsing: class names, defaults, and Cassandra's validation messages.

use super::util::opts;
use crate::compaction::from_options;

fn error(pairs: &[(&str, &str)]) -> String {
    from_options(&opts(pairs))
        .map(|s| s.name())
        .expect_err("invalid options")
}

fn name(pairs: &[(&str, &str)]) -> &'static str {
    from_options(&opts(pairs))
        .map(|s| s.name())
        .expect("valid options")
}

const STCS: (&str, &str) = ("class", "SizeTieredCompactionStrategy");
const LCS: (&str, &str) = ("class", "LeveledCompactionStrategy");
const TWCS: (&str, &str) = ("class", "TimeWindowCompactionStrategy");
const UCS: (&str, &str) = ("class", "UnifiedCompactionStrategy");

#[test]
fn class_names_short_and_qualified() {
    assert_eq!(name(&[STCS]), "SizeTieredCompactionStrategy");
    assert_eq!(
        name(&[(
            "class",
            "org.apache.cassandra.db.compaction.LeveledCompactionStrategy"
        )]),
        "LeveledCompactionStrategy"
    );
    assert_eq!(name(&[TWCS]), "TimeWindowCompactionStrategy");
    assert_eq!(name(&[UCS]), "UnifiedCompactionStrategy");
    assert_eq!(
        error(&[]),
        "Missing sub-option 'class' for the 'compaction' option"
    );
    assert_eq!(
        error(&[("class", "DateTieredCompactionStrategy")]),
        "Unable to find compaction strategy class 'org.apache.cassandra.db.compaction.DateTieredCompactionStrategy'"
    );
    assert_eq!(
        error(&[("class", "com.example.Mine")]),
        "Unable to find compaction strategy class 'com.example.Mine'"
    );
}

#[test]
fn stored_defaults_are_accepted() {
    let all = [
        STCS,
        ("min_threshold", "4"),
        ("max_threshold", "32"),
        ("enabled", "true"),
        ("tombstone_threshold", "0.2"),
        ("tombstone_compaction_interval", "86400"),
        ("unchecked_tombstone_compaction", "false"),
        ("only_purge_repaired_tombstones", "false"),
        ("log_all", "false"),
        ("bucket_low", "0.5"),
        ("bucket_high", "1.5"),
        ("min_sstable_size", "52428800"),
    ];
    assert_eq!(name(&all), "SizeTieredCompactionStrategy");
    assert_eq!(
        name(&[
            LCS,
            ("sstable_size_in_mb", "160"),
            ("fanout_size", "10"),
            ("single_sstable_uplevel", "true")
        ]),
        "LeveledCompactionStrategy"
    );
    let twcs = [
        TWCS,
        ("compaction_window_unit", "DAYS"),
        ("compaction_window_size", "1"),
        ("timestamp_resolution", "MICROSECONDS"),
        ("expired_sstable_check_frequency_seconds", "600"),
    ];
    assert_eq!(name(&twcs), "TimeWindowCompactionStrategy");
    let ucs = [
        UCS,
        ("scaling_parameters", "T4"),
        ("target_sstable_size", "1GiB"),
        ("base_shard_count", "4"),
        ("min_sstable_size", "100MiB"),
        ("sstable_growth", "0.333"),
        ("max_sstables_to_compact", "0"),
        ("expired_sstable_check_frequency_seconds", "600"),
        ("overlap_inclusion_method", "TRANSITIVE"),
    ];
    assert_eq!(name(&ucs), "UnifiedCompactionStrategy");
}

#[test]
fn thresholds() {
    assert_eq!(
        error(&[STCS, ("min_threshold", "1")]),
        "Min compaction threshold cannot be less than 2 (got 1)"
    );
    assert_eq!(
        error(&[STCS, ("min_threshold", "8"), ("max_threshold", "6")]),
        "Min compaction threshold (got 8) cannot be greater than max compaction threshold (got 6)"
    );
    assert_eq!(
        error(&[LCS, ("max_threshold", "0")]),
        "Disabling compaction by setting compaction thresholds to 0 has been removed, set the compaction option 'enabled' to false instead."
    );
    assert_eq!(
        error(&[STCS, ("min_threshold", "-2")]),
        "Invalid value -2 for 'min_threshold' compaction sub-option - must be an integer"
    );
    assert_eq!(
        error(&[STCS, ("max_threshold", "lots")]),
        "Invalid value lots for 'max_threshold' compaction sub-option - must be an integer"
    );
}

#[test]
fn common_options() {
    assert_eq!(
        error(&[STCS, ("tombstone_threshold", "-0.4")]),
        "tombstone_threshold must be greater than 0, but was -0.400000"
    );
    assert_eq!(
        error(&[STCS, ("tombstone_threshold", "x")]),
        "x is not a parsable int (base10) for tombstone_threshold"
    );
    assert_eq!(
        error(&[STCS, ("tombstone_compaction_interval", "-7")]),
        "tombstone_compaction_interval must be greater than 0, but was -7"
    );
    assert_eq!(
        error(&[STCS, ("tombstone_compaction_interval", "1.5")]),
        "1.5 is not a parsable int (base10) for tombstone_compaction_interval"
    );
    assert_eq!(
        error(&[LCS, ("unchecked_tombstone_compaction", "maybe")]),
        "'unchecked_tombstone_compaction' should be either 'true' or 'false', not 'maybe'"
    );
    assert_eq!(
        error(&[LCS, ("enabled", "certainly")]),
        "enabled should either be 'true' or 'false', not certainly"
    );
    assert_eq!(
        error(&[LCS, ("log_all", "yes")]),
        "'log_all' should either be 'true' or 'false', not yes"
    );
    assert_eq!(
        error(&[STCS, ("provide_overlapping_tombstones", "some")]),
        "No enum constant org.apache.cassandra.schema.CompactionParams.TombstoneOption.SOME"
    );
    assert_eq!(error(&[STCS, ("sstable_size_in_mb", "10"), ("fanout_size", "3")]), "Properties specified [fanout_size, sstable_size_in_mb] are not understood by SizeTieredCompactionStrategy");
}

#[test]
fn size_tiered_options() {
    assert_eq!(
        error(&[STCS, ("min_sstable_size", "-1")]),
        "min_sstable_size must be non negative: -1"
    );
    assert_eq!(
        error(&[STCS, ("min_sstable_size", "1MiB")]),
        "1MiB is not a parsable int (base10) for min_sstable_size"
    );
    assert_eq!(
        error(&[STCS, ("bucket_high", "0.4")]),
        "bucket_high value (0.4) is less than or equal to the bucket_low value (0.5)"
    );
    assert_eq!(
        error(&[STCS, ("bucket_low", "2")]),
        "bucket_high value (1.5) is less than or equal to the bucket_low value (2.0)"
    );
    assert_eq!(
        error(&[STCS, ("bucket_low", "low")]),
        "low is not a parsable float for bucket_low"
    );
}

#[test]
fn leveled_options() {
    assert_eq!(
        error(&[LCS, ("sstable_size_in_mb", "0")]),
        "sstable_size_in_mb must be larger than 0, but was 0"
    );
    assert_eq!(
        error(&[LCS, ("sstable_size_in_mb", "big")]),
        "big is not a parsable int (base10) for sstable_size_in_mb"
    );
    assert_eq!(
        error(&[LCS, ("fanout_size", "-3")]),
        "fanout_size must be larger than 0, but was -3"
    );
    assert_eq!(
        error(&[LCS, ("bucket_high", "0.1")]),
        "bucket_high value (0.1) is less than or equal to the bucket_low value (0.5)"
    );
    assert_eq!(error(&[LCS, ("compaction_window_unit", "DAYS")]), "Properties specified [compaction_window_unit] are not understood by LeveledCompactionStrategy");
}

#[test]
fn time_window_options() {
    assert_eq!(
        error(&[TWCS, ("compaction_window_unit", "SECONDS")]),
        "SECONDS is not valid for compaction_window_unit"
    );
    assert_eq!(
        error(&[TWCS, ("compaction_window_unit", "days")]),
        "days is not valid for compaction_window_unit"
    );
    assert_eq!(
        error(&[TWCS, ("compaction_window_size", "-8")]),
        "-8 must be greater than 1 for compaction_window_size"
    );
    assert_eq!(
        error(&[TWCS, ("compaction_window_size", "a")]),
        "a is not a parsable int (base10) for compaction_window_size"
    );
    assert_eq!(
        error(&[TWCS, ("timestamp_resolution", "WEEKS")]),
        "WEEKS is not valid for timestamp_resolution"
    );
    assert_eq!(
        error(&[TWCS, ("expired_sstable_check_frequency_seconds", "-1")]),
        "expired_sstable_check_frequency_seconds must not be negative, but was -1"
    );
    assert_eq!(
        error(&[TWCS, ("unsafe_aggressive_sstable_expiration", "maybe")]),
        "unsafe_aggressive_sstable_expiration is not 'true' or 'false' (maybe)"
    );
    assert_eq!(
        name(&[
            TWCS,
            ("compaction_window_unit", "MINUTES"),
            ("min_threshold", "2"),
            ("bucket_high", "2")
        ]),
        "TimeWindowCompactionStrategy"
    );
}

#[test]
fn unified_options() {
    assert_eq!(
        error(&[UCS, ("scaling_parameters", "X4")]),
        "Scaling parameter X4 must match N|L[0-9]+|T[0-9]+|[+-]?[0-9]+"
    );
    assert_eq!(
        error(&[UCS, ("scaling_parameters", "T4,L1")]),
        "Fan factor cannot be lower than 2 in L1"
    );
    assert_eq!(
        error(&[UCS, ("base_shard_count", "0")]),
        "Invalid configuration, base_shard_count should be positive: 0"
    );
    assert_eq!(
        error(&[UCS, ("base_shard_count", "four")]),
        "four is not a parsable int (base10) for base_shard_count"
    );
    assert_eq!(
        error(&[UCS, ("target_sstable_size", "1KiB")]),
        "target_sstable_size 1KiB is not acceptable, size must be at least 1.000MiB"
    );
    assert!(error(&[UCS, ("target_sstable_size", "huge")])
        .starts_with("target_sstable_size huge is not a valid size in bytes: "));
    assert_eq!(
        error(&[UCS, ("max_sstables_to_compact", "x")]),
        "x is not a parsable int (base10) for max_sstables_to_compact"
    );
    assert_eq!(
        error(&[UCS, ("expired_sstable_check_frequency_seconds", "0")]),
        "Invalid configuration, expired_sstable_check_frequency_seconds should be positive: 0"
    );
    assert_eq!(
        error(&[UCS, ("overlap_inclusion_method", "ALL")]),
        "Invalid overlap inclusion method ALL. The valid options are [NONE, SINGLE, TRANSITIVE]."
    );
    assert_eq!(
        error(&[UCS, ("min_sstable_size", "1GiB")]),
        "Invalid configuration, min_sstable_size (1.000GiB) should be less than the target size minimum: 724.077MiB"
    );
    assert_eq!(
        error(&[UCS, ("sstable_growth", "2")]),
        "sstable_growth 2 must be between 0 and 1"
    );
    assert_eq!(
        error(&[UCS, ("bucket_low", "0.5")]),
        "Properties specified [bucket_low] are not understood by UnifiedCompactionStrategy"
    );
    assert_eq!(
        name(&[
            UCS,
            ("scaling_parameters", "L10, T8, N, -2, +3"),
            ("sstable_growth", "50%")
        ]),
        "UnifiedCompactionStrategy"
    );
}
