//! WHERE clauses and statement forms checked against what Cassandra 5.0.4 answers (issue 14:
//! partition key filtering, `!=`, static-only writes, range deletions, counter
//! batches, dropped columns, key validation); tests/integration/test_where_validation.py
//! compares the same statements with a reference node.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use std::sync::Arc;

use types::request::{BoundValue, QueryOptions, Values};
use types::result::QueryResult;
use types::{CqlError, CqlResult};

use query::QueryProcessor;
use storage::Storage;
use system::testing::local_node;

async fn run(qp: &QueryProcessor, text: &str) -> CqlResult<QueryResult> {
    qp.query(Some("ks"), text, QueryOptions::default())
        .await
        .map(|outcome| outcome.result)
}

async fn count(qp: &QueryProcessor, text: &str) -> i32 {
    match run(qp, text).await {
        Ok(QueryResult::Rows(rows)) => rows.row_count,
        other => panic!("{text}: {other:?}"),
    }
}

async fn refusal(qp: &QueryProcessor, text: &str) -> String {
    match run(qp, text).await {
        Err(CqlError::Invalid(message)) => message,
        other => panic!("{text}: {other:?}"),
    }
}

async fn processor(dir: &std::path::Path, statements: &[&str]) -> Arc<QueryProcessor> {
    node(dir, statements).await.0
}

/// A node with keyspace `ks` after `statements`, and its storage.
async fn node(dir: &std::path::Path, statements: &[&str]) -> (Arc<QueryProcessor>, Arc<Storage>) {
    let (qp, storage) = local_node(dir).await.expect("the processor starts");
    let keyspace = "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}";
    for text in std::iter::once(&keyspace).chain(statements) {
        run(&qp, text).await.expect(text);
    }
    (qp, storage)
}

#[tokio::test]
async fn part_of_a_partition_key_filters_every_partition() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(
        dir.path(),
        &[
            "CREATE TABLE pk (a int, b text, c int, v int, PRIMARY KEY ((a, b), c))",
            "INSERT INTO pk (a, b, c, v) VALUES (1, 'x', 1, 10)",
            "INSERT INTO pk (a, b, c, v) VALUES (1, 'y', 1, 11)",
            "INSERT INTO pk (a, b, c, v) VALUES (2, 'x', 2, 20)",
        ],
    )
    .await;
    assert_eq!(
        count(&qp, "SELECT * FROM pk WHERE a = 1 ALLOW FILTERING").await,
        2
    );
    assert_eq!(
        count(&qp, "SELECT * FROM pk WHERE b = 'x' ALLOW FILTERING").await,
        2
    );
    assert_eq!(
        count(&qp, "SELECT * FROM pk WHERE a IN (2, 3) ALLOW FILTERING").await,
        1
    );
    assert_eq!(
        count(
            &qp,
            "SELECT * FROM pk WHERE a = 1 AND v > 10 ALLOW FILTERING"
        )
        .await,
        1
    );
    assert!(refusal(&qp, "SELECT * FROM pk WHERE a = 1")
        .await
        .contains("ALLOW FILTERING"));
}

#[tokio::test]
async fn not_equal_is_refused_in_where_clauses() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(
        dir.path(),
        &["CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))"],
    )
    .await;
    assert_eq!(
        refusal(&qp, "SELECT * FROM t WHERE v != 10 ALLOW FILTERING").await,
        "Unsupported \"!=\" relation: v != 10"
    );
    assert_eq!(
        refusal(&qp, "DELETE FROM t WHERE k = 1 AND c != 1").await,
        "Unsupported \"!=\" relation: c != 1"
    );
}

#[tokio::test]
async fn static_only_writes_name_no_rows_and_column_deletions_name_whole_rows() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(
        dir.path(),
        &["CREATE TABLE st (p int, c int, s int static, v int, PRIMARY KEY (p, c))"],
    )
    .await;
    run(&qp, "UPDATE st SET s = 1 WHERE p = 1")
        .await
        .expect("a static-only update");
    assert_eq!(
        refusal(&qp, "UPDATE st SET s = 9 WHERE p = 1 AND c = 1").await,
        "Invalid restrictions on clustering columns since the UPDATE statement modifies only static columns"
    );
    assert_eq!(
        refusal(&qp, "DELETE s FROM st WHERE p = 1 AND c = 1").await,
        "Invalid restrictions on clustering columns since the DELETE statement modifies only static columns"
    );
    assert_eq!(
        refusal(&qp, "DELETE v FROM st WHERE p = 1").await,
        "Range deletions are not supported for specific columns"
    );
}

