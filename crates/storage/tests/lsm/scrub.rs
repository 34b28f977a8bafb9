//! `nodetool verify` and `nodetool scrub` through `Storage`: verify names the corrupt
//! SSTables and the problem in each; scrub rewrites every SSTable keeping each partition that
//! can still be read (resynchronizing on the Index after a corrupt chunk) and shows in the
//! running compactions meanwhile.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::common::*;
use mutation::ReadFilter;
use storage::{Storage, StorageConfig, TaskKind, VerifyOptions};

const PARTITIONS: u64 = 500;

/// A node whose table holds one SSTable of [`PARTITIONS`] partitions over several chunks.
async fn one_sstable(dir: &Path) -> (Storage, StorageConfig) {
    let config = config(dir);
    let storage = open_quiet(&config);
    for n in 0..PARTITIONS {
        let value = format!("{n:0>200}");
        storage.apply(upsert(n, 0, 1, &value)).await.expect("apply");
    }
    storage.flush(TABLE).expect("flush");
    (storage, config)
}

fn component(config: &StorageConfig, suffix: &str) -> PathBuf {
    let files = table_files(config);
    let found = files.iter().find(|p| p.to_string_lossy().ends_with(suffix));
    found.expect("component").clone()
}

/// Flips a byte halfway through `file`.
fn flip_middle(file: &Path) {
    let mut bytes = fs::read(file).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    fs::write(file, bytes).expect("write");
}

const BASIC: VerifyOptions = VerifyOptions {
    extended: false,
    apply_policy: false,
};
const EXTENDED: VerifyOptions = VerifyOptions {
    extended: true,
    apply_policy: false,
};

fn corrupt_files(storage: &Storage, options: VerifyOptions) -> Vec<(PathBuf, Vec<String>)> {
    let report = storage.verify(TABLE, options).expect("verify");
    assert_eq!(report.sstables, 1);
    report
        .corrupt
        .into_iter()
        .map(|c| (c.data_file, c.problems))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_passes_intact_sstables_and_names_a_corrupt_chunk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (storage, config) = one_sstable(dir.path()).await;
    assert!(corrupt_files(&storage, BASIC).is_empty());
    assert!(corrupt_files(&storage, EXTENDED).is_empty());
    let data = component(&config, "-Data.db");
    flip_middle(&data);
    for options in [BASIC, EXTENDED] {
        let corrupt = corrupt_files(&storage, options);
        let [(file, problems)] = &corrupt[..] else {
            panic!("one corrupt SSTable: {corrupt:?}");
        };
        assert_eq!(*file, data);
        assert!(
            problems.iter().any(|p| p.contains("checksum mismatch")),
            "{problems:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_finds_a_corrupt_index_block_that_scrub_rebuilds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (storage, config) = one_sstable(dir.path()).await;
    flip_middle(&component(&config, "-Index.db"));
    let corrupt = corrupt_files(&storage, BASIC);
    assert!(
        corrupt[0].1.iter().any(|p| p.contains("Index.db")),
        "{corrupt:?}"
    );
    let report = storage.scrub(TABLE).expect("scrub");
    assert_eq!(
        (report.partitions, report.dropped.partitions),
        (PARTITIONS, 0)
    );
    assert!(corrupt_files(&storage, EXTENDED).is_empty());
    assert_eq!(contents(&storage).len(), PARTITIONS as usize);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scrub_drops_only_the_partitions_of_a_corrupt_chunk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (storage, config) = one_sstable(dir.path()).await;
    let intact = storage.scrub(TABLE).expect("scrub of an intact table");
    assert_eq!(
        (
            intact.sstables,
            intact.partitions,
            intact.dropped.partitions
        ),
        (1, PARTITIONS, 0)
    );
    flip_middle(&component(&config, "-Data.db"));
    let scan = storage.scan(
        TABLE,
        &mutation::KeyRange::all(),
        &ReadFilter::all(),
        1,
        1000,
    );
    assert!(scan.is_err(), "the corrupt chunk fails a full scan");
    let report = storage.scrub(TABLE).expect("scrub");
    let dropped = report.dropped.partitions;
    assert!(dropped > 0 && dropped < PARTITIONS / 4, "{report:?}");
    assert_eq!(report.partitions + dropped, PARTITIONS);
    assert!(
        report.dropped.problems[0].contains("checksum mismatch"),
        "{report:?}"
    );
    let left = contents(&storage);
    assert_eq!(
        left.len() as u64,
        report.partitions,
        "everything kept reads"
    );
    let kept_after_the_damage = left.keys().filter(|(n, _)| *n >= PARTITIONS / 2).count();
    assert!(
        kept_after_the_damage > 0,
        "partitions past the damage were recovered"
    );
    assert!(corrupt_files(&storage, EXTENDED).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_scrub_shows_among_the_compactions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (storage, _config) = one_sstable(dir.path()).await;
    let storage = Arc::new(storage);
    storage.set_compaction_throughput(20_000);
    let scrubbing = {
        let storage = storage.clone();
        tokio::task::spawn_blocking(move || storage.scrub(TABLE))
    };
    let mut seen = false;
    for _ in 0..200 {
        if let Some(running) = storage.compactions().first() {
            assert_eq!(running.kind, TaskKind::Scrub);
            assert!(running.bytes_total > 0);
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    storage.set_compaction_throughput(0);
    let report = scrubbing.await.expect("task").expect("scrub");
    assert!(seen, "the scrub was listed while it ran");
    assert_eq!(report.partitions, PARTITIONS);
}
