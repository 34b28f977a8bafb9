//! DROP, TRUNCATE and ALTER racing flushes, compactions and the other tasks on a table's files
//! (issue 27): a dropped or truncated table's running work is cancelled and stops harmlessly,
//! and nothing it meets on the way reaches the disk failure policy. A compaction is held
//! running by a low `compaction_throughput` where a test needs one in progress; the loops race
//! an unthrottled one, as the reproduction did.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::common::*;
use mutation::shadow::Granularity;
use mutation::{Mutation, TableId};
use storage::{Storage, StorageConfig, StorageError, TableParams, VerifyOptions};
use uuid::Uuid;

/// The id of table number 0; table `n` has `FIRST_ID + n`.
const FIRST_ID: u128 = 0x7ab1_e000;

/// A compaction of four [`fill`]ed SSTables at this rate takes seconds.
const SLOW: u64 = 64 * 1024;

/// A node with a listener recording what the failure policies ask of it.
struct Node {
    storage: Arc<Storage>,
    actions: Actions,
    config: StorageConfig,
    _dir: tempfile::TempDir,
}

impl Node {
    fn open() -> Node {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = config(dir.path());
        let storage = Storage::open(config.clone()).expect("open");
        storage.replay().expect("replay");
        storage.finish_replay();
        let actions = listen(&storage);
        Node {
            storage: Arc::new(storage),
            actions,
            config,
            _dir: dir,
        }
    }

    /// Registers table number `n` (uncompressed, so its size on disk is what is written).
    fn create(&self, n: u128, compaction: &str) -> TableId {
        let id = TableId(Uuid::from_u128(FIRST_ID + n));
        let params = TableParams {
            compression: [("enabled".to_string(), "false".to_string())].into(),
            ..TableParams::new("ks", format!("t{n}")).with_compaction([("class", compaction)])
        };
        self.storage.create_table(id, params).expect("create");
        id
    }

    /// The table's directory in the (only) data directory.
    fn table_dir(&self, id: TableId) -> PathBuf {
        let name = self.table_name(id);
        storage::engine::table_dir(&self.config.data_dirs[0], "ks", &name, id.0)
    }

    fn table_name(&self, id: TableId) -> String {
        format!("t{}", id.0.as_u128() - FIRST_ID)
    }

    /// No disk failure was declared and nothing was taken out of use.
    fn assert_healthy(&self) {
        assert_eq!(taken(&self.actions), vec![], "no failure policy acted");
        assert_eq!(self.storage.flush_failures(), 0, "no flush failed");
        assert!(self.storage.unwritable_dirs().is_empty());
    }

