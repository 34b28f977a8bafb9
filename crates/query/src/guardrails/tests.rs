//! Unit tests of the guardrails: each one's values and messages, compared with what Cassandra
//! 5.0.4 (refcass, a role without superuser under PasswordAuthenticator) answered for the same
//! thresholds, and the batch sizes it reported for the same statements.
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use config::{ConsistencyLevels, DataSize, Guardrails, Threshold as Values};
use cql::ast::{BatchKind, Statement};
use schema::{KeyspaceMetadata, Schema, TableMetadata};
use types::request::QueryOptions;
use types::CqlError;

use super::batch::{java_hash_set_order, pretty_memory, BatchWrites};
use super::check::{decorate, Level, Notice};
use super::partitions::{key_text, primary_key_literal};
use super::{Limits, Warnings};
use crate::exec::ExecContext;
use crate::keys::{partition_key, KeyLayout};
use crate::modify::ModifyPlan;
use crate::operand::Binder;

fn limits(guardrails: Guardrails) -> Limits {
    Limits {
        guardrails,
        ..Limits::default()
    }
}

fn pair(warn: u64, fail: u64) -> Values<u64> {
    Values {
        warn: Some(warn),
        fail: Some(fail),
    }
}

/// What a check reports: the client warnings, and the failure message if it failed.
fn outcome(check: impl FnOnce(&Notice) -> types::CqlResult<()>) -> (Vec<String>, Option<String>) {
    let warnings = Warnings::default();
    let result = check(&Notice::client(&warnings, None));
    let failure = match result {
        Ok(()) => None,
        Err(CqlError::Invalid(message)) => Some(message),
        Err(other) => panic!("not InvalidRequest: {other:?}"),
    };
    (warnings.take(), failure)
}

fn warned(check: impl FnOnce(&Notice) -> types::CqlResult<()>) -> String {
    let (mut warnings, failure) = outcome(check);
    assert_eq!((warnings.len(), failure), (1, None));
    warnings.remove(0)
}

fn failed(check: impl FnOnce(&Notice) -> types::CqlResult<()>) -> String {
    outcome(check).1.expect("refused")
}

#[test]
fn thresholds_warn_above_warn_and_fail_above_fail() {
    let l = limits(Guardrails {
        page_size: pair(100, 1000),
        ..Guardrails::default()
    });
    let page = l.page_size();
    assert_eq!(page.level(100), None);
    assert_eq!(page.level(101), Some(Level::Warn));
    assert_eq!(page.level(1001), Some(Level::Fail));
    assert_eq!(outcome(|n| page.guard(-1, "c", n)), (vec![], None));
    assert!(!Limits::default().page_size().enabled());
    assert_eq!(
        warned(|n| page.guard(101, "c", n)),
        "Guardrail page_size violated: Query for table c with page size 101 exceeds warning threshold of 100."
    );
    assert_eq!(
        failed(|n| page.guard(1001, "c", n)),
        "Guardrail page_size violated: Aborting query for table c, page size 1001 exceeds fail threshold of 1000."
    );
}

#[test]
fn background_checks_only_log() {
    let l = limits(Guardrails {
        partition_tombstones: pair(5, 10),
        ..Guardrails::default()
    });
    assert!(l
        .partition_tombstones()
        .guard(11, "ks.t:k", &Notice::background())
        .is_ok());
}

#[test]
fn reasons_follow_the_message() {
    assert_eq!(
        decorate("x", Some("Why."), "It is."),
        "Guardrail x violated: It is. Why."
    );
    assert_eq!(
        decorate("x", Some("Why."), "It is"),
        "Guardrail x violated: It is. Why."
    );
    assert_eq!(decorate("x", None, "It is"), "Guardrail x violated: It is");
}

