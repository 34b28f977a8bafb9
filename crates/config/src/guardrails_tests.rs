//! Parsing, checking and listing the guardrail keys.

use std::path::Path;
use std::time::Duration;

use crate::{load_str, ConfigError, ConsistencyLevels, DataSize, Guardrails};

fn guardrails(text: &str) -> Guardrails {
    match load_str(text, Path::new("/srv")) {
        Ok(loaded) => {
            assert!(loaded.ignored.is_empty(), "ignored: {:?}", loaded.ignored);
            loaded.config.guardrails
        }
        Err(err) => panic!("refused: {err}\n{text}"),
    }
}

fn error(text: &str) -> String {
    match load_str(text, Path::new("/srv")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(ConfigError::Invalid { reason, .. }) => reason,
        Err(other) => other.to_string(),
    }
}

fn setting(g: &Guardrails, key: &str) -> Option<String> {
    let found = g.settings().into_iter().find(|(k, _)| *k == key);
    found.unwrap_or_else(|| panic!("{key} not listed")).1
}

#[test]
fn defaults_are_disabled_except_where_cassandra_enables_them() {
    let g = Guardrails::default();
    assert_eq!(g.keyspaces.amounts(), (None, None));
    assert!(g.allow_filtering_enabled && g.user_timestamps_enabled);
    assert!(g.zero_ttl_on_twcs_warned && g.zero_ttl_on_twcs_enabled);
    assert!(g.read_consistency_levels_warned.is_empty());
}

#[test]
fn thresholds_in_every_syntax() {
    let g = guardrails(
        "keyspaces_warn_threshold: 3\nkeyspaces_fail_threshold: 5\n\
         page_size_warn_threshold: -1\ncollection_size_warn_threshold: 100B\n\
         collection_size_fail_threshold: 2KiB\npartition_size_warn_threshold: 100MiB\n\
         maximum_timestamp_warn_threshold: 1d\nminimum_timestamp_fail_threshold: 1000us\n\
         partition_tombstones_warn_threshold: 5000000000\n",
    );
    assert_eq!(g.keyspaces.amounts(), (Some(3), Some(5)));
    assert_eq!(g.page_size.warn, None);
    assert_eq!(g.collection_size.amounts(), (Some(100), Some(2048)));
    assert_eq!(g.partition_size.warn, Some(DataSize::mebibytes(100)));
    assert_eq!(g.maximum_timestamp.warn, Some(Duration::from_secs(86_400)));
    assert_eq!(g.minimum_timestamp.amounts(), (None, Some(1000)));
    assert_eq!(g.partition_tombstones.warn, Some(5_000_000_000));
}

#[test]
fn old_names_of_guardrails() {
    let g = guardrails(
        "keyspace_count_warn_threshold: 8\ntable_count_warn_threshold: 50\n\
         compaction_large_partition_warning_threshold_mb: 100\n\
         compaction_tombstone_warning_threshold: 100000\n",
    );
    assert_eq!(g.keyspaces.warn, Some(3));
    assert_eq!(g.tables.warn, Some(2));
    assert_eq!(g.partition_size.warn, Some(DataSize::mebibytes(100)));
    assert_eq!(g.partition_tombstones.warn, Some(100_000));
    let g = guardrails("compaction_large_partition_warning_threshold: 64MiB\n");
    assert_eq!(g.partition_size.warn, Some(DataSize::mebibytes(64)));
}

#[test]
fn flags_and_consistency_levels() {
    let g = guardrails(
        "allow_filtering_enabled: false\nuser_timestamps_enabled: false\n\
         read_consistency_levels_warned: [QUORUM, ALL]\n\
         write_consistency_levels_disallowed:\n  - ANY\n",
    );
    assert!(!g.allow_filtering_enabled && !g.user_timestamps_enabled);
    assert_eq!(
        g.read_consistency_levels_warned,
        ConsistencyLevels::of(&[4, 5])
    );
    assert!(g.write_consistency_levels_disallowed.contains(0));
    assert!(!g.write_consistency_levels_disallowed.contains(5));
}

