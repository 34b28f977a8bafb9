//! Delivery through an in-memory `Deliver`, in paused time: order, throttle, resumption after a
//! failure, file deletion, pause/resume, liveness, expiry, and the operators' switches.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
mod common;

use std::time::Duration;

use common::*;
use hints::{HintsConfig, DISPATCH_INTERVAL};
use tokio::time::Instant;

const LIMIT: Duration = Duration::from_secs(120);

#[tokio::test(start_paused = true)]
async fn hints_are_delivered_in_order_when_the_host_comes_alive_and_files_are_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.store(host(1), "a", 300, 100);
    h.store(host(2), "b", 5, 100);
    h.service.flush().await.unwrap();
    assert_eq!(files(dir.path()).len(), 2);
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || h.recorder.keys().len() == 300).await;
    assert_eq!(h.recorder.keys(), keys("a", 0..300));
    assert!(h.recorder.received().iter().all(|r| r.addr == addr(1)));
    until(LIMIT, || files(dir.path()).len() == 1).await;
    assert!(files(dir.path())[0].starts_with(&host(2).to_string()));
    let pending = h.service.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!((pending[0].host_id, pending[0].files), (host(2), 1));
    let metrics = h.service.metrics();
    assert_eq!((metrics.written, metrics.dispatched), (305, 300));
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn hints_stored_while_the_host_is_alive_go_at_the_next_trigger() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.service.host_alive(host(1), addr(1));
    h.store(host(1), "k", 3, 10);
    let start = Instant::now();
    until(LIMIT, || h.recorder.keys().len() == 3).await;
    assert!(start.elapsed() <= DISPATCH_INTERVAL + Duration::from_secs(1));
    until(LIMIT, || files(dir.path()).is_empty()).await;
    assert!(h.service.pending().is_empty());
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn delivery_is_throttled_within_ten_percent() {
    let dir = tempfile::tempdir().unwrap();
    let config = HintsConfig {
        hinted_handoff_throttle: 20 * 1024,
        ..config(dir.path())
    };
    let h = open(config).await;
    h.store(host(1), "k", 200, 1000);
    let start = Instant::now();
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || h.recorder.keys().len() == 200).await;
    let received = h.recorder.received();
    let bytes: usize = received.iter().map(|r| r.bytes).sum();
    let expected = bytes as f64 / (20.0 * 1024.0);
    let took = (received[199].at - start).as_secs_f64();
    assert!(
        (took - expected).abs() <= expected * 0.1,
        "took {took:.2}s for {bytes} bytes, expected {expected:.2}s"
    );
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_failed_hint_is_resent_first_and_those_before_it_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.store(host(1), "k", 10, 10);
    h.recorder.refuse("k5");
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || h.service.metrics().failed == 1).await;
    until(LIMIT, || h.recorder.calls() == 10).await;
    let mut first = keys("k", 0..5);
    first.extend(keys("k", 6..10));
    assert_eq!(
        h.recorder.keys(),
        first,
        "the others were sent in the same window"
    );
    assert_eq!(
        files(dir.path()).len(),
        1,
        "the file stays until every hint is acknowledged"
    );
    h.recorder.accept_all();
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || h.recorder.keys().len() == 14).await;
    assert_eq!(h.recorder.keys()[9..], keys("k", 5..10));
    until(LIMIT, || files(dir.path()).is_empty()).await;
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_failure_is_retried_at_the_next_trigger() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.store(host(1), "k", 3, 10);
    h.recorder.refuse("k0");
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || h.service.metrics().failed >= 1).await;
    assert_eq!(h.recorder.keys(), keys("k", 1..3));
    h.recorder.accept_all();
    until(LIMIT, || h.recorder.keys().len() == 5).await;
    assert_eq!(
        h.recorder.keys()[2..],
        keys("k", 0..3),
        "from the failed hint on"
    );
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn paused_or_down_hosts_get_nothing_until_resumed_or_alive() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.store(host(1), "k", 3, 10);
    h.service.pause_delivery();
    assert!(h.service.status().paused);
    h.service.host_alive(host(1), addr(1));
    tokio::time::sleep(DISPATCH_INTERVAL * 3).await;
    assert_eq!(h.recorder.calls(), 0);
    h.service.host_down(host(1));
    h.service.resume_delivery();
    tokio::time::sleep(DISPATCH_INTERVAL * 3).await;
    assert_eq!(h.recorder.calls(), 0, "the host is down");
    h.service.host_alive(host(1), addr(2));
    until(LIMIT, || h.recorder.keys().len() == 3).await;
    assert!(h.recorder.received().iter().all(|r| r.addr == addr(2)));
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn expired_hints_and_hints_of_dropped_tables_are_not_sent() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    let other = mutation::TableId(uuid::Uuid::from_u128(2));
    h.tables.set(TABLE, Some(60));
    h.tables.set(other, Some(GC_GRACE));
    h.store(host(1), "old", 2, 10);
    let mut dropped = common::mutation("dropped", 10);
    dropped.table = other;
    h.service.store(host(1), &dropped).unwrap();
    tokio::time::sleep(Duration::from_secs(61)).await;
    h.tables.set(other, None);
    h.store(host(1), "new", 1, 10);
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || files(dir.path()).is_empty()).await;
    assert_eq!(h.recorder.keys(), vec!["new0".to_string()]);
    assert_eq!(h.service.metrics().expired, 3);
    assert_eq!(
        h.service.store(host(1), &dropped),
        Err(hints::StoreError::UnknownTable(other))
    );
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn disabled_handoff_stores_nothing_new_but_still_delivers() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.store(host(1), "k", 2, 10);
    h.service.disable();
    assert!(!h.service.status().enabled);
    assert!(!h.service.should_hint(host(1), "dc1"));
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || h.recorder.keys().len() == 2).await;
    h.service.enable();
    assert!(h.service.should_hint(host(1), "dc1"));
    h.service.disable_for_dc("dc1");
    assert!(!h.service.should_hint(host(1), "dc1"));
    assert!(h.service.should_hint(host(1), "dc2"));
    assert_eq!(h.service.status().disabled_datacenters, vec!["dc1"]);
    h.service.enable_for_dc("dc1");
    assert!(h.service.should_hint(host(1), "dc1"));
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_hint_window_counts_from_when_the_host_went_down_and_from_the_oldest_file() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    let window = Duration::from_secs(3 * 3600);
    h.service.host_down(host(1));
    tokio::time::sleep(window).await;
    h.service.host_down(host(1));
    assert!(h.service.should_hint(host(1), "dc1"), "down for the window");
    h.store(host(1), "k", 1, 10);
    h.service.flush().await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !h.service.should_hint(host(1), "dc1"),
        "down longer than the window, counted from the first report"
    );
    h.service.host_alive(host(1), addr(1));
    assert!(h.service.should_hint(host(1), "dc1"), "up again");
    h.store(host(2), "k", 1, 10);
    h.service.flush().await.unwrap();
    tokio::time::sleep(window + Duration::from_secs(1)).await;
    assert!(
        !h.service.should_hint(host(2), "dc1"),
        "its oldest file is older than the window"
    );
    assert_eq!(h.service.metrics().not_stored, 2);
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_host_over_its_size_limit_gets_no_hints_until_delivered() {
    let dir = tempfile::tempdir().unwrap();
    let config = HintsConfig {
        max_hints_size_per_host: 2000,
        ..config(dir.path())
    };
    let h = open(config).await;
    h.store(host(1), "k", 10, 50);
    assert!(h.pending_bytes(host(1)) < 2000);
    assert!(h.service.should_hint(host(1), "dc1"));
    h.store(host(1), "m", 10, 50);
    assert!(h.pending_bytes(host(1)) > 2000, "buffered hints count");
    assert!(!h.service.should_hint(host(1), "dc1"));
    h.service.flush().await.unwrap();
    assert!(!h.service.should_hint(host(1), "dc1"), "so do written ones");
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || files(dir.path()).is_empty()).await;
    assert!(h.service.should_hint(host(1), "dc1"));
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn files_rotate_at_the_maximum_size_and_are_delivered_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let config = HintsConfig {
        max_hints_file_size: 1000,
        ..config(dir.path())
    };
    let h = open(config).await;
    h.store(host(1), "k", 20, 200);
    h.service.flush().await.unwrap();
    let names = files(dir.path());
    assert!(names.len() >= 5, "{names:?}");
    for name in &names {
        let size = std::fs::metadata(dir.path().join(name)).unwrap().len();
        assert!(size <= 1000, "{name}: {size} bytes");
    }
    assert_eq!(h.service.pending()[0].files, names.len());
    h.service.host_alive(host(1), addr(1));
    until(LIMIT, || files(dir.path()).is_empty()).await;
    assert_eq!(h.recorder.keys(), keys("k", 0..20));
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn flush_period_writes_buffered_hints() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.store(host(1), "k", 2, 10);
    assert_eq!(h.service.metrics().in_progress, 2);
    assert!(files(dir.path()).is_empty());
    tokio::time::sleep(Duration::from_secs(11)).await;
    until(LIMIT, || h.service.metrics().in_progress == 0).await;
    assert_eq!(files(dir.path()).len(), 1);
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn truncate_and_delete_for_remove_hints() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    for n in 1..=3 {
        h.store(host(n), "k", 2, 10);
    }
    h.service.flush().await.unwrap();
    h.store(host(1), "buffered", 1, 10);
    h.service.truncate(Some(host(1))).await.unwrap();
    assert_eq!(files(dir.path()).len(), 2);
    let hosts: Vec<_> = h.service.pending().iter().map(|p| p.host_id).collect();
    assert_eq!(hosts, vec![host(2), host(3)]);
    h.service.host_alive(host(2), addr(2));
    h.service.delete_for(host(2)).await.unwrap();
    h.service.truncate(None).await.unwrap();
    assert!(files(dir.path()).is_empty());
    assert!(h.service.pending().is_empty());
    h.service.host_alive(host(1), addr(1));
    tokio::time::sleep(DISPATCH_INTERVAL * 2).await;
    assert!(
        h.recorder.keys().iter().all(|k| k.starts_with('k')),
        "{:?}",
        h.recorder.keys()
    );
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn pending_lists_files_times_and_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.store(host(1), "k", 1, 10);
    h.service.flush().await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    h.store(host(1), "k", 1, 10);
    h.service.host_alive(host(2), addr(2));
    h.store(host(2), "b", 1, 10);
    let pending = h.service.pending();
    assert_eq!(pending.len(), 2);
    let one = &pending[0];
    assert_eq!((one.host_id, one.address, one.files), (host(1), None, 1));
    assert_eq!(one.newest_ms - one.oldest_ms, 5000);
    let on_disk = std::fs::metadata(dir.path().join(&files(dir.path())[0]))
        .unwrap()
        .len();
    assert!(one.total_bytes > on_disk, "written plus buffered");
    assert_eq!(pending[1].address, Some(addr(2)));
    let metrics = h.service.metrics();
    assert_eq!(metrics.bytes_on_disk[&host(1)], one.total_bytes);
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn at_most_the_configured_hosts_are_delivered_to_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = HintsConfig {
        max_hints_delivery_threads: 1,
        hinted_handoff_throttle: 1024,
        ..config(dir.path())
    };
    let h = open(config).await;
    h.store(host(1), "a", 3, 500);
    h.store(host(2), "b", 3, 500);
    h.service.host_alive(host(1), addr(1));
    h.service.host_alive(host(2), addr(2));
    until(LIMIT, || h.recorder.keys().len() == 6).await;
    let order: Vec<char> = h
        .recorder
        .keys()
        .iter()
        .map(|k| k.chars().next().unwrap())
        .collect();
    assert!(
        order == ['a', 'a', 'a', 'b', 'b', 'b'] || order == ['b', 'b', 'b', 'a', 'a', 'a'],
        "one host after the other: {order:?}"
    );
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn shutdown_writes_everything_and_refuses_more() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    h.store(host(1), "k", 4, 10);
    h.service.shutdown().await.unwrap();
    assert_eq!(files(dir.path()).len(), 1);
    assert_eq!(
        h.service.store(host(1), &mutation("x", 1)),
        Err(hints::StoreError::ShutDown)
    );
}

