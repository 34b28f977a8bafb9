//! Commit-log durability and replay through the public `Storage` API.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mutation::{
    Cell, ColumnData, ColumnValue, CounterUpdate, Mutation, PartitionKey, PartitionUpdate,
    ReadFilter, Row, TableId,
};
use storage::{commitlog, CommitlogSync, Storage, StorageConfig, StorageError, TableParams};
use uuid::Uuid;

const TABLE: TableId = TableId(Uuid::from_u128(1));
const OTHER: TableId = TableId(Uuid::from_u128(2));

fn config(dir: &Path, sync: CommitlogSync) -> StorageConfig {
    StorageConfig {
        sync,
        ..StorageConfig::new(dir.join("data"), dir.join("commitlog"))
    }
}

fn open(config: &StorageConfig, tables: &[TableId]) -> Storage {
    let storage = Storage::open(config.clone()).expect("open");
    for table in tables {
        storage
            .create_table(*table, TableParams::new("ks", "t"))
            .expect("create");
    }
    storage
}

fn key(n: u64) -> PartitionKey {
    PartitionKey {
        token: n as i64,
        key: Bytes::from(n.to_be_bytes().to_vec()),
    }
}

fn mutation(table: TableId, n: u64) -> Mutation {
    let cell = Cell::live(1, Bytes::from(format!("value{n}")));
    cell_mutation(table, n, "v", cell)
}

/// Writes `cell` into column `column` of row `c` of partition `n`.
fn cell_mutation(table: TableId, n: u64, column: &'static str, cell: Cell) -> Mutation {
    let mut row = Row::new(Bytes::from_static(b"c"));
    row.columns = vec![ColumnData::simple(column, cell)];
    Mutation {
        table,
        key: key(n),
        update: PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        },
    }
}

fn present(storage: &Storage, table: TableId, n: u64) -> bool {
    storage
        .read(table, &key(n), &ReadFilter::all(), 0)
        .expect("read")
        .is_some()
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir.join("commitlog"))
        .expect("list")
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort_by_key(|p| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let id = name
            .trim_end_matches(".log")
            .rsplit('-')
            .next()
            .unwrap_or("0");
        id.parse::<u64>().unwrap_or(0)
    });
    paths
}