#[test]
fn schema_counts() {
    let l = limits(Guardrails {
        keyspaces: pair(3, 5),
        tables: pair(2, 4),
        columns_per_table: pair(3, 5),
        fields_per_udt: pair(2, 3),
        ..Guardrails::default()
    });
    assert_eq!(warned(|n| l.keyspaces().guard(4, "k4", n)), "Guardrail keyspaces violated: Creating keyspace k4, current number of keyspaces 4 exceeds warning threshold of 3.");
    assert_eq!(failed(|n| l.keyspaces().guard(6, "k1", n)), "Guardrail keyspaces violated: Cannot have more than 5 keyspaces, aborting the creation of keyspace k1");
    assert_eq!(warned(|n| l.tables().guard(3, "t3", n)), "Guardrail tables violated: Creating table t3, current number of tables 3 exceeds warning threshold of 2.");
    assert_eq!(failed(|n| l.tables().guard(5, "t5", n)), "Guardrail tables violated: Cannot have more than 4 tables, aborting the creation of table t5");
    assert_eq!(warned(|n| l.columns_per_table().guard(4, "t2", n)), "Guardrail columns_per_table violated: The table t2 has 4 columns, this exceeds the warning threshold of 3.");
    assert_eq!(failed(|n| l.columns_per_table().guard(6, "t3", n)), "Guardrail columns_per_table violated: Tables cannot have more than 5 columns, but 6 provided for table t3");
    assert_eq!(warned(|n| l.fields_per_udt().guard(3, "ty", n)), "Guardrail fields_per_udt violated: The user type ty has 3 columns, this exceeds the warning threshold of 2.");
    assert_eq!(failed(|n| l.fields_per_udt().guard(4, "ty2", n)), "Guardrail fields_per_udt violated: User types cannot have more than 3 columns, but 4 provided for user type ty2.");
}

#[test]
fn replication_factors() {
    let l = limits(Guardrails {
        minimum_replication_factor: Values {
            warn: Some(2),
            fail: None,
        },
        maximum_replication_factor: pair(3, 5),
        ..Guardrails::default()
    });
    let minimum = l.minimum_replication_factor();
    assert_eq!(
        (minimum.level(1), minimum.level(2)),
        (Some(Level::Warn), None)
    );
    assert_eq!(warned(|n| minimum.guard(1, "k2", n)), "Guardrail minimum_replication_factor violated: The keyspace k2 has a replication factor of 1, below the warning threshold of 2.");
    assert_eq!(warned(|n| l.maximum_replication_factor().guard(4, "k4", n)), "Guardrail maximum_replication_factor violated: The keyspace k4 has a replication factor of 4, above the warning threshold of 3.");
    assert_eq!(failed(|n| l.maximum_replication_factor().guard(6, "k5", n)), "Guardrail maximum_replication_factor violated: The keyspace k5 has a replication factor of 6, above the failure threshold of 5.");
}

#[test]
fn reads() {
    let l = limits(Guardrails {
        partition_keys_in_select: pair(2, 4),
        in_select_cartesian_product: pair(4, 9),
        ..Guardrails::default()
    });
    assert_eq!(warned(|n| l.partition_keys_in_select().guard(3, "c", n)), "Guardrail partition_keys_in_select violated: Query with partition keys in IN clause on table c, with number of partition keys 3 exceeds warning threshold of 2.");
    assert_eq!(failed(|n| l.partition_keys_in_select().guard(5, "c", n)), "Guardrail partition_keys_in_select violated: Aborting query with partition keys in IN clause on table c, number of partition keys 5 exceeds fail threshold of 4.");
    assert_eq!(warned(|n| l.in_select_cartesian_product().guard(5, "partition key", n)), "Guardrail in_select_cartesian_product violated: The cartesian product of the IN restrictions on partition key produces 5 values, this exceeds warning threshold of 4.");
    assert_eq!(failed(|n| l.in_select_cartesian_product().guard(10, "clustering key", n)), "Guardrail in_select_cartesian_product violated: Aborting query because the cartesian product of the IN restrictions on clustering key produces 10 values, this exceeds fail threshold of 9.");
}

fn sizes(warn: u64, fail: u64) -> Values<DataSize> {
    Values {
        warn: Some(DataSize::bytes(warn)),
        fail: Some(DataSize::bytes(fail)),
    }
}

#[test]
fn cells_and_collections() {
    let l = limits(Guardrails {
        items_per_collection: pair(2, 4),
        collection_size: sizes(100, 200),
        column_value_size: sizes(100, 200),
        ..Guardrails::default()
    });
    assert_eq!(warned(|n| l.items_per_collection().guard(3, "l", n)), "Guardrail items_per_collection violated: Detected collection l with 3 items, this exceeds the warning threshold of 2.");
    assert_eq!(failed(|n| l.items_per_collection().guard(5, "l", n)), "Guardrail items_per_collection violated: Detected collection l with 5 items, this exceeds the failure threshold of 4.");
    assert_eq!(warned(|n| l.collection_size().guard(124, "s", n)), "Guardrail collection_size violated: Detected collection s of size 124, this exceeds the warning threshold of 100.");
    assert_eq!(warned(|n| l.column_value_size().guard(150, "v", n)), "Guardrail column_value_size violated: Value of column 'v' has size 150, this exceeds the warning threshold of 100.");
    assert_eq!(failed(|n| l.column_value_size().guard(250, "v", n)), "Guardrail column_value_size violated: Value of column 'v' has size 250, this exceeds the failure threshold of 200.");
}

