//! Hints survive a restart of the service: written files are found again and delivered; a
//! crash loses only what was buffered since the last flush; damaged files are read up to the
//! damage, counted and logged.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
mod common;

use std::io::Write;
use std::time::Duration;

use common::*;
use hints::{Compression, HintsConfig};

const LIMIT: Duration = Duration::from_secs(120);

#[tokio::test(start_paused = true)]
async fn hints_written_before_a_restart_are_delivered_after_it() {
    for compression in [Compression::None, Compression::Lz4] {
        let dir = tempfile::tempdir().unwrap();
        let config = HintsConfig {
            hints_compression: compression,
            max_hints_file_size: 2000,
            ..config(dir.path())
        };
        let h = open(config.clone()).await;
        h.store(host(1), "a", 30, 100);
        h.store(host(2), "b", 3, 100);
        h.service.shutdown().await.unwrap();
        drop(h);
        assert!(files(dir.path()).len() > 2);

        let h = open(config).await;
        let pending = h.service.pending();
        assert_eq!(pending.len(), 2, "{compression:?}");
        h.store(host(1), "c", 2, 100);
        h.service.host_alive(host(1), addr(1));
        until(LIMIT, || h.recorder.keys().len() == 32).await;
        let mut expected = keys("a", 0..30);
        expected.extend(keys("c", 0..2));
        assert_eq!(h.recorder.keys(), expected, "{compression:?}");
        h.service.shutdown().await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn a_crash_loses_only_the_hints_buffered_since_the_last_flush() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.store(host(1), "flushed", 3, 10);
    h.service.flush().await.unwrap();
    h.store(host(1), "buffered", 3, 10);
    // No shutdown: the service is dropped as a crashed process would be.
    drop(h);

    let h = open(config(dir.path())).await;
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || files(dir.path()).is_empty()).await;
    assert_eq!(h.recorder.keys(), keys("flushed", 0..3));
    h.service.shutdown().await.unwrap();
}

/// Writes hints k0..k2 to one file, damages it, reopens: k0 and k1 are delivered, the damage
/// is counted, and the file is deleted after delivery.
async fn deliver_after_damage(damage: impl FnOnce(&mut Vec<u8>)) {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.store(host(1), "k", 3, 10);
    h.service.shutdown().await.unwrap();
    let path = dir.path().join(files(dir.path()).remove(0));
    let mut bytes = std::fs::read(&path).unwrap();
    damage(&mut bytes);
    std::fs::write(&path, &bytes).unwrap();

    let h = open(config(dir.path())).await;
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || files(dir.path()).is_empty()).await;
    assert_eq!(h.recorder.keys(), keys("k", 0..2));
    assert_eq!(h.service.metrics().corrupt, 1);
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_torn_tail_is_skipped_counted_and_the_file_deleted_after_delivery() {
    deliver_after_damage(|bytes| bytes.truncate(bytes.len() - 5)).await;
}

#[tokio::test(start_paused = true)]
async fn a_corrupt_record_is_skipped_and_the_rest_delivered() {
    deliver_after_damage(|bytes| {
        let in_last_payload = bytes.len() - 10;
        bytes[in_last_payload] ^= 0xff;
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn unreadable_and_foreign_files_are_left_alone_and_empty_ones_removed() {
    let dir = tempfile::tempdir().unwrap();
    let bad = format!("{}-5-1.hints", host(1));
    std::fs::write(dir.path().join(&bad), [7u8; 40]).unwrap();
    let empty = format!("{}-6-1.hints", host(1));
    std::fs::File::create(dir.path().join(&empty)).unwrap();
    let mut other = std::fs::File::create(dir.path().join("notes.txt")).unwrap();
    other.write_all(b"not hints").unwrap();

    let h = open(config(dir.path())).await;
    assert_eq!(h.service.metrics().corrupt, 1);
    assert!(h.service.pending().is_empty());
    assert_eq!(
        files(dir.path()),
        vec![bad.clone(), "notes.txt".to_string()]
    );
    h.store(host(1), "k", 1, 10);
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || h.recorder.keys().len() == 1).await;
    until(LIMIT, || files(dir.path()).len() == 2).await;
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_file_removed_by_hand_is_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.store(host(1), "k", 1, 10);
    h.service.flush().await.unwrap();
    std::fs::remove_file(dir.path().join(files(dir.path()).remove(0))).unwrap();
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || h.service.pending().is_empty()).await;
    assert_eq!(h.recorder.calls(), 0);
    h.service.shutdown().await.unwrap();
}