/// The messages of Cassandra 5.0.4's `GuardrailsOptions`.
#[test]
fn bad_values_are_refused_with_cassandras_messages() {
    assert_eq!(
        error("tables_warn_threshold: 0\n"),
        "Invalid value for tables_warn_threshold: 0 is not allowed; if attempting to disable use -1"
    );
    assert_eq!(
        error("tables_fail_threshold: -2\n"),
        "Invalid value -2 for tables_fail_threshold: negative values are not allowed, outside of -1 which disables the guardrail"
    );
    assert_eq!(
        error("page_size_warn_threshold: 2147483648\n"),
        "Invalid value 2147483648 for page_size_warn_threshold: maximum allowed value is 2147483647"
    );
    assert_eq!(
        error("keyspaces_warn_threshold: 5\nkeyspaces_fail_threshold: 3\n"),
        "The warn threshold 5 for keyspaces_warn_threshold should be lower than the fail threshold 3"
    );
    assert_eq!(
        error("minimum_replication_factor_warn_threshold: 1\nminimum_replication_factor_fail_threshold: 2\n"),
        "The warn threshold 1 for minimum_replication_factor_warn_threshold should be greater than the fail threshold 2"
    );
    assert_eq!(
        error("minimum_replication_factor_fail_threshold: 2\n"),
        "minimum_replication_factor_fail_threshold to be set (2) cannot be greater than default_keyspace_rf (1)"
    );
    assert_eq!(
        error("column_value_size_warn_threshold: 0B\n"),
        "Invalid value for column_value_size_warn_threshold: 0 is not allowed; if attempting to disable use an empty value"
    );
    assert_eq!(
        error("collection_size_warn_threshold: 2KiB\ncollection_size_fail_threshold: 1KiB\n"),
        "The warn threshold 2KiB for collection_size_warn_threshold should be lower than the fail threshold 1KiB"
    );
    assert!(error("read_consistency_levels_warned: [all]\n")
        .contains("'all' is not a consistency level"));
    assert!(error("allow_filtering_enabled: maybe\n").contains("expected true or false"));
    assert!(error("maximum_timestamp_warn_threshold: 5\n").contains("accepted units"));
}

/// As Cassandra 5.0.4's `system_views.settings` prints them (refcass).
#[test]
fn settings_print_like_cassandra() {
    let g = guardrails(
        "keyspaces_warn_threshold: 3\ncolumn_value_size_warn_threshold: 100B\n\
         read_consistency_levels_disallowed: [EACH_QUORUM]\nmaximum_timestamp_warn_threshold: 1d\n\
         group_by_enabled: false\n",
    );
    assert_eq!(
        setting(&g, "keyspaces_warn_threshold").as_deref(),
        Some("3")
    );
    assert_eq!(
        setting(&g, "keyspaces_fail_threshold").as_deref(),
        Some("-1")
    );
    assert_eq!(
        setting(&g, "column_value_size_warn_threshold").as_deref(),
        Some("100B")
    );
    assert_eq!(setting(&g, "column_value_size_fail_threshold"), None);
    assert_eq!(
        setting(&g, "read_consistency_levels_disallowed").as_deref(),
        Some("[EACH_QUORUM]")
    );
    assert_eq!(
        setting(&g, "read_consistency_levels_warned").as_deref(),
        Some("[]")
    );
    assert_eq!(
        setting(&g, "maximum_timestamp_warn_threshold").as_deref(),
        Some("1d")
    );
    assert_eq!(setting(&g, "minimum_timestamp_warn_threshold"), None);
    assert_eq!(setting(&g, "group_by_enabled").as_deref(), Some("false"));
    assert_eq!(
        setting(&g, "zero_ttl_on_twcs_warned").as_deref(),
        Some("true")
    );
}