#[test]
fn partitions_written() {
    let l = limits(Guardrails {
        partition_size: sizes(1024, 4096),
        partition_tombstones: pair(5, 10),
        ..Guardrails::default()
    });
    let what = "k1.big:a:b on sstable /d/nb-1-big-Data.db";
    let size = l.partition_size();
    assert_eq!(size.message(Level::Warn, what, 2031), "Guardrail partition_size violated: Partition k1.big:a:b on sstable /d/nb-1-big-Data.db has size 2031, this exceeds the warning threshold of 1024. Too large partitions can cause performance problems.");
    let tombstones = l.partition_tombstones();
    assert_eq!(tombstones.message(Level::Fail, "k1.big:tomb on sstable x", 11), "Guardrail partition_tombstones violated: Partition k1.big:tomb on sstable x has 11 tombstones, this exceeds the failure threshold of 10. Partitions with too many tombstones can cause performance problems.");
}

#[test]
fn timestamps_are_bounded_around_now() {
    let day = std::time::Duration::from_secs(86_400);
    let l = limits(Guardrails {
        maximum_timestamp: Values {
            warn: Some(day),
            fail: Some(day * 2),
        },
        minimum_timestamp: Values {
            warn: Some(day),
            fail: None,
        },
        ..Guardrails::default()
    });
    let now = 1_700_000_000_000_000;
    let micros_per_day = 86_400_000_000;
    let maximum = l.maximum_timestamp(now);
    assert_eq!(maximum.level(now + micros_per_day), None);
    assert_eq!(maximum.level(now + micros_per_day + 1), Some(Level::Warn));
    assert_eq!(maximum.level(now + 3 * micros_per_day), Some(Level::Fail));
    let minimum = l.minimum_timestamp(now);
    assert_eq!(minimum.level(1000), Some(Level::Warn));
    assert_eq!(
        warned(|n| minimum.guard(1000, "c", n)),
        format!("Guardrail minimum_timestamp violated: The modification to table c has a timestamp 1000 before the minimum allowable warning threshold {}. Timestamps too far in the past can cause writes can be unexpectedly lost", now - micros_per_day)
    );
}

#[test]
fn flags() {
    let off = limits(Guardrails {
        allow_filtering_enabled: false,
        user_timestamps_enabled: false,
        group_by_enabled: false,
        drop_truncate_table_enabled: false,
        drop_keyspace_enabled: false,
        uncompressed_tables_enabled: false,
        compact_tables_enabled: false,
        read_before_write_list_operations_enabled: false,
        simplestrategy_enabled: false,
        alter_table_enabled: false,
        ..Guardrails::default()
    });
    let cases = [
        (off.allow_filtering(), "Guardrail allow_filtering violated: Querying with ALLOW FILTERING is not allowed. ALLOW FILTERING can potentially visit all the data in the table and have unpredictable performance."),
        (off.user_timestamps(), "Guardrail user_timestamps violated: User provided timestamps (USING TIMESTAMP) is not allowed"),
        (off.group_by(), "Guardrail group_by violated: GROUP BY functionality is not allowed"),
        (off.drop_truncate_table(), "Guardrail drop_truncate_table_enabled violated: DROP and TRUNCATE TABLE functionality is not allowed"),
        (off.drop_keyspace(), "Guardrail drop_keyspace_enabled violated: DROP KEYSPACE functionality is not allowed"),
        (off.uncompressed_tables(), "Guardrail uncompressed_tables_enabled violated: Uncompressed table is not allowed"),
        (off.compact_tables(), "Guardrail compact_tables violated: Creation of new COMPACT STORAGE tables is not allowed"),
        (off.simple_strategy(), "Guardrail simplestrategy violated: SimpleStrategy is not allowed"),
    ];
    for (flag, message) in cases {
        assert_eq!(failed(|n| flag.ensure_enabled(n)), message);
    }
    let list = off.read_before_write_list_operations();
    assert_eq!(failed(|n| list.ensure_enabled_as("Removal of list items requiring read before write", n)), "Guardrail read_before_write_list_operations violated: Removal of list items requiring read before write is not allowed");
    let alter = off.alter_table();
    assert_eq!(
        failed(|n| alter.ensure_enabled_as("ALTER TABLE changing columns", n)),
        "Guardrail alter_table violated: ALTER TABLE changing columns is not allowed"
    );
    let on = Limits::default();
    assert_eq!(
        outcome(|n| on.allow_filtering().ensure_enabled(n)),
        (vec![], None)
    );
}

