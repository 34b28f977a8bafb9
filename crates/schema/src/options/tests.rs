//! Tests of `TableOptions`: defaults, applying options, and Cassandra 5.0.4's error messages.
use super::*;

fn constant(name: &str, value: &str) -> (String, OptionValue) {
    (name.to_string(), OptionValue::Constant(value.to_string()))
}

fn map_option(name: &str, entries: &[(&str, &str)]) -> (String, OptionValue) {
    let entries = entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (name.to_string(), OptionValue::Map(entries))
}

fn error_of(options: &[(String, OptionValue)]) -> String {
    let mut table = TableOptions::default();
    let result = table.apply_options(options);
    assert_eq!(
        table,
        TableOptions::default(),
        "failed options must change nothing"
    );
    result.err().map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn applies_every_kind_of_option() -> Result<(), SchemaError> {
    let mut table = TableOptions::default();
    table.apply_options(&[
        constant("comment", "it's"),
        constant("gc_grace_seconds", "10"),
        constant("default_time_to_live", "100"),
        constant("bloom_filter_fp_chance", "0.1"),
        constant("crc_check_chance", "0.5"),
        constant("cdc", "true"),
        constant("allow_auto_snapshot", "false"),
        constant("incremental_backups", "no"),
        constant("speculative_retry", "50ms"),
        constant("additional_write_policy", "NONE"),
        constant("read_repair", "none"),
        constant("memtable", "default"),
        constant("min_index_interval", "64"),
        constant("max_index_interval", "4096"),
        constant("memtable_flush_period_in_ms", "1000"),
        map_option("caching", &[("keys", "NONE"), ("rows_per_partition", "10")]),
        map_option("compaction", &[("class", "TimeWindowCompactionStrategy")]),
        map_option("compression", &[("enabled", "false")]),
        map_option("extensions", &[("x", "0x01")]),
    ])?;
    assert_eq!(table.comment, "it's");
    assert_eq!(table.gc_grace_seconds, 10);
    assert_eq!(table.default_time_to_live, 100);
    assert_eq!(table.bloom_filter_fp_chance, 0.1);
    assert_eq!(table.crc_check_chance, 0.5);
    assert!(table.cdc && !table.allow_auto_snapshot && !table.incremental_backups);
    assert_eq!(table.speculative_retry, "50ms");
    assert_eq!(table.additional_write_policy, "NEVER");
    assert_eq!(table.read_repair, "NONE");
    assert_eq!(
        (table.min_index_interval, table.max_index_interval),
        (64, 4096)
    );
    assert_eq!(table.memtable_flush_period_in_ms, 1000);
    assert_eq!(
        table.caching.get("rows_per_partition").map(String::as_str),
        Some("10")
    );
    assert_eq!(
        table.compaction.get("class").map(String::as_str),
        Some("org.apache.cassandra.db.compaction.TimeWindowCompactionStrategy")
    );
    assert_eq!(table.compression.len(), 1);
    assert!(table.extensions.is_empty());
    Ok(())
}

#[test]
fn leveled_new_tables_default_to_bloom_point_one() -> Result<(), SchemaError> {
    let leveled = map_option("compaction", &[("class", "LeveledCompactionStrategy")]);
    let created = TableOptions::for_new_table(std::slice::from_ref(&leveled))?;
    assert_eq!(created.bloom_filter_fp_chance, 0.1);
    let explicit = TableOptions::for_new_table(&[
        leveled.clone(),
        constant("bloom_filter_fp_chance", "0.02"),
    ])?;
    assert_eq!(explicit.bloom_filter_fp_chance, 0.02);
    let mut altered = TableOptions::default();
    altered.apply_options(&[leveled])?;
    assert_eq!(altered.bloom_filter_fp_chance, 0.01);
    Ok(())
}

#[test]
fn table_id_option_is_parsed() -> Result<(), SchemaError> {
    let id = "eadc70f0-e67a-11f1-99db-39414a0423fd";
    assert_eq!(
        table_id_option(&[constant("id", id)])?.map(|u| u.to_string()),
        Some(id.to_string())
    );
    assert_eq!(table_id_option(&[])?, None);
    assert_eq!(error_of(&[constant("id", "x")]), "Invalid table id");
    Ok(())
}

// Messages match Cassandra 5.0.4.
#[test]
fn errors_match_cassandra() {
    let cases: Vec<(Vec<(String, OptionValue)>, &str)> = vec![
        (vec![constant("foo", "1")], "Unknown property 'foo'"),
        (vec![constant("gc_grace_seconds", "abc")], "Invalid integer value abc for 'gc_grace_seconds'"),
        (vec![constant("gc_grace_seconds", "-1")], "gc_grace_seconds must be greater than or equal to 0 (got -1)"),
        (vec![constant("bloom_filter_fp_chance", "2")], "bloom_filter_fp_chance must be larger than 6.71E-5 and less than or equal to 1.0 (got 2.0)"),
        (vec![constant("bloom_filter_fp_chance", "x")], "Invalid double value x for 'bloom_filter_fp_chance'"),
        (vec![constant("min_index_interval", "0")], "min_index_interval must be greater than or equal to 1 (got 0)"),
        (vec![constant("max_index_interval", "10")], "max_index_interval must be greater than or equal to min_index_interval (128) (got 10)"),
        (vec![constant("crc_check_chance", "2")], "crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got 2.0)"),
        (vec![constant("default_time_to_live", "700000000")], "default_time_to_live must be less than or equal to 630720000 (got 700000000)"),
        (vec![map_option("comment", &[("a", "b")])], "Invalid value for property 'comment'. It should be a string"),
        (vec![constant("compaction", "x")], "Invalid value for property 'compaction'. It should be a map."),
        (vec![constant("memtable", "foo")], "Memtable configuration \"foo\" not found."),
        (vec![constant("comment", "a"), constant("comment", "b")], "Multiple definition for property 'comment'"),
    ];
    for (options, expected) in cases {
        assert_eq!(error_of(&options), expected);
    }
}