/// The segment holding data (skipping the empty one opened by a later `Storage::open`) and its
/// records' bytes, without the zero tail of the preallocated file.
fn data_segment(dir: &Path) -> (PathBuf, Vec<u8>) {
    let all = commitlog::list_segments(&dir.join("commitlog")).expect("list");
    let last = commitlog::last_written(&all).expect("read");
    let path = all[last.expect("a segment with records")].path.clone();
    let contents = commitlog::read_segment(&path, false, false).expect("intact");
    let end = contents.records.last().map_or(0, |r| r.end() as usize);
    let mut bytes = fs::read(&path).expect("read");
    bytes.truncate(end);
    (path, bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_a_drop_in_every_sync_mode() {
    let modes = [
        CommitlogSync::Periodic {
            period: Duration::from_secs(10),
        },
        CommitlogSync::Batch,
        CommitlogSync::Group {
            window: Duration::from_millis(5),
        },
    ];
    for mode in modes {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = config(dir.path(), mode);
        let storage = open(&config, &[TABLE]);
        for n in 0..50 {
            storage.apply(mutation(TABLE, n)).await.expect("apply");
        }
        drop(storage);
        let storage = open(&config, &[TABLE]);
        let stats = storage.replay().expect("replay");
        assert_eq!(stats.mutations_applied, 50, "{mode:?}");
        assert!((0..50).all(|n| present(&storage, TABLE, n)), "{mode:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsynced_writes_are_readable_at_once_and_durable_after_a_log_sync() {
    for mode in [
        CommitlogSync::Batch,
        CommitlogSync::Group {
            window: Duration::from_millis(5),
        },
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = config(dir.path(), mode);
        let storage = open(&config, &[TABLE]);
        let syncs = storage.commitlog_syncs();
        for n in 0..20 {
            storage
                .apply_unsynced(vec![mutation(TABLE, n)])
                .expect("apply");
            assert!(
                present(&storage, TABLE, n),
                "{mode:?}: read before the sync"
            );
        }
        storage.sync_log().await.expect("sync");
        assert!(
            storage.commitlog_syncs() > syncs,
            "{mode:?}: the log was synced"
        );
        drop(storage);
        let storage = open(&config, &[TABLE]);
        let stats = storage.replay().expect("replay");
        assert_eq!(stats.mutations_applied, 20, "{mode:?}");
    }
}

#[tokio::test]
async fn torn_tail_is_ignored_and_truncated() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path(), CommitlogSync::Batch);
    let storage = open(&config, &[TABLE]);
    for n in 0..3 {
        storage.apply(mutation(TABLE, n)).await.expect("apply");
    }
    // A crash: nothing flushed, everything left to replay.
    drop(storage);
    let (segment, intact) = data_segment(dir.path());
    // A crash in the middle of copying a fourth record into the preallocated segment.
    let mut torn = intact.clone();
    torn.extend_from_slice(&intact[..intact.len() / 3 - 2]);
    torn.extend_from_slice(&[0u8; 4096]);
    fs::write(&segment, &torn).expect("write");

    let storage = open(&config, &[TABLE]);
    let stats = storage.replay().expect("torn tail is not an error");
    assert_eq!(stats.mutations_applied, 3);
    assert!(stats.torn_bytes > 0);
    assert_eq!(fs::read(&segment).expect("read"), intact);
}

#[tokio::test]
async fn mid_segment_corruption_names_file_and_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = config(dir.path(), CommitlogSync::Batch);
    let storage = open(&config, &[TABLE]);
    for n in 0..3 {
        storage.apply(mutation(TABLE, n)).await.expect("apply");
    }
    drop(storage);
    let (segment, mut bytes) = data_segment(dir.path());
    let record_len = bytes.len() / 3;
    bytes[record_len + 12] ^= 0xff;
    fs::write(&segment, &bytes).expect("write");

    let storage = open(&config, &[TABLE]);
    match storage.replay() {
        Err(StorageError::Corrupt { file, offset, .. }) => {
            assert_eq!(file, segment);
            assert_eq!(offset, record_len as u64);
        }
        other => panic!("expected corruption, got {other:?}"),
    }
    drop(storage);
    config.ignore_corruption = true;
    let storage = open(&config, &[TABLE]);
    let stats = storage.replay().expect("corruption ignored");
    assert_eq!(stats.corrupt_segments_skipped, 1);
    assert!(present(&storage, TABLE, 0));
    assert!(!present(&storage, TABLE, 1));
}

#[tokio::test]
async fn truncation_and_drop_records_are_honoured_on_replay() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path(), CommitlogSync::Batch);
    let storage = open(&config, &[TABLE, OTHER]);
    storage.apply(mutation(TABLE, 1)).await.expect("apply");
    storage.apply(mutation(OTHER, 1)).await.expect("apply");
    storage.truncate(TABLE).await.expect("truncate");
    assert!(!present(&storage, TABLE, 1));
    storage.apply(mutation(TABLE, 2)).await.expect("apply");
    storage.drop_table(OTHER).await.expect("drop");
    assert!(matches!(
        storage.read(OTHER, &key(1), &ReadFilter::all(), 0),
        Err(StorageError::UnknownTable(OTHER))
    ));
    drop(storage);

    // Even if the dropped table is registered again (same id), its old data stays gone: the
    // truncation moved TABLE's replay floor past its record, the drop record empties OTHER.
    let storage = open(&config, &[TABLE, OTHER]);
    let stats = storage.replay().expect("replay");
    assert_eq!((stats.truncations, stats.mutations_flushed), (1, 1));
    assert!(!present(&storage, TABLE, 1));
    assert!(present(&storage, TABLE, 2));
    assert!(!present(&storage, OTHER, 1));
}