/// Cassandra 5.0 warns by default about a TWCS table whose default TTL is 0.
#[test]
fn zero_ttl_on_twcs_is_warned_by_default() {
    let twcs = Limits::default().zero_ttl_on_twcs();
    let expected = "Guardrail zero_ttl_on_twcs violated: 0 default_time_to_live on a table with TimeWindowCompactionStrategy compaction strategy is not recommended. It is suspicious to use default_time_to_live set to 0 with such compaction strategy. Please keep in mind that data will not start to automatically expire after they are older than a respective compaction window unit of a certain size. Please set TTL for your INSERT or UPDATE statements if you expect data to be expired as table settings will not do it. ";
    assert_eq!(warned(|n| twcs.ensure_enabled(n)), expected);
    let off = limits(Guardrails {
        zero_ttl_on_twcs_enabled: false,
        ..Guardrails::default()
    });
    assert!(failed(|n| off.zero_ttl_on_twcs().ensure_enabled(n))
        .contains("compaction strategy is not allowed. It is suspicious"));
}

#[test]
fn consistency_levels() {
    let l = limits(Guardrails {
        read_consistency_levels_warned: ConsistencyLevels::of(&[5]),
        read_consistency_levels_disallowed: ConsistencyLevels::of(&[7]),
        write_consistency_levels_warned: ConsistencyLevels::of(&[5]),
        write_consistency_levels_disallowed: ConsistencyLevels::of(&[0]),
        ..Guardrails::default()
    });
    let read = l.read_consistency_levels();
    assert_eq!(failed(|n| read.guard(ConsistencyLevels::of(&[7]), n)), "Guardrail read_consistency_levels violated: Provided values [EACH_QUORUM] are not allowed for read consistency levels (disallowed values are: [EACH_QUORUM])");
    let write = l.write_consistency_levels();
    assert_eq!(warned(|n| write.guard(ConsistencyLevels::of(&[5, 8]), n)), "Guardrail write_consistency_levels violated: Provided values [ALL] are not recommended for write consistency levels (warned values are: [ALL])");
    assert_eq!(failed(|n| write.guard(ConsistencyLevels::of(&[0, 8]), n)), "Guardrail write_consistency_levels violated: Provided values [ANY] are not allowed for write consistency levels (disallowed values are: [ANY])");
    assert_eq!(
        outcome(|n| write.guard(ConsistencyLevels::of(&[1, 8]), n)),
        (vec![], None)
    );
}

#[test]
fn memory_printed_as_cassandra_does() {
    assert_eq!(pretty_memory(0), "0B");
    assert_eq!(pretty_memory(1023), "1023B");
    assert_eq!(pretty_memory(5120), "5.000KiB");
    assert_eq!(pretty_memory(6444), "6.293KiB");
    assert_eq!(pretty_memory(1088), "1.063KiB", "half up, as Java's %.3f");
    assert_eq!(pretty_memory(3_749_739), "3.576MiB");
}

#[test]
fn table_sets_iterate_in_java_hash_order() {
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        java_hash_set_order(&names(&["bk.u", "bk.t"])),
        ["bk.t", "bk.u"]
    );
    // "b" hashes to 98 (bucket 2), "a" to 97 (bucket 1), "aa" to 3104 (bucket 0).
    assert_eq!(
        java_hash_set_order(&names(&["b", "a", "aa"])),
        ["aa", "a", "b"]
    );
}

