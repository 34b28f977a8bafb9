//! A node that cannot apply the metadata log's schema (a failed table directory) refuses
//! schema changes until it has caught up by itself.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use system::testing::{processor_with_ks, run_in_ks as run};
use types::CqlError;

/// The only table directory of keyspace `ks` under `dir`.
fn table_dir(dir: &Path) -> PathBuf {
    let tables: Vec<PathBuf> = std::fs::read_dir(dir.join("data").join("ks"))
        .expect("the keyspace directory")
        .map(|e| e.expect("an entry").path())
        .collect();
    assert_eq!(tables.len(), 1, "{tables:?}");
    tables[0].clone()
}

/// A DROP this node cannot apply (its table directory replaced by a file, as a failed disk
/// would leave it) is answered at once with the reason; the node refuses schema changes
/// while it is behind the log, and catches up by itself once the directory is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_behind_the_log_refuses_schema_changes_and_catches_up() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor_with_ks(dir.path())
        .await
        .expect("the processor and its keyspace");
    run(&qp, "CREATE TABLE t (k int PRIMARY KEY, v int)")
        .await
        .expect("a table");
    run(&qp, "INSERT INTO t (k, v) VALUES (1, 1)")
        .await
        .expect("a row");
    let table = table_dir(dir.path());
    let moved = table.with_extension("away");
    std::fs::rename(&table, &moved).expect("move the table directory away");
    std::fs::write(&table, b"not a directory").expect("a file in its place");

    let started = Instant::now();
    let dropped = run(&qp, "DROP TABLE t").await;
    assert!(started.elapsed() < APPLY_ANSWER, "answered without waiting");
    let Err(CqlError::Server(message)) = dropped else {
        panic!("{dropped:?}");
    };
    assert!(message.contains("cannot apply the schema"), "{message}");
    assert!(qp.schema_lag().is_some());
    let refused = run(&qp, "CREATE TABLE u (k int PRIMARY KEY)").await;
    assert!(
        matches!(&refused, Err(CqlError::Server(m)) if m.contains("refuses schema changes")),
        "{refused:?}"
    );

    std::fs::remove_file(&table).expect("remove the file");
    std::fs::rename(&moved, &table).expect("the directory is back");
    let deadline = Instant::now() + Duration::from_secs(10);
    while qp.schema_lag().is_some() {
        assert!(Instant::now() < deadline, "caught up");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(qp.schema().schema.table("ks", "t").is_none(), "dropped");
    run(&qp, "CREATE TABLE u (k int PRIMARY KEY)")
        .await
        .expect("schema changes are accepted again");
}

/// Well under the 10 s (`APPLY_TIMEOUT` of `query::schema_follow`) a statement waits for its change to be applied.
const APPLY_ANSWER: Duration = Duration::from_secs(5);