#[tokio::test]
async fn a_batch_is_replayed_whole_or_not_at_all() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path(), CommitlogSync::Batch);
    let storage = open(&config, &[TABLE, OTHER]);
    storage.apply(mutation(TABLE, 1)).await.expect("apply");
    let batch = vec![mutation(TABLE, 2), mutation(OTHER, 2)];
    storage.apply_batch(batch).await.expect("batch");
    drop(storage);

    let (segment, bytes) = data_segment(dir.path());
    let storage = open(&config, &[TABLE, OTHER]);
    assert_eq!(storage.replay().expect("replay").records, 2);
    assert!(present(&storage, TABLE, 2) && present(&storage, OTHER, 2));
    drop(storage);

    // Cut the batch record short, as a crash mid-write would.
    fs::write(&segment, &bytes[..bytes.len() - 20]).expect("write");
    let storage = open(&config, &[TABLE, OTHER]);
    let stats = storage.replay().expect("replay");
    assert_eq!(stats.records, 1);
    assert!(present(&storage, TABLE, 1));
    assert!(!present(&storage, TABLE, 2) && !present(&storage, OTHER, 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_batch_writers_share_fsyncs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = Arc::new(open(&config(dir.path(), CommitlogSync::Batch), &[TABLE]));
    let writers = 400;
    let tasks: Vec<_> = (0..writers)
        .map(|n| {
            let storage = storage.clone();
            tokio::spawn(async move { storage.apply(mutation(TABLE, n)).await })
        })
        .collect();
    for task in tasks {
        task.await.expect("join").expect("apply");
    }
    let syncs = storage.commitlog_syncs();
    assert!(syncs >= 1);
    assert!(syncs < writers / 4, "{syncs} fsyncs for {writers} writers");
}

/// The counter `n` of row `c` of partition `n` as a read returns it.
fn counter_total(storage: &Storage, n: u64) -> i64 {
    let partition = storage
        .read(TABLE, &key(n), &ReadFilter::all(), 0)
        .expect("read");
    let row = partition.expect("counter row").rows.remove(0);
    match &row.column(b"n").expect("column").value {
        ColumnValue::Simple(cell) => {
            let bytes: [u8; 8] = cell
                .value
                .as_deref()
                .expect("value")
                .try_into()
                .expect("8 bytes");
            i64::from_be_bytes(bytes)
        }
        ColumnValue::Complex(_) => panic!("counter is simple"),
    }
}

fn increment(delta: i64) -> CounterUpdate {
    CounterUpdate {
        clustering: Some(Bytes::from_static(b"c")),
        column: Bytes::from_static(b"n"),
        delta,
    }
}

/// A mutation writing counter `n` as counters were written before they had shards: an
/// unflagged cell holding the 8-byte total.
fn legacy_total(n: u64, timestamp: i64, total: i64) -> Mutation {
    let value = Bytes::copy_from_slice(&total.to_be_bytes());
    cell_mutation(TABLE, n, "n", Cell::live(timestamp, value))
}

#[tokio::test]
async fn counter_totals_written_before_shards_read_the_same_and_take_new_increments() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path(), CommitlogSync::Batch);
    let storage = open(&config, &[TABLE]);
    storage.apply(legacy_total(3, 10, 5)).await.expect("apply");
    storage.flush(TABLE).expect("flush");
    storage.apply(legacy_total(3, 11, 8)).await.expect("apply");
    drop(storage);
    // An old commit log and an old SSTable.
    let storage = open(&config, &[TABLE]);
    storage.replay().expect("replay");
    assert_eq!(counter_total(&storage, 3), 8);
    let written = storage
        .apply_counter(TABLE, key(3), vec![increment(3)], 5, [9; 16])
        .await
        .expect("increment");
    assert!(written.is_some());
    assert_eq!(counter_total(&storage, 3), 11);
    storage.flush(TABLE).expect("flush");
    storage.compact(TABLE).expect("compact");
    drop(storage);
    let storage = open(&config, &[TABLE]);
    storage.replay().expect("replay");
    assert_eq!(counter_total(&storage, 3), 11);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_counter_increments_are_not_lost_and_replay_idempotently() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(
        dir.path(),
        CommitlogSync::Group {
            window: Duration::from_millis(1),
        },
    );
    let storage = Arc::new(open(&config, &[TABLE]));
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let storage = storage.clone();
            tokio::spawn(async move {
                for _ in 0..25 {
                    let update = vec![increment(2), increment(-1)];
                    storage
                        .apply_counter(TABLE, key(7), update, 100, [7; 16])
                        .await?;
                }
                Ok::<_, StorageError>(())
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("join").expect("increment");
    }
    let total = |storage: &Storage| counter_total(storage, 7);
    assert_eq!(total(&storage), 200);
    storage.shutdown().await.expect("shutdown");
    drop(storage);
    let storage = open(&config, &[TABLE]);
    storage.replay().expect("replay");
    assert_eq!(total(&storage), 200);
    storage.replay().expect("second replay is a no-op");
    assert_eq!(total(&storage), 200);
}