#[test]
fn composite_keys_print_as_cassandra_get_string() {
    let schema = schema();
    let comp = create(
        &schema,
        "CREATE TABLE comp (a int, b text, c int, PRIMARY KEY ((a, b), c))",
    );
    let layout = KeyLayout::new(comp);
    let key = partition_key(&[
        bytes::Bytes::from_static(&[0, 0, 0, 1]),
        bytes::Bytes::from_static(b"x:y!"),
    ]);
    assert_eq!(key_text(&layout, &key.key), "1:x\\:y!!");
    let t = KeyLayout::new(create(&schema, "CREATE TABLE t (k text PRIMARY KEY)"));
    assert_eq!(key_text(&t, b"a:b"), "a:b");
    // As Cassandra 5.0.4 named the partition ('2024-01-02 03:04:05.678+0000', 0xcafe, true).
    let typed = KeyLayout::new(create(
        &schema,
        "CREATE TABLE typed (t timestamp, x blob, b boolean, PRIMARY KEY ((t, x, b)))",
    ));
    let key = partition_key(&[
        bytes::Bytes::copy_from_slice(&1_704_164_645_678i64.to_be_bytes()),
        bytes::Bytes::from_static(&[0xca, 0xfe]),
        bytes::Bytes::from_static(&[1]),
    ]);
    assert_eq!(
        key_text(&typed, &key.key),
        "2024-01-02T03\\:04\\:05.678Z:cafe:true"
    );
}

/// As Cassandra 5.0.4 logged them at flush: "l in row (1, 'x:y', 2, 'it''s') in table bk.ck",
/// "l in row (1, 1) in table bk.col"; a key alone is not put in parentheses.
#[test]
fn primary_keys_print_as_cassandra_cql_literals() {
    let schema = schema();
    let ck = create(
        &schema,
        "CREATE TABLE ck (a int, b text, c int, d text, l list<int>, PRIMARY KEY ((a, b), c, d))",
    );
    let layout = KeyLayout::new(ck);
    let int = |v: i32| bytes::Bytes::copy_from_slice(&v.to_be_bytes());
    let key = partition_key(&[int(1), bytes::Bytes::from_static(b"x:y")]);
    let mut clustering = Vec::new();
    let values: [Option<&[u8]>; 2] = [Some(&[0, 0, 0, 2]), Some(b"it's")];
    types::comparable::encode_clustering(&layout.clustering_types, &values, &mut clustering);
    assert_eq!(
        primary_key_literal(&layout, &key.key, Some(&clustering)),
        "(1, 'x:y', 2, 'it''s')"
    );
    assert_eq!(
        primary_key_literal(&layout, &key.key, None),
        "(1, 'x:y')",
        "the static row"
    );
    let single = KeyLayout::new(create(
        &schema,
        "CREATE TABLE s (k int PRIMARY KEY, l list<int>)",
    ));
    assert_eq!(primary_key_literal(&single, &int(7), None), "7");
}

fn schema() -> Schema {
    let replication = BTreeMap::from([
        (
            "class".to_string(),
            "org.apache.cassandra.locator.SimpleStrategy".to_string(),
        ),
        ("replication_factor".to_string(), "1".to_string()),
    ]);
    Schema::new([Arc::new(KeyspaceMetadata::new("bk", replication, true))])
}

fn create(schema: &Schema, cql: &str) -> Arc<TableMetadata> {
    let statement = cql::parse(cql).expect("parses").statement;
    let dcs = BTreeSet::from(["datacenter1".to_string()]);
    let outcome = crate::ddl::plan(&statement, Some("bk"), schema, &dcs)
        .expect("valid")
        .expect("a schema statement");
    outcome.created_tables[0].clone()
}

fn mutations(table: &Arc<TableMetadata>, cql: &str, ctx: &ExecContext) -> Vec<mutation::Mutation> {
    let parsed = cql::parse(cql).expect("parses");
    let mut binder = Binder::new(0);
    let plan = match &parsed.statement {
        Statement::Insert(s) => ModifyPlan::insert(table.clone(), s, &mut binder),
        Statement::Update(s) => ModifyPlan::update(table.clone(), s, &mut binder),
        Statement::Delete(s) => ModifyPlan::delete(table.clone(), s, &mut binder),
        other => panic!("not a write: {other:?}"),
    };
    plan.expect("analysed")
        .mutations(ctx, &crate::modify::StoredRows::default())
        .expect("built")
}

