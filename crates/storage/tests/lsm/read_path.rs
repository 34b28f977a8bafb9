//! The read path through `Storage`: SSTables touched and tombstones met per read (returned with
//! the read and kept in the table's metrics), the timestamp-ordered early exit of point reads,
//! the key and chunk caches, and the tombstone churn of `002_6aa10c98166c222e.txt` seen from reads.

use bytes::Bytes;

use super::common::*;
use mutation::{LivenessInfo, Mutation, ReadFilter, ReadStats};
use storage::{Storage, StorageConfig, TableParams};

const STRATEGIES: [&str; 4] = [
    "SizeTieredCompactionStrategy",
    "LeveledCompactionStrategy",
    "TimeWindowCompactionStrategy",
    "UnifiedCompactionStrategy",
];

/// An INSERT of row `c` of partition `n`: row marker and `v`, both at `ts`.
fn insert(n: u64, c: u8, ts: i64, value: &str) -> Mutation {
    let mut mutation = upsert(n, c, ts, value);
    mutation.update.rows[0].liveness = Some(LivenessInfo::new(ts));
    mutation
}

/// A point read of row `c` needing only column `v` (what `SELECT v ... WHERE pk = ? AND c = ?`
/// asks for).
fn named_row(c: u8) -> ReadFilter {
    ReadFilter {
        include_static: false,
        columns: Some(vec![Bytes::from_static(b"v")].into()),
        ..ReadFilter::row(Bytes::from(vec![c]))
    }
}

