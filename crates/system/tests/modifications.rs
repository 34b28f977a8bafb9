//! Writes the statements fuzz target found mishandled, over a node's real storage.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use std::sync::Arc;

use types::request::QueryOptions;
use types::{CqlError, CqlResult};

use query::QueryProcessor;
use system::testing::local_processor;

async fn run(qp: &QueryProcessor, text: &str, options: QueryOptions) -> CqlResult<()> {
    qp.query(Some("ks"), text, options).await.map(|_| ())
}

async fn with_tables(dir: &std::path::Path) -> Arc<QueryProcessor> {
    let qp = local_processor(dir).await.expect("the processor starts");
    for ddl in [
        "CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
        "CREATE TABLE ks.t (k int PRIMARY KEY, v int, l list<int>)",
        "CREATE TABLE ks.c (k int PRIMARY KEY, n counter)",
    ] {
        run(&qp, ddl, QueryOptions::default()).await.expect(ddl);
    }
    qp
}

/// Found by the statements fuzz target: a list overwritten at i64::MIN made its tombstone at
/// `timestamp - 1` and overflowed (a panic in debug builds, a tombstone in the far future
/// otherwise). Cassandra's UpdateParameters refuses the timestamp for every write.
#[tokio::test]
async fn a_write_at_the_lowest_timestamp_is_refused_as_cassandra_refuses_it() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = with_tables(dir.path()).await;
    let min = i64::MIN;
    let refused = [
        format!("INSERT INTO t (k, l) VALUES (1, [1]) USING TIMESTAMP {min}"),
        format!("UPDATE t USING TIMESTAMP {min} SET v = 1 WHERE k = 1"),
        format!("DELETE FROM t USING TIMESTAMP {min} WHERE k = 1"),
        format!(
            "BEGIN BATCH USING TIMESTAMP {min} INSERT INTO t (k, l) VALUES (1, [1]); APPLY BATCH"
        ),
    ];
    let expected = "Out of bound timestamp, must be in [-9223372036854775807, 9223372036854775807]";
    for text in &refused {
        let error = run(&qp, text, QueryOptions::default()).await;
        assert_eq!(error, Err(CqlError::Invalid(expected.into())), "{text}");
    }
    let client_min = QueryOptions {
        timestamp: Some(min),
        ..QueryOptions::default()
    };
    for text in [
        "INSERT INTO t (k, l) VALUES (1, [1])",
        "UPDATE c SET n = n + 1 WHERE k = 1",
    ] {
        let error = run(&qp, text, client_min.clone()).await;
        assert_eq!(error, Err(CqlError::Invalid(expected.into())), "{text}");
    }
    let lowest = format!(
        "INSERT INTO t (k, l) VALUES (1, [1]) USING TIMESTAMP {}",
        min + 1
    );
    run(&qp, &lowest, QueryOptions::default())
        .await
        .expect("the lowest allowed timestamp is written");
}
