//! Table options the node's storage cannot use, refused before a schema change is committed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use types::CqlError;

use system::testing::{processor_with_ks, run_in_ks as run};

/// Found by the statements fuzz target: the schema accepted the sub-option and storage
/// refused it only when applying the change, after it was committed to the metadata log (a
/// Server error 10 s later, and a committed schema no node could apply). Cassandra's
/// compaction parameters refuse it with a ConfigurationException, and nothing changes.
#[tokio::test]
async fn table_options_storage_cannot_use_are_a_configuration_error() {
    let dir = tempfile::tempdir().expect("a directory");
    let qp = processor_with_ks(dir.path())
        .await
        .expect("the processor and its keyspace");
    let bad = "{'class': 'SizeTieredCompactionStrategy', 'enabled': 'falze'}";
    let expected = Err(CqlError::Config(
        "enabled should either be 'true' or 'false', not falze".into(),
    ));

    let create = format!("CREATE TABLE t (k int PRIMARY KEY) WITH compaction = {bad}");
    assert_eq!(run(&qp, &create).await, expected);
    assert!(qp.schema().schema.table("ks", "t").is_none(), "not created");

    run(&qp, "CREATE TABLE t (k int PRIMARY KEY)")
        .await
        .expect("a table");
    let alter = format!("ALTER TABLE t WITH compaction = {bad}");
    assert_eq!(run(&qp, &alter).await, expected);
    let table = qp
        .schema()
        .schema
        .table("ks", "t")
        .cloned()
        .expect("the table");
    assert_eq!(table.options.compaction.get("enabled"), None, "not altered");
    run(&qp, "INSERT INTO t (k) VALUES (1)")
        .await
        .expect("the table still works");
}