/// The batch sizes Cassandra 5.0.4 reported ("Batch for [bk.t] is of size N, ...") for the same
/// statements: what is compared is the sum of the partition updates' `dataSize`, one update per
/// table and partition key with the statements on it merged.
#[test]
fn batch_size_counts_as_cassandra_does() {
    let schema = schema();
    let t = create(
        &schema,
        "CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))",
    );
    let u = create(
        &schema,
        "CREATE TABLE u (k int PRIMARY KEY, v text, s set<int>)",
    );
    let x = |n: usize| "x".repeat(n);
    let insert =
        |k: usize, n: usize| format!("INSERT INTO t (k, c, v) VALUES ({k}, 1, '{}')", x(n));
    type Batch<'a> = Vec<(&'a Arc<TableMetadata>, String)>;
    let cases: Vec<(Batch, u64)> = vec![
        ((0..2).map(|k| (&t, insert(k, 2500))).collect(), 5148),
        ((0..3).map(|k| (&t, insert(k, 2500))).collect(), 7722),
        ((0..6).map(|k| (&t, insert(k, 1000))).collect(), 6444),
        (
            (0..2)
                .map(|k| {
                    (
                        &t,
                        format!("UPDATE t SET v = '{}' WHERE k = {k} AND c = 1", x(2600)),
                    )
                })
                .collect(),
            5348,
        ),
        (
            (0..2)
                .map(|k| (&t, format!("{} USING TTL 100", insert(k, 2600))))
                .collect(),
            5372,
        ),
        (
            vec![
                (&t, "DELETE FROM t WHERE k = 0".into()),
                (&t, "DELETE FROM t WHERE k = 1".into()),
                (&t, insert(5, 5200)),
            ],
            5332,
        ),
        (
            vec![
                (&u, "INSERT INTO u (k, s) VALUES (0, {1, 2, 3})".into()),
                (&u, "INSERT INTO u (k, s) VALUES (1, {1, 2, 3})".into()),
                (&t, insert(5, 5100)),
            ],
            5442,
        ),
        (
            vec![
                (&t, "DELETE FROM t WHERE k = 0 AND c > 5".into()),
                (&t, "DELETE FROM t WHERE k = 1 AND c > 5".into()),
                (&t, insert(5, 5100)),
            ],
            5272,
        ),
    ];
    let ctx = ExecContext::new(&QueryOptions::default(), Vec::new());
    for (statements, expected) in cases {
        let mut batch = BatchWrites::default();
        for (table, cql) in &statements {
            batch.add(
                &KeyLayout::new((*table).clone()),
                &mutations(table, cql, &ctx),
            );
        }
        assert_eq!(batch.size(), expected, "{:?}", statements[0].1.get(..40));
    }
}

#[test]
fn batches_warn_then_fail_on_size_and_warn_on_unlogged_partitions() {
    let schema = schema();
    let t = create(
        &schema,
        "CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))",
    );
    let layout = KeyLayout::new(t.clone());
    let ctx = ExecContext::new(&QueryOptions::default(), Vec::new());
    let batch = |count: usize, value: usize| {
        let mut batch = BatchWrites::default();
        for k in 0..count {
            let cql = format!(
                "INSERT INTO t (k, c, v) VALUES ({k}, 1, '{}')",
                "x".repeat(value)
            );
            batch.add(&layout, &mutations(&t, &cql, &ctx));
        }
        batch
    };
    let limits = Limits::default();
    batch(6, 1000)
        .check(&limits, BatchKind::Logged, &ctx)
        .expect("warned only");
    assert_eq!(
        ctx.warnings.take(),
        ["Batch for [bk.t] is of size 6444, exceeding specified threshold of 5120 by 1324."]
    );
    let refused = batch(60, 1000).check(&limits, BatchKind::Logged, &ctx);
    assert!(matches!(refused, Err(CqlError::Invalid(m)) if m == "Batch too large"));
    batch(11, 1)
        .check(&limits, BatchKind::Unlogged, &ctx)
        .expect("warned only");
    assert_eq!(ctx.warnings.take(), ["Unlogged batch covering 11 partitions detected against table [bk.t]. You should use a logged batch for atomicity, or asynchronous writes for performance."]);
    batch(11, 1)
        .check(&limits, BatchKind::Logged, &ctx)
        .expect("logged");
    batch(10, 1)
        .check(&limits, BatchKind::Unlogged, &ctx)
        .expect("at the threshold");
    assert!(ctx.warnings.take().is_empty());
    let mut one_partition = BatchWrites::default();
    for c in 0..60 {
        let cql = format!(
            "INSERT INTO t (k, c, v) VALUES (1, {c}, '{}')",
            "x".repeat(1000)
        );
        one_partition.add(&layout, &mutations(&t, &cql, &ctx));
    }
    one_partition
        .check(&limits, BatchKind::Logged, &ctx)
        .expect("one partition is never checked");
}