#[tokio::test(start_paused = true)]
async fn at_most_128_hints_or_4_mib_await_their_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (recorder, gate) = Recorder::gated();
    let h = open_with(config(dir.path()), recorder, Tables::new()).await;
    h.store(host(1), "small", 200, 10);
    h.store(host(2), "large", 6, 1024 * 1024);
    h.service.host_alive(host(1), addr(1));
    h.service.host_alive(host(2), addr(2));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(h.recorder.calls(), 128 + 3, "128 small hints, 3 of 1 MiB");
    gate.add_permits(1000);
    until(LIMIT, || files(dir.path()).is_empty()).await;
    assert_eq!(h.recorder.keys().len(), 206);
    h.service.shutdown().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn store_refuses_hints_while_128_mib_wait_to_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(config(dir.path())).await;
    let large = mutation("large", 4 * 1024 * 1024);
    let mut stored = 0;
    while h.service.store(host(1), &large).is_ok() {
        stored += 1;
    }
    assert_eq!(stored, 32, "32 hints of 4 MiB fill the buffers");
    assert_eq!(
        h.service.store(host(1), &large),
        Err(hints::StoreError::Overloaded)
    );
    assert_eq!(h.service.metrics().not_stored, 2);
    h.service.truncate(None).await.unwrap();
    h.service.store(host(1), &large).unwrap();
    h.service.truncate(None).await.unwrap();
    h.service.shutdown().await.unwrap();
}