#[tokio::test]
async fn counter_batches_as_cassandra_checks_them() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(
        dir.path(),
        &[
            "CREATE TABLE cn (k int PRIMARY KEY, n counter)",
            "CREATE TABLE t (k int PRIMARY KEY, v int)",
        ],
    )
    .await;
    let increment = "UPDATE cn SET n = n + 1 WHERE k = 1;";
    let insert = "INSERT INTO t (k, v) VALUES (1, 1);";
    run(
        &qp,
        &format!("BEGIN UNLOGGED BATCH {increment} APPLY BATCH"),
    )
    .await
    .expect("an unlogged batch of counters");
    for (batch, message) in [
        (
            format!("BEGIN COUNTER BATCH USING TIMESTAMP 10 {increment} APPLY BATCH"),
            "Cannot provide custom timestamp for counter BATCH",
        ),
        (
            format!("BEGIN COUNTER BATCH {increment} {insert} APPLY BATCH"),
            "Cannot include non-counter statement in a counter batch",
        ),
        (
            format!("BEGIN BATCH {increment} {insert} APPLY BATCH"),
            "Counter and non-counter mutations cannot exist in the same batch",
        ),
        (
            format!("BEGIN BATCH {increment} APPLY BATCH"),
            "Cannot include a counter statement in a logged batch",
        ),
    ] {
        assert_eq!(refusal(&qp, &batch).await, message);
    }
}

#[tokio::test]
async fn a_dropped_columns_cells_stay_dropped_when_it_is_added_again() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(
        dir.path(),
        &[
            "CREATE TABLE dr (k int, c int, v int, PRIMARY KEY (k, c))",
            "INSERT INTO dr (k, c, v) VALUES (1, 1, 10)",
            "UPDATE dr SET v = 20 WHERE k = 1 AND c = 2",
            "ALTER TABLE dr DROP v",
            "ALTER TABLE dr ADD v int",
        ],
    )
    .await;
    // Row 1 keeps its row marker, row 2 (written by UPDATE) had only the dropped cell.
    assert_eq!(count(&qp, "SELECT * FROM dr").await, 1);
    assert_eq!(
        count(&qp, "SELECT * FROM dr WHERE v = 10 ALLOW FILTERING").await,
        0
    );
    run(&qp, "INSERT INTO dr (k, c, v) VALUES (1, 2, 21)")
        .await
        .expect("a new cell");
    assert_eq!(
        count(&qp, "SELECT * FROM dr WHERE v = 21 ALLOW FILTERING").await,
        1
    );
    assert_eq!(
        refusal(&qp, "ALTER TABLE dr ADD v text").await,
        "Column with name 'v' already exists"
    );
}

/// `DROP ... USING TIMESTAMP t` hides the cells written up to `t` to the microsecond, as
/// Cassandra 5.0.4 does (until it restarts), though `system_schema` keeps milliseconds.
#[tokio::test]
async fn a_drop_time_is_kept_to_the_microsecond() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(
        dir.path(),
        &[
            "CREATE TABLE dm (k int PRIMARY KEY, v int)",
            "INSERT INTO dm (k, v) VALUES (1, 1) USING TIMESTAMP 1000300",
            "INSERT INTO dm (k, v) VALUES (2, 2) USING TIMESTAMP 1000600",
            "ALTER TABLE dm DROP v USING TIMESTAMP 1000500",
            "ALTER TABLE dm ADD v int",
        ],
    )
    .await;
    assert_eq!(
        count(&qp, "SELECT * FROM dm WHERE v = 1 ALLOW FILTERING").await,
        0
    );
    assert_eq!(
        count(&qp, "SELECT * FROM dm WHERE v = 2 ALLOW FILTERING").await,
        1
    );
}

/// The partitions storage holds of table `name` (dropped cells included).
fn stored_partitions(qp: &QueryProcessor, storage: &Storage, name: &str) -> usize {
    let table = qp.schema().schema.table("ks", name).cloned().expect(name);
    let all = (&mutation::KeyRange::all(), &mutation::ReadFilter::all());
    let scan = storage.scan(mutation::TableId(table.id), all.0, all.1, i32::MAX, 100);
    scan.expect("a scan").len()
}

