//! Snapshots: hard links of the live SSTables that outlive compaction, truncation and drops,
//! listing with sizes, clearing.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::common::*;
use storage::{SnapshotTable, Storage};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
}

fn table(schema: Option<&str>) -> [SnapshotTable; 1] {
    [SnapshotTable {
        id: TABLE,
        schema: schema.map(str::to_string),
    }]
}

async fn write(storage: &Storage, range: std::ops::Range<u64>, value: &str) {
    for n in range {
        storage.apply(upsert(n, 0, 1, value)).await.expect("apply");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_hard_link_sstables_and_survive_compaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let storage = open_quiet(&config);
    write(&storage, 0..50, "a").await;
    storage.flush(TABLE).expect("flush");
    write(&storage, 50..100, "b").await;
    let schema = "CREATE TABLE ks.t (pk int PRIMARY KEY, v text);";
    storage
        .snapshot("before", &table(Some(schema)))
        .expect("snapshot");
    assert_eq!(
        storage.table_stats(TABLE).expect("stats").sstables,
        2,
        "flushed first"
    );

    let live = table_files(&config);
    let snapshot = storage.list_snapshots().expect("list");
    assert_eq!(snapshot.len(), 1);
    let info = &snapshot[0];
    assert_eq!(
        (
            info.tag.as_str(),
            info.keyspace.as_str(),
            info.table.as_str()
        ),
        ("before", "ks", "t")
    );
    let snapshot_files = files(&info.directory);
    let data: Vec<&PathBuf> = snapshot_files
        .iter()
        .filter(|f| f.to_string_lossy().ends_with("-Data.db"))
        .collect();
    assert_eq!(data.len(), 2);
    for file in &data {
        let original = live
            .iter()
            .find(|l| l.file_name() == file.file_name())
            .expect("the live file");
        let (a, b) = (
            std::fs::metadata(file).expect("meta"),
            std::fs::metadata(original).expect("meta"),
        );
        assert_eq!(a.ino(), b.ino(), "a hard link of {}", original.display());
    }
    let manifest = std::fs::read_to_string(info.directory.join("manifest.json")).expect("manifest");
    assert!(
        manifest.contains("-Data.db") && manifest.contains("created_at"),
        "{manifest}"
    );
    let saved = std::fs::read_to_string(info.directory.join("schema.cql")).expect("schema");
    assert_eq!(saved, schema);
    assert!(info.size_on_disk > 0);
    assert!(
        info.true_size < info.size_on_disk,
        "the SSTables are still live: {info:?}"
    );

    let again = storage
        .snapshot("before", &table(None))
        .expect_err("tag taken");
    assert!(
        again
            .to_string()
            .contains("Snapshot before already exists."),
        "{again}"
    );

    storage.compact(TABLE).expect("compact");
    let info = &storage.list_snapshots().expect("list")[0];
    assert!(
        data.iter().all(|f| f.exists()),
        "links outlive the originals"
    );
    assert!(
        info.true_size >= info.size_on_disk - 1,
        "only the snapshot holds them now: {info:?}"
    );

    assert_eq!(storage.clear_snapshot(Some("other")).expect("clear"), 0);
    assert_eq!(storage.clear_snapshot(Some("before")).expect("clear"), 1);
    assert!(storage.list_snapshots().expect("list").is_empty());
    assert!(!info.directory.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_survive_truncate_and_drop_until_cleared() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let storage = open_quiet(&config);
    assert!(storage.auto_snapshot(), "auto_snapshot defaults to true");
    write(&storage, 0..20, "a").await;
    storage
        .snapshot("truncated-1-t", &table(None))
        .expect("snapshot");
    storage.truncate(TABLE).await.expect("truncate");
    assert!(contents(&storage).is_empty());
    write(&storage, 0..5, "b").await;
    storage
        .snapshot("dropped-2-t", &table(None))
        .expect("snapshot");
    storage.drop_table(TABLE).await.expect("drop");
    let tags: Vec<String> = storage
        .list_snapshots()
        .expect("list")
        .into_iter()
        .map(|s| s.tag)
        .collect();
    assert_eq!(tags, vec!["dropped-2-t", "truncated-1-t"]);
    for info in storage.list_snapshots().expect("list") {
        assert_eq!(
            info.true_size, info.size_on_disk,
            "nothing live is left: {info:?}"
        );
    }
    assert_eq!(storage.clear_snapshot(None).expect("clear all"), 2);
    assert!(storage.list_snapshots().expect("list").is_empty());
}
