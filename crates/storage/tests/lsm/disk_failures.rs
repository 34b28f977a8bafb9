//! Failed disks and corrupt SSTables under each `disk_failure_policy` and
//! `commit_failure_policy`: what storage does itself (directories taken out of use, failing
//! writes, paced retries) and which actions it asks of the node. A directory fails by being
//! replaced with a plain file (tests may run as root, whom permission bits do not stop).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::common::*;
use mutation::ReadFilter;
use storage::{
    CommitFailurePolicy, DiskFailurePolicy, NodeAction, Storage, StorageConfig, StorageError,
};

/// A directory replaced by a file until dropped (or restored).
struct Broken {
    path: PathBuf,
    moved: PathBuf,
}

impl Broken {
    fn new(path: &Path) -> Broken {
        let moved = path.with_extension("moved-away");
        fs::rename(path, &moved).expect("move the directory away");
        fs::write(path, b"not a directory").expect("put a file in its place");
        Broken {
            path: path.to_path_buf(),
            moved,
        }
    }

    /// Puts the directory back (as dropping does).
    fn restore(self) {
        drop(self);
    }
}

impl Drop for Broken {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
        let _ = fs::rename(&self.moved, &self.path);
    }
}

fn with_policies(
    dir: &Path,
    disk: DiskFailurePolicy,
    commit: CommitFailurePolicy,
) -> StorageConfig {
    StorageConfig {
        disk_failure_policy: disk,
        commit_failure_policy: commit,
        ..config(dir)
    }
}

/// `best_effort` over two data directories, `d1` and `d2`.
fn best_effort_over_two(dir: &Path) -> StorageConfig {
    StorageConfig {
        data_dirs: vec![dir.join("d1"), dir.join("d2")],
        ..with_policies(
            dir,
            DiskFailurePolicy::BestEffort,
            CommitFailurePolicy::Stop,
        )
    }
}

async fn write_range(storage: &Storage, range: std::ops::Range<u64>) {
    for n in range {
        let value = format!("v{n}");
        storage.apply(upsert(n, 0, 1, &value)).await.expect("apply");
    }
}