/// Compaction purges what a drop hides (Cassandra's compaction skips dropped columns'
/// cells): partition 2, which held only a cell of the dropped column, leaves storage.
#[tokio::test]
async fn compaction_purges_the_cells_of_dropped_columns() {
    let dir = tempfile::tempdir().expect("a directory");
    let (qp, storage) = node(
        dir.path(),
        &[
            "CREATE TABLE dp (k int PRIMARY KEY, v int) WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'enabled': 'false'}",
            "INSERT INTO dp (k, v) VALUES (1, 10)",
            "UPDATE dp SET v = 20 WHERE k = 2",
        ],
    )
    .await;
    let id = mutation::TableId(qp.schema().schema.table("ks", "dp").expect("dp").id);
    storage.flush(id).expect("a flush");
    run(&qp, "ALTER TABLE dp DROP v").await.expect("the drop");
    assert_eq!(
        stored_partitions(&qp, &storage, "dp"),
        2,
        "hidden, not yet purged"
    );
    storage.compact(id).expect("a compaction");
    assert_eq!(stored_partitions(&qp, &storage, "dp"), 1);
    assert_eq!(count(&qp, "SELECT * FROM dp").await, 1);
}

#[tokio::test]
async fn keys_must_be_neither_empty_nor_too_long() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(
        dir.path(),
        &["CREATE TABLE ks1 (k text PRIMARY KEY, v int) WITH default_time_to_live = 100"],
    )
    .await;
    for text in [
        "INSERT INTO ks1 (k, v) VALUES ('', 1)",
        "SELECT * FROM ks1 WHERE k = ''",
        "DELETE FROM ks1 WHERE k = ''",
    ] {
        assert_eq!(refusal(&qp, text).await, "Key may not be empty");
    }
    let long = "x".repeat(65_536);
    assert_eq!(
        refusal(&qp, &format!("UPDATE ks1 SET v = 1 WHERE k = '{long}'")).await,
        "Key length of 65536 is longer than maximum of 65535"
    );
}

#[tokio::test]
async fn collections_compare_by_element_and_distinct_reads_the_whole_partition_key() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(
        dir.path(),
        &[
            "CREATE TABLE co (k int, c int, l list<int>, m map<text, int>, s int static, \
             PRIMARY KEY (k, c))",
            "INSERT INTO co (k, c, l, m) VALUES (1, 1, [1, 2], {'x': 1})",
        ],
    )
    .await;
    assert_eq!(
        refusal(&qp, "SELECT * FROM co WHERE l = [1, 2] ALLOW FILTERING").await,
        "Collection column 'l' (list<int>) cannot be restricted by a '=' relation"
    );
    assert_eq!(
        refusal(&qp, "SELECT * FROM co WHERE l CONTAINS 'x' ALLOW FILTERING").await,
        "Invalid STRING constant (x) for \"value(l)\" of type int"
    );
    assert_eq!(
        refusal(
            &qp,
            "SELECT * FROM co WHERE m CONTAINS KEY 1 ALLOW FILTERING"
        )
        .await,
        "Invalid INTEGER constant (1) for \"key(m)\" of type text"
    );
    assert_eq!(
        count(&qp, "SELECT k FROM co WHERE l CONTAINS 2 ALLOW FILTERING").await,
        1
    );
    assert_eq!(
        refusal(&qp, "SELECT DISTINCT COUNT(*) FROM co").await,
        "SELECT DISTINCT queries must request all the partition key columns (missing k)"
    );
    assert_eq!(count(&qp, "SELECT DISTINCT COUNT(k) FROM co").await, 1);
}