fn read(storage: &Storage, n: u64, filter: &ReadFilter) -> (Option<String>, ReadStats) {
    let (found, stats) = storage
        .read_with_stats(TABLE, &key(n), filter, now())
        .expect("read");
    let value = found
        .and_then(|p| p.rows.into_iter().next())
        .and_then(|r| match r.columns.into_iter().next()?.value {
            mutation::ColumnValue::Simple(cell) => cell.value,
            mutation::ColumnValue::Complex(_) => None,
        })
        .map(|v| String::from_utf8_lossy(&v).into_owned());
    (value, stats)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn point_reads_of_named_rows_skip_sstables_older_than_what_they_found() {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = open_quiet(&config(dir.path()));
    for ts in 1..=3 {
        let value = format!("v{ts}");
        storage
            .apply(insert(1, 0, ts, &value))
            .await
            .expect("apply");
        storage
            .apply(upsert(2, 0, ts, &value))
            .await
            .expect("apply");
        storage.flush(TABLE).expect("flush");
    }
    let (value, stats) = read(&storage, 1, &named_row(0));
    assert_eq!(value.as_deref(), Some("v3"));
    assert_eq!(stats.sstables, 1, "the newest SSTable answers: {stats:?}");
    let (value, stats) = read(&storage, 1, &ReadFilter::row(Bytes::from(vec![0])));
    assert_eq!(value.as_deref(), Some("v3"));
    assert_eq!(
        stats.sstables, 3,
        "columns unknown: every SSTable: {stats:?}"
    );
    let (value, stats) = read(&storage, 2, &named_row(0));
    assert_eq!(value.as_deref(), Some("v3"));
    assert_eq!(stats.sstables, 3, "no row marker, so older ones may matter");
    // A newer write in the memtable answers without touching any SSTable.
    storage.apply(insert(1, 0, 10, "new")).await.expect("apply");
    let (value, stats) = read(&storage, 1, &named_row(0));
    assert_eq!((value.as_deref(), stats.sstables), (Some("new"), 0));
}

/// Writes rows 0..50 twice, flushing after each round: two SSTables holding every key.
async fn two_flushed_rounds(storage: &Storage) {
    for round in 0..2 {
        for n in 0..50 {
            storage
                .apply(upsert(n, 0, round, "x"))
                .await
                .expect("apply");
        }
        storage.flush(TABLE).expect("flush");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_reads_hit_the_key_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = open_quiet(&config(dir.path()));
    two_flushed_rounds(&storage).await;
    let cold = storage.key_cache_stats();
    assert_eq!(value(&storage, 7, 0).as_deref(), Some("x"));
    let first = storage.key_cache_stats();
    assert_eq!(first.misses - cold.misses, 2, "{first:?}");
    assert_eq!(value(&storage, 7, 0).as_deref(), Some("x"));
    let second = storage.key_cache_stats();
    assert_eq!((second.hits - first.hits, second.misses), (2, first.misses));
    assert_eq!(second.entries, 2);
    assert!(second.size_bytes > 0 && second.size_bytes <= second.capacity_bytes);
}

/// A node on `config` with one flushed row, read twice.
async fn flushed_and_read_twice(config: &StorageConfig) -> Storage {
    let storage = open_quiet(config);
    storage.apply(upsert(1, 0, 1, "x")).await.expect("apply");
    storage.flush(TABLE).expect("flush");
    assert_eq!(value(&storage, 1, 0).as_deref(), Some("x"));
    assert_eq!(value(&storage, 1, 0).as_deref(), Some("x"));
    storage
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disabled_key_cache_reads_the_index_every_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = StorageConfig {
        key_cache_size: 0,
        ..config(dir.path())
    };
    let storage = flushed_and_read_twice(&config).await;
    let stats = storage.key_cache_stats();
    assert_eq!((stats.hits, stats.misses, stats.entries), (0, 0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_point_reads_are_served_from_the_chunk_cache_and_compaction_does_not_fill_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = open_quiet(&config(dir.path()));
    two_flushed_rounds(&storage).await;
    let cold = storage.chunk_cache_stats();
    assert!(cold.capacity_bytes > 0, "on by default: {cold:?}");
    assert_eq!(value(&storage, 7, 0).as_deref(), Some("x"));
    let first = storage.chunk_cache_stats();
    assert_eq!(
        first.misses - cold.misses,
        4,
        "one Index block and one Data chunk per SSTable read: {first:?}"
    );
    assert_eq!(first.entries, 4);
    assert_eq!(value(&storage, 7, 0).as_deref(), Some("x"));
    let second = storage.chunk_cache_stats();
    assert_eq!(
        (second.hits - first.hits, second.misses),
        (2, first.misses),
        "no chunk read from disk, the Index entries from the key cache: {second:?}"
    );
    storage.compact(TABLE).expect("compact");
    let compacted = storage.chunk_cache_stats();
    assert_eq!(
        (compacted.entries, compacted.misses),
        (second.entries, second.misses),
        "compaction reads around the cache: {compacted:?}"
    );
    assert_eq!(value(&storage, 7, 0).as_deref(), Some("x"));
    assert_eq!(
        storage.chunk_cache_stats().entries,
        6,
        "the new SSTable's Index block and Data chunk"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_file_cache_size_disables_the_chunk_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = StorageConfig {
        file_cache_size: 0,
        ..config(dir.path())
    };
    let storage = flushed_and_read_twice(&config).await;
    let stats = storage.chunk_cache_stats();
    assert_eq!((stats.hits, stats.misses, stats.entries), (0, 0, 0));
}

/// The `002` pattern on one partition: its rows upserted and deleted round after round with
/// `gc_grace_seconds` of 1 and the deletions already older than that, a tiny memtable flushing
/// in the background; the last round upserts half of the rows again.
async fn churn(storage: &Storage) {
    let long_ago = now() - 10;
    for round in 0..6i64 {
        let ts = round * 10;
        for c in 0..=255u8 {
            let payload = format!("{c:0>200}");
            storage
                .apply(upsert(1, c, ts + 1, &payload))
                .await
                .expect("upsert");
        }
        for c in 0..=255u8 {
            let delete = delete_row(1, c, ts + 2, long_ago);
            storage.apply(delete).await.expect("delete");
        }
    }
    for c in 0..128u8 {
        storage
            .apply(upsert(1, c, 1000, "back"))
            .await
            .expect("upsert");
    }
    storage.flush(TABLE).expect("flush");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tombstone_churn_reads_fewer_sstables_and_tombstones_after_compaction() {
    for class in STRATEGIES {
        let dir = tempfile::tempdir().expect("tempdir");
        // Small enough that the churn flushes several times: a memtable holds each row once,
        // overwritten in place, so its 256 rows of 200 bytes take about 90 KiB.
        let config = StorageConfig {
            memtable_space: 64 * 1024,
            ..config(dir.path())
        };
        let params = TableParams {
            gc_grace_seconds: 1,
            ..TableParams::new("ks", "t").with_compaction([
                ("class", class),
                ("enabled", "false"),
                ("only_purge_repaired_tombstones", "false"),
            ])
        };
        let storage = open_with(&config, params);
        churn(&storage).await;
        let (_, before) = read(&storage, 1, &ReadFilter::all());
        storage.compact(TABLE).expect("compact");
        let (_, after) = read(&storage, 1, &ReadFilter::all());
        println!("{class}: per read before compaction {before:?}, after {after:?}");
        assert!(before.sstables >= 3, "{class}: {before:?}");
        assert_eq!((before.tombstones, before.live_rows), (128, 128), "{class}");
        assert_eq!(after.sstables, 1, "{class}: {after:?}");
        assert_eq!((after.tombstones, after.live_rows), (0, 128), "{class}");
        let metrics = storage.table_metrics(TABLE).expect("metrics");
        assert_eq!(metrics.sstables_per_read.count, 2, "{class}: {metrics:?}");
        assert_eq!(metrics.tombstones_per_read.max, 128, "{class}");
        assert_eq!(metrics.tombstones_per_read.min, 0, "{class}");
        assert_eq!(
            metrics.sstables_per_read.max,
            u64::from(before.sstables),
            "{class}"
        );
    }
}
