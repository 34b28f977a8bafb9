//! Flushes, commit-log recycling and restarts.

use std::sync::Arc;

use super::common::*;
use storage::{Storage, StorageConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flushed_data_reads_the_same_and_survives_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let storage = open(&config);
    for n in 0..200 {
        storage
            .apply(upsert(n, (n % 3) as u8, 1, &format!("v{n}")))
            .await
            .expect("apply");
    }
    storage
        .apply(delete_row(7, 1, 2, 100))
        .await
        .expect("delete");
    let before = contents(&storage);
    let report = storage.flush(TABLE).expect("flush");
    assert_eq!((report.sstables, report.partitions), (1, 200));
    assert_eq!(contents(&storage), before);
    assert_eq!(value(&storage, 5, 2), Some("v5".into()));
    assert_eq!(storage.table_stats(TABLE).expect("stats").memtable_bytes, 0);
    for n in 200..210 {
        storage.apply(upsert(n, 0, 1, "tail")).await.expect("apply");
    }
    let expected = contents(&storage);
    drop(storage);

    let storage = Storage::open(config.clone()).expect("reopen");
    storage
        .create_table(TABLE, storage::TableParams::new("ks", "t"))
        .expect("create");
    let replayed = storage.replay().expect("replay");
    assert_eq!(
        replayed.mutations_applied, 10,
        "only the tail: {replayed:?}"
    );
    assert_eq!(contents(&storage), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segments_are_deleted_once_flushed_and_shutdown_leaves_nothing_to_replay() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let storage = open(&config);
    for n in 0..2000 {
        storage
            .apply(upsert(n, 0, 1, "some value to fill segments"))
            .await
            .expect("apply");
    }
    let before = segments(&config).len();
    assert!(before > 3, "{before} segments");
    storage.flush(TABLE).expect("flush");
    // The deletion is done by the commit-log sync thread; give it a moment.
    let mut after = before;
    for _ in 0..100 {
        after = segments(&config).len();
        if after == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        after, 2,
        "only the active segment remains, and the next one, prepared ahead"
    );
    storage
        .apply(upsert(5000, 0, 1, "after"))
        .await
        .expect("apply");
    storage.shutdown().await.expect("shutdown");

    let storage = Storage::open(config.clone()).expect("reopen");
    storage
        .create_table(TABLE, storage::TableParams::new("ks", "t"))
        .expect("create");
    let replayed = storage.replay().expect("replay");
    assert_eq!(replayed.mutations_applied, 0, "{replayed:?}");
    assert_eq!(contents(&storage).len(), 2001);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writes_during_flushes_are_not_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let storage = Arc::new(open(&config));
    let writers: Vec<_> = (0..4u64)
        .map(|w| {
            let storage = storage.clone();
            tokio::spawn(async move {
                for n in 0..500 {
                    let id = w * 10_000 + n;
                    storage.apply(upsert(id, 0, 1, "x")).await.expect("apply");
                }
            })
        })
        .collect();
    let flusher = {
        let storage = storage.clone();
        tokio::task::spawn_blocking(move || {
            for _ in 0..20 {
                storage.flush(TABLE).expect("flush");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        })
    };
    for writer in writers {
        writer.await.expect("writer");
    }
    flusher.await.expect("flusher");
    assert_eq!(contents(&storage).len(), 2000);
    let storage = Arc::into_inner(storage).expect("sole owner");
    drop(storage);
    let storage = open(&config);
    assert_eq!(
        contents(&storage).len(),
        2000,
        "after a crash-style restart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memtable_pressure_flushes_in_the_background() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = StorageConfig {
        memtable_space: 256 * 1024,
        ..config(dir.path())
    };
    let storage = open(&config);
    for n in 0..3000 {
        storage
            .apply(upsert(n, 0, 1, "pressure"))
            .await
            .expect("apply");
    }
    let mut stats = storage.table_stats(TABLE).expect("stats");
    for _ in 0..100 {
        if stats.sstables > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        stats = storage.table_stats(TABLE).expect("stats");
    }
    assert!(stats.sstables > 0, "{stats:?}");
    assert!(stats.memtable_bytes < 256 * 1024, "{stats:?}");
    assert_eq!(contents(&storage).len(), 3000);
}

/// `in_memory`: past the memtable pool nothing flushes and no writer waits, and a crash-style
/// restart replays every write from the commit log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_memory_storage_never_flushes_by_itself_and_replays_after_a_crash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = StorageConfig {
        memtable_space: 64 * 1024,
        in_memory: true,
        ..config(dir.path())
    };
    let storage = open(&config);
    for n in 0..2000 {
        storage
            .apply(upsert(n, 0, 1, "memory"))
            .await
            .expect("apply");
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let stats = storage.table_stats(TABLE).expect("stats");
    assert_eq!(stats.sstables, 0, "{stats:?}");
    assert!(stats.memtable_bytes > 64 * 1024, "{stats:?}");
    drop(storage);
    let storage = open(&config);
    assert_eq!(contents(&storage).len(), 2000);
    assert_eq!(storage.table_stats(TABLE).expect("stats").sstables, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncate_deletes_sstables_and_stays_truncated_after_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let storage = open(&config);
    for n in 0..50 {
        storage.apply(upsert(n, 0, 1, "old")).await.expect("apply");
    }
    storage.flush(TABLE).expect("flush");
    storage
        .apply(upsert(99, 0, 1, "memtable"))
        .await
        .expect("apply");
    storage.truncate(TABLE).await.expect("truncate");
    assert!(contents(&storage).is_empty());
    assert_eq!(storage.table_stats(TABLE).expect("stats").sstables, 0);
    storage.apply(upsert(1, 0, 2, "new")).await.expect("apply");
    drop(storage);
    let storage = open(&config);
    assert_eq!(
        contents(&storage).into_values().collect::<Vec<_>>(),
        vec!["new"]
    );
}