/// The Data files of the table's SSTables in `data_dir`.
fn data_files(data_dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for table in fs::read_dir(data_dir.join("ks")).expect("keyspace dir") {
        for entry in fs::read_dir(table.expect("entry").path()).expect("table dir") {
            let path = entry.expect("entry").path();
            if path.to_string_lossy().ends_with("-Data.db") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Flips one byte in the last Data chunk of `file` (its checksum no longer matches).
fn corrupt_last_chunk(file: &Path) {
    let mut bytes = fs::read(file).expect("read");
    let target = bytes.len() - 6;
    bytes[target] ^= 0x5a;
    fs::write(file, bytes).expect("write");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_flushes_back_off_and_resume_once_the_directory_is_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = StorageConfig {
        memtable_space: 256 * 1024,
        ..with_policies(
            dir.path(),
            DiskFailurePolicy::Ignore,
            CommitFailurePolicy::Stop,
        )
    };
    let storage = Arc::new(open_quiet(&config));
    write_range(&storage, 0..10).await;
    storage.flush(TABLE).expect("a healthy flush");
    let broken = Broken::new(&config.data_dirs[0]);
    // Writers fill the memtable pool and wait for a flush that cannot happen: each wait ends
    // at the caller's timeout, as the coordinator bounds it with the write timeout.
    let started = Instant::now();
    let mut timed_out = 0;
    let mut n = 1_000;
    while started.elapsed() < Duration::from_secs(3) {
        let write = storage.apply(upsert(n, 0, 1, &"x".repeat(2_000)));
        if tokio::time::timeout(Duration::from_millis(300), write)
            .await
            .is_err()
        {
            timed_out += 1;
        }
        n += 1;
    }
    assert!(timed_out > 0, "writes waited for memtable space");
    let failures = storage.flush_failures();
    // 100 ms doubling: about five attempts in three seconds. Writers waiting for space used to
    // wake the flush thread for an attempt (and a new empty memtable) at every wait.
    assert!(
        (1..=8).contains(&failures),
        "{failures} flush attempts in 3 s"
    );
    broken.restore();
    let deadline = Instant::now() + Duration::from_secs(20);
    while storage.table_stats(TABLE).expect("stats").memtable_bytes > 200 * 1024 {
        assert!(Instant::now() < deadline, "background flushes resumed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    storage
        .flush(TABLE)
        .expect("flush after the directory came back");
    assert_eq!(value(&storage, 3, 0), Some("v3".into()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_and_die_ask_the_node_to_act_on_a_failed_flush() {
    for (policy, expected) in [
        (DiskFailurePolicy::Stop, Some(NodeAction::StopTransports)),
        (
            DiskFailurePolicy::StopParanoid,
            Some(NodeAction::StopTransports),
        ),
        (DiskFailurePolicy::Die, Some(NodeAction::Die)),
        (DiskFailurePolicy::Ignore, None),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = with_policies(dir.path(), policy, CommitFailurePolicy::Stop);
        let storage = open_quiet(&config);
        let actions = listen(&storage);
        write_range(&storage, 0..5).await;
        let _broken = Broken::new(&config.data_dirs[0]);
        assert!(matches!(storage.flush(TABLE), Err(StorageError::Io { .. })));
        assert_eq!(taken(&actions).first().copied(), expected, "{policy:?}");
        assert_eq!(value(&storage, 2, 0), Some("v2".into()), "still in memory");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn best_effort_writes_to_the_remaining_directories_then_stops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = best_effort_over_two(dir.path());
    let storage = open_quiet(&config);
    let actions = listen(&storage);
    write_range(&storage, 0..5).await;
    let first = Broken::new(&config.data_dirs[0]);
    // Both directories share a file system and hold nothing yet: the first is chosen, fails,
    // and is taken out of use; the retry goes to the second.
    assert!(storage.flush(TABLE).is_err());
    assert_eq!(storage.unwritable_dirs(), vec![config.data_dirs[0].clone()]);
    storage
        .flush(TABLE)
        .expect("flushed to the second directory");
    assert_eq!(data_files(&config.data_dirs[1]).len(), 1);
    assert!(taken(&actions).is_empty(), "best_effort keeps serving");
    drop(first);
    write_range(&storage, 5..10).await;
    let _second = Broken::new(&config.data_dirs[1]);
    assert!(
        storage.flush(TABLE).is_err(),
        "the second directory fails too"
    );
    let error = storage.flush(TABLE).expect_err("no directory left");
    assert!(
        error
            .to_string()
            .contains("No data directory is available for writing"),
        "{error}"
    );
    assert_eq!(taken(&actions), vec![NodeAction::StopTransports]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn best_effort_stops_reading_a_directory_that_failed_a_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = best_effort_over_two(dir.path());
    let storage = open_quiet(&config);
    write_range(&storage, 0..5).await;
    storage.flush(TABLE).expect("flush to d1");
    write_range(&storage, 5..10).await;
    storage.flush(TABLE).expect("flush to d2");
    let [in_d1] = &data_files(&config.data_dirs[0])[..] else {
        panic!("one SSTable in each directory");
    };
    // A Data file cut short fails its reads with an I/O error (not a checksum mismatch).
    let len = fs::metadata(in_d1).expect("metadata").len();
    fs::OpenOptions::new()
        .write(true)
        .open(in_d1)
        .and_then(|f| f.set_len(len / 2))
        .expect("truncate");
    let read = storage.read(TABLE, &key(1), &ReadFilter::all(), 1);
    assert!(matches!(read, Err(StorageError::Io { .. })), "{read:?}");
    assert_eq!(
        value(&storage, 1, 0),
        None,
        "d1's SSTables are no longer read"
    );
    assert_eq!(value(&storage, 7, 0), Some("v7".into()), "d2 still serves");
    assert_eq!(storage.unwritable_dirs(), vec![config.data_dirs[0].clone()]);
    assert_eq!(storage.table_stats(TABLE).expect("stats").sstables, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_reads_are_counted_and_stop_only_a_paranoid_node() {
    for (policy, expected) in [
        (DiskFailurePolicy::Stop, vec![]),
        (DiskFailurePolicy::BestEffort, vec![]),
        (
            DiskFailurePolicy::StopParanoid,
            vec![NodeAction::StopTransports],
        ),
        (DiskFailurePolicy::Die, vec![NodeAction::Die]),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = with_policies(dir.path(), policy, CommitFailurePolicy::Stop);
        let storage = open_quiet(&config);
        let actions = listen(&storage);
        write_range(&storage, 0..50).await;
        storage.flush(TABLE).expect("flush");
        corrupt_last_chunk(&data_files(&config.data_dirs[0])[0]);
        let scan = storage.scan(
            TABLE,
            &mutation::KeyRange::all(),
            &ReadFilter::all(),
            1,
            100,
        );
        assert!(
            matches!(scan, Err(StorageError::Corrupt { .. })),
            "{scan:?}"
        );
        assert_eq!(
            storage.table_metrics(TABLE).expect("metrics").corrupt_reads,
            1
        );
        assert_eq!(taken(&actions), expected, "{policy:?}");
        assert!(storage.unwritable_dirs().is_empty(), "{policy:?}");
    }
}

/// Writes until one fails (the commit log needs a new segment in a directory that is gone).
async fn write_until_failure(storage: &Storage) -> StorageError {
    for n in 100_000..110_000 {
        if let Err(error) = storage.apply(upsert(n, 0, 1, &"y".repeat(500))).await {
            return error;
        }
    }
    panic!("no write failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_commit_fails_writes_and_keeps_reads() {
    for (policy, expected) in [
        (CommitFailurePolicy::StopCommit, vec![]),
        (CommitFailurePolicy::Stop, vec![NodeAction::StopTransports]),
        (CommitFailurePolicy::Die, vec![NodeAction::Die]),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = with_policies(dir.path(), DiskFailurePolicy::Stop, policy);
        let storage = open_quiet(&config);
        let actions = listen(&storage);
        write_range(&storage, 0..5).await;
        let broken = Broken::new(&config.commitlog_dir);
        assert!(matches!(
            write_until_failure(&storage).await,
            StorageError::CommitLogUnavailable(_)
        ));
        assert_eq!(taken(&actions), expected, "{policy:?}");
        broken.restore();
        let later = storage.apply(upsert(1, 0, 2, "later")).await;
        assert!(later.is_err(), "the commit log stays stopped ({policy:?})");
        assert_eq!(value(&storage, 3, 0), Some("v3".into()), "reads go on");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignored_commit_failures_fail_writes_until_the_directory_is_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = with_policies(
        dir.path(),
        DiskFailurePolicy::Stop,
        CommitFailurePolicy::Ignore,
    );
    let storage = open_quiet(&config);
    let actions = listen(&storage);
    let broken = Broken::new(&config.commitlog_dir);
    write_until_failure(&storage).await;
    // As large as the write that failed, so it too needs a new segment.
    let again = storage.apply(upsert(1, 0, 2, &"y".repeat(500))).await;
    assert!(
        matches!(again, Err(StorageError::CommitLogUnavailable(_))),
        "the next write needing a segment fails at once, within the pause"
    );
    broken.restore();
    tokio::time::sleep(Duration::from_millis(300)).await;
    storage
        .apply(upsert(1, 0, 3, "recovered"))
        .await
        .expect("a new segment once the directory is back");
    assert_eq!(value(&storage, 1, 0), Some("recovered".into()));
    assert!(taken(&actions).is_empty());
}