/// A serialized tuple of ints (`[length][value]` per field).
fn int_tuple(values: &[i32]) -> bytes::Bytes {
    let mut out = Vec::new();
    for v in values {
        out.extend_from_slice(&4i32.to_be_bytes());
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.into()
}

async fn bound_count(qp: &QueryProcessor, text: &str, values: Vec<BoundValue>) -> CqlResult<i32> {
    let options = QueryOptions {
        values: Values::Positional(values),
        ..QueryOptions::default()
    };
    match qp.query(Some("ks"), text, options).await?.result {
        QueryResult::Rows(rows) => Ok(rows.row_count),
        other => Err(CqlError::Server(format!("{other:?}"))),
    }
}

/// A bound list of `(a, b)` tuples, serialized.
fn tuple_list(tuples: &[[i32; 2]]) -> BoundValue {
    let mut list = (tuples.len() as i32).to_be_bytes().to_vec();
    for t in tuples.iter().map(|t| int_tuple(t)) {
        list.extend_from_slice(&(t.len() as i32).to_be_bytes());
        list.extend_from_slice(&t);
    }
    BoundValue::Set(list.into())
}

/// Cassandra's `in_select_cartesian_product` counts the tuples of a bound `(a, b) IN ?` as
/// those of a literal list (ClusteringColumnRestrictions.valuesAsClustering).
#[tokio::test]
async fn the_cartesian_product_guardrail_counts_a_bound_list_of_tuples() {
    let dir = tempfile::tempdir().expect("a directory");
    let table = "CREATE TABLE gm (p int, a int, b int, PRIMARY KEY (p, a, b))";
    let qp = processor(dir.path(), &[table]).await;
    qp.set_limits(query::Limits {
        guardrails: config::Guardrails {
            in_select_cartesian_product: config::Threshold {
                warn: Some(4),
                fail: Some(9),
            },
            ..Default::default()
        },
        ..Default::default()
    });
    let tuples: Vec<[i32; 2]> = (0..10).map(|i| [i, i]).collect();
    let select = "SELECT * FROM gm WHERE p = 1 AND (a, b) IN ?";
    assert_eq!(
        bound_count(&qp, select, vec![tuple_list(&tuples)]).await,
        Err(CqlError::invalid("Guardrail in_select_cartesian_product violated: Aborting query because the cartesian product of the IN restrictions on clustering key produces 10 values, this exceeds fail threshold of 9."))
    );
    assert_eq!(
        bound_count(&qp, select, vec![tuple_list(&tuples[..9])]).await,
        Ok(0)
    );
}

/// Cassandra 5.0.4's QueryProcessor refuses a QUERY with the wrong count of values in its
/// own words (an EXECUTE's message counts markers).
#[tokio::test]
async fn a_query_with_the_wrong_count_of_values_is_refused_in_cassandras_words() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(dir.path(), &["CREATE TABLE bv (k int PRIMARY KEY)"]).await;
    let one = BoundValue::Set(1i32.to_be_bytes().to_vec().into());
    let select = "SELECT * FROM bv WHERE k = ?";
    assert_eq!(
        bound_count(&qp, select, vec![one.clone(), one.clone()]).await,
        Err(CqlError::invalid("Invalid amount of bind variables"))
    );
    assert_eq!(bound_count(&qp, select, vec![one]).await, Ok(0));
}

#[tokio::test]
async fn a_multi_column_relation_takes_a_bound_tuple_or_list_of_tuples() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut statements =
        vec!["CREATE TABLE mc (p int, a int, b int, PRIMARY KEY (p, a, b))".to_string()];
    for a in 1..=3 {
        for b in 1..=2 {
            statements.push(format!("INSERT INTO mc (p, a, b) VALUES (1, {a}, {b})"));
        }
    }
    let statements: Vec<&str> = statements.iter().map(String::as_str).collect();
    let qp = processor(dir.path(), &statements).await;
    let tuple = |values: &[i32]| BoundValue::Set(int_tuple(values));
    let slice = "SELECT * FROM mc WHERE p = 1 AND (a, b) >= ?";
    assert_eq!(bound_count(&qp, slice, vec![tuple(&[2, 2])]).await, Ok(3));
    let listed = "SELECT * FROM mc WHERE p = 1 AND (a, b) IN (?, ?)";
    assert_eq!(
        bound_count(&qp, listed, vec![tuple(&[3, 1]), tuple(&[1, 2])]).await,
        Ok(2)
    );
    let whole = "SELECT * FROM mc WHERE p = 1 AND (a, b) IN ?";
    assert_eq!(
        bound_count(&qp, whole, vec![tuple_list(&[[2, 1], [9, 9]])]).await,
        Ok(1)
    );
    assert_eq!(
        bound_count(&qp, whole, vec![BoundValue::Null]).await,
        Err(CqlError::invalid("Invalid null value for IN restriction"))
    );
    let parts = "SELECT * FROM mc WHERE p = 1 AND (a, b) > (?, ?)";
    let one = BoundValue::Set(1i32.to_be_bytes().to_vec().into());
    assert_eq!(
        bound_count(&qp, parts, vec![one.clone(), BoundValue::Null]).await,
        Err(CqlError::invalid(
            "Invalid null value in condition for column b"
        ))
    );
    assert_eq!(
        bound_count(&qp, parts, vec![one, BoundValue::Unset]).await,
        Err(CqlError::invalid(
            "Invalid unset value for tuple field number 1"
        ))
    );
}

