//! `nodetool cleanup` through `Storage`: each SSTable keeps only the partitions whose token the
//! node owns, memtables are flushed first so their data is cleaned too, an SSTable left with
//! nothing is removed, and one wholly inside an owned range is not rewritten.

use super::common::*;
use mutation::TokenRange;
use storage::{Storage, TaskKind};

const PARTITIONS: u64 = 400;

/// Tokens of the test keys spread over the whole ring: this keeps those above zero.
const UPPER_HALF: [TokenRange; 1] = [(0, i64::MIN)];

async fn write(storage: &Storage, range: std::ops::Range<u64>) {
    for n in range {
        storage
            .apply(upsert(n, 0, 1, &format!("v{n}")))
            .await
            .expect("apply");
    }
}

fn owned_upper(n: u64) -> bool {
    key(n).token > 0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleanup_keeps_only_owned_partitions_of_sstables_and_memtables() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let storage = open_quiet(&config);
    write(&storage, 0..PARTITIONS / 2).await;
    storage.flush(TABLE).expect("flush");
    // the second half stays in the memtable: cleanup flushes it first
    write(&storage, PARTITIONS / 2..PARTITIONS).await;
    let report = storage.cleanup(TABLE, &UPPER_HALF).expect("cleanup");
    let expected: Vec<u64> = (0..PARTITIONS).filter(|n| owned_upper(*n)).collect();
    assert_eq!(report.sstables, 2, "{report:?}");
    assert_eq!(report.partitions_kept, expected.len() as u64);
    assert_eq!(
        report.partitions_dropped,
        PARTITIONS - expected.len() as u64
    );
    let left: Vec<u64> = contents(&storage).keys().map(|(n, _)| *n).collect();
    let mut sorted = left.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, expected);
    for n in expected.iter().take(20) {
        assert_eq!(value(&storage, *n, 0), Some(format!("v{n}")));
    }
    let history = storage.compaction_history();
    assert!(history.iter().any(|r| r.kind == TaskKind::Cleanup));
    // a second cleanup finds nothing to do: every SSTable lies inside the owned range
    let again = storage.cleanup(TABLE, &UPPER_HALF).expect("second cleanup");
    assert_eq!((again.sstables, again.partitions_dropped), (0, 0));
    // and the data survives a restart
    storage.shutdown().await.expect("shutdown");
    drop(storage);
    let reopened = open_quiet(&config);
    assert_eq!(contents(&reopened).len(), sorted.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sstable_with_nothing_owned_is_removed_and_one_fully_owned_is_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let storage = open_quiet(&config);
    write(&storage, 0..PARTITIONS).await;
    storage.flush(TABLE).expect("flush");
    let whole_ring: [TokenRange; 1] = [(i64::MIN, i64::MIN)];
    let kept = storage.cleanup(TABLE, &whole_ring).expect("cleanup");
    assert_eq!((kept.sstables, kept.partitions_dropped), (0, 0));
    assert_eq!(contents(&storage).len(), PARTITIONS as usize);
    let none = storage.cleanup(TABLE, &[]).expect("cleanup of everything");
    assert_eq!(none.sstables, 1);
    assert_eq!(none.partitions_dropped, PARTITIONS);
    assert!(contents(&storage).is_empty());
    let data_files = table_files(&config)
        .iter()
        .filter(|p| p.to_string_lossy().ends_with("-Data.db"))
        .count();
    assert_eq!(data_files, 0);
}
