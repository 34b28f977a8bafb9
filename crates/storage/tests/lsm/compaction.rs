//! Compaction through `Storage` under every strategy: fewer SSTables, the same data, tombstones
//! purged after gc_grace, the upsert/delete churn of `002_6aa10c98166c222e.txt`, throttling and
//! progress.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::common::*;
use storage::{Storage, StorageConfig, TableParams};

const STRATEGIES: [&str; 4] = [
    "SizeTieredCompactionStrategy",
    "LeveledCompactionStrategy",
    "TimeWindowCompactionStrategy",
    "UnifiedCompactionStrategy",
];

fn params(class: &str, gc_grace_seconds: i32) -> TableParams {
    TableParams {
        gc_grace_seconds,
        ..TableParams::new("ks", "t").with_compaction([("class", class)])
    }
}

/// Writes `rounds` flushed SSTables of overlapping upserts, mirrored in `model`.
async fn write_rounds(
    storage: &Storage,
    model: &mut BTreeMap<(u64, u8), String>,
    rounds: std::ops::Range<i64>,
) {
    for round in rounds {
        for n in 0..150u64 {
            let (c, value) = ((n % 4) as u8, format!("r{round}-{n}"));
            storage
                .apply(upsert(n * (round as u64 + 1), c, round + 1, &value))
                .await
                .expect("apply");
            model.insert((n * (round as u64 + 1), c), value);
        }
        storage.flush(TABLE).expect("flush");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn major_compaction_under_each_strategy_keeps_the_data() {
    for class in STRATEGIES {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = config(dir.path());
        let storage = open_with(&config, params(class, 864_000));
        storage.disable_autocompaction(TABLE).expect("disable");
        let mut model = BTreeMap::new();
        write_rounds(&storage, &mut model, 0..5).await;
        assert_eq!(storage.table_stats(TABLE).expect("stats").sstables, 5);
        assert!(storage.compact(TABLE).expect("compact") > 0, "{class}");
        let after = storage.table_stats(TABLE).expect("stats");
        assert!(after.sstables < 5, "{class}: {after:?}");
        assert_eq!(contents(&storage), model, "{class}");
        drop(storage);
        let storage = open_with(&config, params(class, 864_000));
        assert_eq!(contents(&storage), model, "{class} after restart");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_size_tiered_compaction_merges_four_flushes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = open(&config(dir.path()));
    let mut model = BTreeMap::new();
    write_rounds(&storage, &mut model, 0..4).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    // The history records a compaction just after its output replaces the inputs.
    let done = || {
        storage.table_stats(TABLE).expect("stats").sstables == 1
            && !storage.compaction_history().is_empty()
    };
    while !done() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(storage.table_stats(TABLE).expect("stats").sstables, 1);
    assert_eq!(contents(&storage), model);
    let history = storage.compaction_history();
    assert_eq!(history.len(), 1);
    assert_eq!((history[0].sstables_in, history[0].sstables_out), (4, 1));
}

/// The `002` pattern: the same keys upserted and deleted over and over.
async fn churn(storage: &Storage, rounds: i64) {
    let long_ago = now() - 3600;
    for round in 0..rounds {
        let ts = round * 10;
        for n in 0..200u64 {
            storage
                .apply(upsert(n, 0, ts + 1, "a product row with some payload"))
                .await
                .expect("upsert");
        }
        for n in 0..200u64 {
            storage
                .apply(delete_row(n, 0, ts + 2, long_ago))
                .await
                .expect("delete");
        }
        storage.flush(TABLE).expect("flush");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tombstone_churn_shrinks_after_compaction_under_each_strategy() {
    for class in STRATEGIES {
        let dir = tempfile::tempdir().expect("tempdir");
        // Unrepaired data keeps its tombstones by default; this is about the purge itself.
        let params = params(class, 60).with_compaction([
            ("class", class),
            ("only_purge_repaired_tombstones", "false"),
        ]);
        let storage = open_with(&config(dir.path()), params);
        storage.disable_autocompaction(TABLE).expect("disable");
        churn(&storage, 4).await;
        let before = storage.table_stats(TABLE).expect("stats");
        assert!(before.tombstones >= 800, "{class}: {before:?}");
        storage.compact(TABLE).expect("compact");
        let after = storage.table_stats(TABLE).expect("stats");
        println!("{class}: before {before:?}, after {after:?}");
        assert!(
            after.disk_bytes < before.disk_bytes / 4,
            "{class}: {before:?} -> {after:?}"
        );
        assert_eq!(after.tombstones, 0, "{class}: {after:?}");
        assert!(contents(&storage).is_empty(), "{class}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn young_tombstones_survive_compaction_and_keep_shadowing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = open_with(&config(dir.path()), params(STRATEGIES[0], 864_000));
    storage.disable_autocompaction(TABLE).expect("disable");
    churn(&storage, 2).await;
    storage.compact(TABLE).expect("compact");
    let after = storage.table_stats(TABLE).expect("stats");
    assert_eq!(after.tombstones, 200, "within gc_grace: {after:?}");
    assert!(contents(&storage).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throttling_slows_compaction_and_progress_is_visible() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = StorageConfig {
        compaction_throughput: 0,
        ..config(dir.path())
    };
    let storage = std::sync::Arc::new(open(&config));
    storage.disable_autocompaction(TABLE).expect("disable");
    let mut model = BTreeMap::new();
    write_rounds(&storage, &mut model, 0..4).await;
    let started = Instant::now();
    storage.compact(TABLE).expect("compact");
    let fast = started.elapsed();
    let bytes = storage.compaction_history()[0].bytes_in;

    write_rounds(&storage, &mut model, 4..7).await;
    let total: u64 = storage.table_stats(TABLE).expect("stats").disk_bytes;
    // Uncompressed input is a few times the disk size; aim for about a second or more.
    storage.set_compaction_throughput(total.max(bytes));
    let compactor = {
        let storage = storage.clone();
        tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            storage.compact(TABLE).expect("compact");
            started.elapsed()
        })
    };
    let mut seen = Vec::new();
    while !compactor.is_finished() {
        seen.extend(storage.compactions());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let slow = compactor.await.expect("join");
    println!(
        "unthrottled {fast:?}, throttled {slow:?}, {} progress samples",
        seen.len()
    );
    assert!(slow >= Duration::from_millis(700), "{slow:?}");
    assert!(slow > fast * 2, "{slow:?} vs {fast:?}");
    assert!(
        seen.iter()
            .any(|p| p.bytes_done > 0 && p.bytes_done < p.bytes_total),
        "{seen:?}"
    );
    assert_eq!(contents(&storage), model);
}