#[tokio::test]
async fn a_multi_column_equality_names_rows_and_filters_as_single_columns_do() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(
        dir.path(),
        &[
            "CREATE TABLE mc (p int, a int, b int, c int, v int, PRIMARY KEY (p, a, b, c))",
            "INSERT INTO mc (p, a, b, c, v) VALUES (1, 1, 1, 1, 0)",
            "INSERT INTO mc (p, a, b, c, v) VALUES (1, 2, 1, 1, 0)",
            "INSERT INTO mc (p, a, b, c, v) VALUES (1, 2, 2, 2, 0)",
        ],
    )
    .await;
    run(
        &qp,
        "UPDATE mc SET v = 7 WHERE p = 1 AND (a, b, c) = (2, 2, 2)",
    )
    .await
    .expect("an update of one row");
    assert_eq!(
        count(
            &qp,
            "SELECT * FROM mc WHERE p = 1 AND v = 7 ALLOW FILTERING"
        )
        .await,
        1
    );
    let filtered = "SELECT * FROM mc WHERE p = 1 AND (b, c) = (1, 1) ALLOW FILTERING";
    assert_eq!(count(&qp, filtered).await, 2);
    let after_slice = "SELECT * FROM mc WHERE p = 1 AND (a, b) > (1, 1) AND c = 1 ALLOW FILTERING";
    assert_eq!(count(&qp, after_slice).await, 1);
    assert_eq!(
        refusal(&qp, "UPDATE mc SET v = 0 WHERE p = 1 AND (a, b) = (2, 2)").await,
        "Some clustering keys are missing: c"
    );
    assert_eq!(
        refusal(
            &qp,
            "SELECT * FROM mc WHERE p = 1 AND (a, b) = (1, 1) AND (a, b) > (0, 0)"
        )
        .await,
        "a ,b cannot be restricted by more than one relation if it includes an Equal"
    );
}

#[tokio::test]
async fn map_entries_filter_rows() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(
        dir.path(),
        &[
            "CREATE TABLE me (k int PRIMARY KEY, m map<text, int>, fm frozen<map<int, text>>)",
            "INSERT INTO me (k, m) VALUES (1, {'x': 1, 'y': 2})",
            "INSERT INTO me (k, m) VALUES (2, {'x': 3})",
        ],
    )
    .await;
    assert_eq!(
        count(&qp, "SELECT * FROM me WHERE m['x'] = 1 ALLOW FILTERING").await,
        1
    );
    let both = "SELECT * FROM me WHERE m['x'] = 1 AND m['y'] = 2 ALLOW FILTERING";
    assert_eq!(count(&qp, both).await, 1);
    assert_eq!(
        count(&qp, "SELECT * FROM me WHERE m['z'] = 1 ALLOW FILTERING").await,
        0
    );
    assert!(refusal(&qp, "SELECT * FROM me WHERE m['x'] = 1")
        .await
        .contains("ALLOW FILTERING"));
    assert_eq!(
        refusal(&qp, "SELECT * FROM me WHERE fm[1] = 'a' ALLOW FILTERING").await,
        "Map-entry equality predicates on frozen map column fm are not supported"
    );
}

/// Cassandra 5.0.4 prepares every relation's value, in order, before it checks what the
/// relations select: a bad value is reported before the missing ALLOW FILTERING, and an UPDATE
/// or DELETE filtering on regular columns names them all (sorted, a trailing space).
#[tokio::test]
async fn relation_values_are_checked_before_filtering() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor(
        dir.path(),
        &["CREATE TABLE f (k int, c int, v bigint, w int, PRIMARY KEY (k, c))"],
    )
    .await;
    for (text, message) in [
        (
            "SELECT k FROM f WHERE k = 1 AND v = 'a'",
            "Invalid STRING constant (a) for \"v\" of type bigint",
        ),
        (
            "SELECT k FROM f WHERE v = 'a' AND k = 'b'",
            "Invalid STRING constant (a) for \"v\" of type bigint",
        ),
        (
            "SELECT k FROM f WHERE v = token(1, 2)",
            "Invalid number of arguments in call to function system.token: 1 required but 2 provided",
        ),
        (
            "UPDATE f SET v = 1 WHERE k = 1 AND c = 1 AND w = 2 AND v = 2",
            "Non PRIMARY KEY columns found in where clause: v, w ",
        ),
    ] {
        assert_eq!(refusal(&qp, text).await, message, "{text}");
    }
}
