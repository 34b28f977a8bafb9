//! Several data directories (`data_file_directories`): SSTables spread over them, found again
//! at start-up, compacted, snapshotted, truncated and dropped across them, crash leftovers and
//! interrupted compactions cleaned in each.

use std::path::{Path, PathBuf};

use super::common::*;
use storage::{SnapshotTable, Storage, StorageConfig};

fn two_dirs(root: &Path) -> StorageConfig {
    StorageConfig {
        data_dirs: vec![root.join("d1"), root.join("d2")],
        ..config(root)
    }
}

/// The table's directory under each data directory.
fn table_dirs(config: &StorageConfig) -> Vec<PathBuf> {
    config
        .data_dirs
        .iter()
        .map(|data| {
            std::fs::read_dir(data.join("ks"))
                .expect("keyspace dir")
                .map(|e| e.expect("entry").path())
                .next()
                .expect("table dir")
        })
        .collect()
}

/// Generations of the SSTables (by their Data file) in `dir`.
fn generations(dir: &Path) -> Vec<u64> {
    let mut found: Vec<u64> = std::fs::read_dir(dir)
        .expect("list")
        .filter_map(|e| {
            let name = e.expect("entry").file_name().into_string().ok()?;
            let rest = name.strip_suffix("-Data.db")?;
            rest.rsplit('-').next()?.parse().ok()
        })
        .collect();
    found.sort_unstable();
    found
}

/// Writes `batches` batches of 20 partitions, flushing after each.
async fn write_flushed(storage: &Storage, batches: u64) {
    for batch in 0..batches {
        for n in batch * 20..(batch + 1) * 20 {
            let value = format!("v{n}");
            storage.apply(upsert(n, 0, 1, &value)).await.expect("apply");
        }
        storage.flush(TABLE).expect("flush");
    }
}

async fn restart(storage: Storage, config: &StorageConfig) -> Storage {
    storage.shutdown().await.expect("shutdown");
    drop(storage);
    open_quiet(config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sstables_spread_over_directories_and_survive_restart_and_compaction() {
    let root = tempfile::tempdir().expect("tempdir");
    let config = two_dirs(root.path());
    let storage = open_quiet(&config);
    write_flushed(&storage, 4).await;
    let dirs = table_dirs(&config);
    let per_dir: Vec<usize> = dirs.iter().map(|d| generations(d).len()).collect();
    assert_eq!(
        per_dir,
        vec![2, 2],
        "flushes alternate between equal directories"
    );
    let expected = contents(&storage);
    assert_eq!(expected.len(), 80);

    let storage = restart(storage, &config).await;
    assert_eq!(contents(&storage), expected);
    assert_eq!(storage.table_stats(TABLE).expect("stats").sstables, 4);
    assert_eq!(value(&storage, 65, 0).as_deref(), Some("v65"));

    storage.compact(TABLE).expect("compact");
    assert_eq!(storage.table_stats(TABLE).expect("stats").sstables, 1);
    let total: usize = dirs.iter().map(|d| generations(d).len()).sum();
    assert_eq!(
        total, 1,
        "compaction removed the inputs in both directories"
    );
    assert_eq!(contents(&storage), expected);
    let storage = restart(storage, &config).await;
    assert_eq!(contents(&storage), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_truncate_and_drop_cover_every_directory() {
    let root = tempfile::tempdir().expect("tempdir");
    let config = two_dirs(root.path());
    let storage = open_quiet(&config);
    write_flushed(&storage, 2).await;
    let table = [SnapshotTable {
        id: TABLE,
        schema: None,
    }];
    storage.snapshot("both", &table).expect("snapshot");
    let listed = storage.list_snapshots().expect("list");
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].directories.len(), 2);
    let parts: Vec<PathBuf> = listed[0].directories.clone();
    for part in &parts {
        assert_eq!(generations(part).len(), 1, "{}", part.display());
    }
    assert!(storage.snapshot("both", &table).is_err(), "tag taken");

    storage.truncate(TABLE).await.expect("truncate");
    let dirs = table_dirs(&config);
    assert!(dirs.iter().all(|d| generations(d).is_empty()));
    assert!(contents(&storage).is_empty());
    let listed = storage.list_snapshots().expect("list");
    assert_eq!(
        listed[0].true_size, listed[0].size_on_disk,
        "only snapshots hold the data"
    );
    assert_eq!(storage.clear_snapshot(Some("both")).expect("clear"), 1);
    assert!(parts.iter().all(|p| !p.exists()));

    write_flushed(&storage, 2).await;
    storage.drop_table(TABLE).await.expect("drop");
    assert!(
        dirs.iter().all(|d| !d.exists()),
        "table directories removed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leftovers_and_interrupted_compactions_are_cleaned_in_each_directory() {
    let root = tempfile::tempdir().expect("tempdir");
    let config = two_dirs(root.path());
    let storage = open_quiet(&config);
    write_flushed(&storage, 2).await;
    storage.shutdown().await.expect("shutdown");
    drop(storage);
    let dirs = table_dirs(&config);
    let (first, second) = (generations(&dirs[0]), generations(&dirs[1]));
    assert_eq!((first.len(), second.len()), (1, 1));
    let unfinished = dirs[1].join("tmp-ha-99-Data.db");
    std::fs::write(&unfinished, b"partial").expect("leftover");
    let orphan = dirs[1].join("ha-98-Index.db");
    std::fs::write(&orphan, b"no TOC").expect("leftover");
    // A committed compaction whose input in the second directory was not yet deleted.
    let txn = format!("input {}\ncommit\n", second[0]);
    std::fs::write(dirs[0].join(format!("txn-{}.log", second[0])), txn).expect("txn");

    let storage = open_quiet(&config);
    assert!(!unfinished.exists() && !orphan.exists());
    assert!(generations(&dirs[1]).is_empty(), "committed input deleted");
    assert_eq!(storage.table_stats(TABLE).expect("stats").sstables, 1);
    assert_eq!(contents(&storage).len(), 20);
}