    /// Waits until a compaction of `id`'s table runs.
    fn await_compaction(&self, id: TableId) {
        let name = self.table_name(id);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.storage.compactions().iter().any(|c| c.table == name) {
            assert!(Instant::now() < deadline, "no compaction of {name} started");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The live partitions of `id`'s table.
    fn live_partitions(&self, id: TableId) -> usize {
        let (all, filter) = (mutation::KeyRange::all(), mutation::ReadFilter::all());
        let live = self.storage.scan(id, &all, &filter, 1, usize::MAX);
        live.expect("scan").len()
    }

    /// Waits until no compaction runs.
    fn await_no_compaction(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.storage.compactions().is_empty() {
            assert!(Instant::now() < deadline, "compactions still running");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

fn row(table: TableId, n: u64, value: &str) -> Mutation {
    Mutation {
        table,
        ..upsert(n, 0, 1, value)
    }
}

/// Writes `sstables` SSTables of `rows` rows of about 1 KiB each to `table`.
async fn fill(storage: &Storage, table: TableId, sstables: u64, rows: u64) {
    for s in 0..sstables {
        for n in 0..rows {
            let value = format!("{s}-{n}-{}", "v".repeat(1000));
            storage
                .apply(row(table, s * rows + n, &value))
                .await
                .expect("apply");
        }
        storage.flush(table).expect("flush");
    }
}

/// What a task of a table dropped under it may answer: done, cancelled, or the table gone
/// before it started. Never an I/O error.
fn harmless<T>(result: &storage::Result<T>) -> bool {
    matches!(
        result,
        Ok(_) | Err(StorageError::Cancelled(_)) | Err(StorageError::UnknownTable(_))
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drop_cancels_the_running_compaction_and_waits_for_it() {
    let node = Node::open();
    node.storage.set_compaction_throughput(SLOW);
    for round in 0..3 {
        let id = node.create(round, "SizeTieredCompactionStrategy");
        fill(&node.storage, id, 4, 100).await;
        node.await_compaction(id);
        let started = Instant::now();
        node.storage.drop_table(id).await.expect("drop");
        // 400 KiB at 64 KiB/s would take seconds more.
        assert!(started.elapsed() < Duration::from_secs(2), "cancelled");
        assert!(
            node.storage.compactions().is_empty(),
            "stopped before the drop returned"
        );
        assert!(!node.table_dir(id).exists(), "its files are gone");
    }
    node.assert_healthy();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_right_after_the_fourth_flush_in_a_loop_leaves_the_node_healthy() {
    let node = Node::open();
    for round in 0..30 {
        let id = node.create(round, "SizeTieredCompactionStrategy");
        fill(&node.storage, id, 4, 3).await;
        node.storage.drop_table(id).await.expect("drop");
        assert!(!node.table_dir(id).exists(), "round {round}");
        node.storage
            .drop_table(id)
            .await
            .expect("dropping again is a no-op");
    }
    node.assert_healthy();
    // Compactions still run (no failure held them back): four SSTables become one.
    let id = node.create(100, "SizeTieredCompactionStrategy");
    fill(&node.storage, id, 4, 3).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while node.storage.table_stats(id).expect("stats").sstables > 1 {
        assert!(Instant::now() < deadline, "compacted");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    node.assert_healthy();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncation_cancels_the_running_compaction_and_the_table_goes_on() {
    let node = Node::open();
    node.storage.set_compaction_throughput(SLOW);
    let id = node.create(0, "SizeTieredCompactionStrategy");
    fill(&node.storage, id, 4, 100).await;
    node.await_compaction(id);
    let started = Instant::now();
    node.storage.truncate(id).await.expect("truncate");
    assert!(started.elapsed() < Duration::from_secs(2), "cancelled");
    assert!(node.storage.compactions().is_empty());
    let stats = node.storage.table_stats(id).expect("stats");
    assert_eq!((stats.sstables, stats.disk_bytes), (0, 0));
    node.storage.set_compaction_throughput(0);
    fill(&node.storage, id, 4, 2).await;
    node.await_no_compaction();
    assert_eq!(
        node.live_partitions(id),
        8,
        "what was written after the truncation"
    );
    node.assert_healthy();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncations_and_alters_race_flushes_and_compactions_in_a_loop() {
    let node = Node::open();
    let id = node.create(0, "SizeTieredCompactionStrategy");
    let strategies = ["LeveledCompactionStrategy", "SizeTieredCompactionStrategy"];
    let compressions = ["LZ4Compressor", "ZstdCompressor"];
    for round in 0..24u64 {
        fill(&node.storage, id, 4, 3).await;
        if round % 2 == 0 {
            node.storage.truncate(id).await.expect("truncate");
            assert_eq!(node.storage.table_stats(id).expect("stats").sstables, 0);
            continue;
        }
        let i = (round / 2 % 2) as usize;
        let params = TableParams {
            compression: [("class".to_string(), compressions[i].to_string())].into(),
            ..TableParams::new("ks", "t0").with_compaction([("class", strategies[i])])
        };
        node.storage.alter_table(id, params).expect("alter");
        assert_eq!(
            node.live_partitions(id),
            12,
            "round {round}: every row written since the truncation"
        );
    }
    node.await_no_compaction();
    node.assert_healthy();
}

/// Something done to a table on a thread of its own.
type TableTask = Box<dyn FnOnce(&Storage) -> storage::Result<()> + Send>;

/// Runs, each on its own thread, a major compaction, a garbage collection, a scrub, a verify, a
/// snapshot and flushes of `id`'s table.
fn start_every_task(
    storage: &Arc<Storage>,
    id: TableId,
    tag: String,
) -> Vec<std::thread::JoinHandle<storage::Result<()>>> {
    let tasks: Vec<TableTask> = vec![
        Box::new(move |s| s.compact(id).map(drop)),
        Box::new(move |s| s.garbage_collect(id, Granularity::Row).map(drop)),
        Box::new(move |s| s.scrub(id).map(drop)),
        Box::new(move |s| s.verify(id, VerifyOptions::default()).map(drop)),
        Box::new(move |s| s.snapshot(&tag, &[storage::SnapshotTable { id, schema: None }])),
        Box::new(move |s| {
            let failed = (0..50).map(|_| s.flush(id)).find(|r| !harmless(r));
            failed.map_or(Ok(()), |r| r.map(drop))
        }),
    ];
    tasks
        .into_iter()
        .map(|task| {
            let storage = storage.clone();
            std::thread::spawn(move || task(&storage))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_task_of_a_dropped_table_stops_harmlessly() {
    let node = Node::open();
    node.storage.set_compaction_throughput(SLOW);
    for round in 0..3 {
        let id = node.create(round, "SizeTieredCompactionStrategy");
        fill(&node.storage, id, 4, 60).await;
        node.storage.disable_autocompaction(id).expect("disable");
        let tasks = start_every_task(&node.storage, id, format!("s{round}"));
        tokio::time::sleep(Duration::from_millis(100)).await;
        node.storage.drop_table(id).await.expect("drop");
        for task in tasks {
            let result = task.join().expect("task");
            assert!(harmless(&result), "round {round}: {result:?}");
        }
        assert!(node.storage.compactions().is_empty());
        let left: Vec<_> = std::fs::read_dir(node.table_dir(id))
            .map(|entries| entries.map(|e| e.expect("entry").file_name()).collect())
            .unwrap_or_default();
        assert!(
            left.iter().all(|name| name == "snapshots"),
            "only a snapshot may stay: {left:?}"
        );
    }
    node.assert_healthy();
}