#[tokio::test]
async fn later_replays_restore_only_newly_registered_tables() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path(), CommitlogSync::Batch);
    let storage = open(&config, &[TABLE, OTHER]);
    storage.apply(mutation(TABLE, 1)).await.expect("apply");
    storage.apply(mutation(OTHER, 1)).await.expect("apply");
    drop(storage);

    let storage = open(&config, &[TABLE]);
    let first = storage.replay().expect("replay");
    assert_eq!((first.mutations_applied, first.mutations_skipped), (1, 1));
    // A write between the replays must survive the second one.
    let mut newer = mutation(TABLE, 1);
    newer.update.rows[0].columns = vec![ColumnData::simple("v", Cell::tombstone(2, 0))];
    storage.apply(newer).await.expect("apply");
    storage
        .create_table(OTHER, TableParams::new("ks", "other"))
        .expect("create");
    let second = storage.replay().expect("replay");
    assert_eq!((second.mutations_applied, second.mutations_skipped), (1, 1));
    assert!(present(&storage, OTHER, 1));
    assert!(!present(&storage, TABLE, 1));
}

#[tokio::test]
async fn small_segments_roll_and_replay_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = StorageConfig {
        segment_size: 512,
        ..config(dir.path(), CommitlogSync::Batch)
    };
    let storage = open(&config, &[TABLE]);
    for n in 0..40 {
        storage.apply(mutation(TABLE, n)).await.expect("apply");
    }
    let mut last = mutation(TABLE, 0);
    last.update.rows[0].columns = vec![ColumnData::simple("v", Cell::tombstone(2, 0))];
    storage.apply(last).await.expect("apply");
    let huge = {
        let mut m = mutation(TABLE, 99);
        m.update.rows[0].columns = vec![ColumnData::simple(
            "v",
            Cell::live(1, Bytes::from(vec![0u8; 600])),
        )];
        m
    };
    assert!(matches!(
        storage.apply(huge).await,
        Err(StorageError::TooLarge { .. })
    ));
    drop(storage);
    assert!(segments(dir.path()).len() > 3);

    let storage = open(&config, &[TABLE]);
    let stats = storage.replay().expect("replay");
    assert_eq!(stats.mutations_applied, 41);
    assert!(!present(&storage, TABLE, 0));
    assert!((1..40).all(|n| present(&storage, TABLE, n)));
    storage.shutdown().await.expect("shutdown");
    assert!(matches!(
        storage.apply(mutation(TABLE, 1)).await,
        Err(StorageError::Closed)
    ));
}

#[tokio::test]
async fn unknown_tables_are_rejected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = open(&config(dir.path(), CommitlogSync::Batch), &[TABLE]);
    assert!(matches!(
        storage.apply(mutation(OTHER, 1)).await,
        Err(StorageError::UnknownTable(OTHER))
    ));
    storage
        .drop_table(OTHER)
        .await
        .expect("dropping a table not registered does nothing");
    storage
        .create_table(TABLE, TableParams::new("ks", "t"))
        .expect("idempotent");
    assert!(storage.memory_bytes(TABLE).is_ok());
}
