//! Crash-style restarts (the node dropped without `shutdown`) at awkward moments: no
//! acknowledged write is lost, leftovers are cleaned, interrupted compactions resolve to either
//! their inputs or their outputs, corrupt SSTables are named or quarantined.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use super::common::*;
use storage::{Storage, StorageConfig, StorageError};

async fn four_flushes(storage: &Storage) -> BTreeMap<(u64, u8), String> {
    let mut model = BTreeMap::new();
    for round in 0..4i64 {
        for n in 0..100u64 {
            let value = format!("{round}-{n}");
            storage
                .apply(upsert(n + round as u64 * 50, 0, round + 1, &value))
                .await
                .expect("apply");
            model.insert((n + round as u64 * 50, 0), value);
        }
        storage.flush(TABLE).expect("flush");
    }
    model
}

fn names(files: &[PathBuf]) -> Vec<String> {
    let mut names: Vec<String> = files
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(String::from))
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_compaction_keeps_the_inputs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = StorageConfig {
        compaction_throughput: 20_000,
        ..config(dir.path())
    };
    let storage = open(&config);
    storage.disable_autocompaction(TABLE).expect("disable");
    let model = four_flushes(&storage).await;
    let before = names(&table_files(&config));
    storage.enable_autocompaction(TABLE).expect("enable");
    for _ in 0..200 {
        if !storage.compactions().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!storage.compactions().is_empty(), "a compaction is running");
    drop(storage);
    let storage = open_quiet(&StorageConfig {
        compaction_throughput: 0,
        ..config.clone()
    });
    assert_eq!(storage.table_stats(TABLE).expect("stats").sstables, 4);
    let after = names(&table_files(&config));
    assert_eq!(after, before, "no output or transaction log left");
    assert_eq!(contents(&storage), model);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupted_transactions_resolve_to_inputs_or_outputs() {
    for committed in [false, true] {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = config(dir.path());
        let storage = open_quiet(&config);
        let model = four_flushes(&storage).await;
        let table_dir = table_files(&config)[0].parent().expect("dir").to_path_buf();
        let saved = tempfile::tempdir().expect("saved");
        for file in table_files(&config) {
            let name = file.file_name().expect("name");
            fs::copy(&file, saved.path().join(name)).expect("copy");
        }
        storage.compact(TABLE).expect("compact");
        drop(storage);
        // Put the inputs back, as if the crash came before their deletion.
        for entry in fs::read_dir(saved.path()).expect("saved") {
            let path = entry.expect("entry").path();
            fs::copy(&path, table_dir.join(path.file_name().expect("name"))).expect("restore");
        }
        let log = if committed {
            "input 1\ninput 2\ninput 3\ninput 4\noutput 5\ncommit\n"
        } else {
            "input 1\ninput 2\ninput 3\ninput 4\noutput 5\n"
        };
        fs::write(table_dir.join("txn-1.log"), log).expect("txn");
        let storage = open_quiet(&config);
        let expected = if committed { 1 } else { 4 };
        assert_eq!(
            storage.table_stats(TABLE).expect("stats").sstables,
            expected,
            "committed={committed}"
        );
        assert!(!table_dir.join("txn-1.log").exists());
        assert_eq!(contents(&storage), model, "committed={committed}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leftovers_of_an_interrupted_flush_are_removed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let storage = open(&config);
    let model = four_flushes(&storage).await;
    for n in 0..10 {
        storage
            .apply(upsert(1000 + n, 0, 9, "unflushed"))
            .await
            .expect("apply");
    }
    let table_dir = table_files(&config)[0].parent().expect("dir").to_path_buf();
    drop(storage);
    // A flush that died half way: temporary components and an SSTable without its TOC.
    fs::write(table_dir.join("tmp-ha-77-Data.db"), b"partial").expect("tmp");
    fs::write(table_dir.join("ha-78-Data.db"), b"no toc").expect("untocced");
    let storage = open(&config);
    let files = names(&table_files(&config));
    assert!(
        files
            .iter()
            .all(|n| !n.contains("-77-") && !n.contains("-78-")),
        "{files:?}"
    );
    let mut expected = model;
    expected.extend((0..10).map(|n| ((1000 + n, 0), "unflushed".to_string())));
    assert_eq!(contents(&storage), expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_sstable_is_named_or_quarantined() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = config(dir.path());
    let storage = open(&config);
    four_flushes(&storage).await;
    storage.shutdown().await.expect("shutdown");
    drop(storage);
    let stats = table_files(&config)
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with("hb-2-Statistics.db"))
        .expect("statistics of generation 2");
    let mut bytes = fs::read(&stats).expect("read");
    bytes[10] ^= 0xff;
    fs::write(&stats, bytes).expect("write");

    let storage = Storage::open(config.clone()).expect("open");
    match storage.create_table(TABLE, storage::TableParams::new("ks", "t")) {
        Err(error @ StorageError::Corrupt { .. }) => {
            assert!(error.to_string().contains("hb-2-Statistics.db"), "{error}")
        }
        other => panic!("expected corruption, got {other:?}"),
    }
    drop(storage);
    config.ignore_corruption = true;
    let storage = open(&config);
    assert_eq!(storage.table_stats(TABLE).expect("stats").sstables, 3);
    let quarantine = stats.parent().expect("dir").join("quarantine");
    assert!(quarantine.join("hb-2-Statistics.db").exists());
}
