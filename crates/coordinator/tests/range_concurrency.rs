//! A range scan asks several stretches of the ring at once (Cassandra's concurrency factor) and
//! still answers exactly the first partitions in token order, up to its limit.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::ops::*;
use common::*;
use coordinator::ReadPolicy;
use mutation::{KeyRange, PartitionKey, ReadFilter, ReadStats};
use net::{handler_fn, Verb};
use types::Consistency;

/// One replica per key: every node owns its own stretches of the ring.
const KEYS: u64 = 90;

#[test]
fn stretches_are_asked_concurrently_in_token_order_up_to_the_limit() {
    simulate(21, async {
        let cluster = Cluster::start(3, 21).await;
        let coordinator = &cluster.node(0).coordinator;
        for key in 0..KEYS {
            let write =
                coordinator.write(RF1_KEYSPACE, vec![mutation(key, 1)], Consistency::One, None);
            write.await.expect("the write succeeds");
        }
        let in_flight = watch_range_reads(&cluster);
        let mut expected: Vec<PartitionKey> = (0..KEYS).map(key_bytes).collect();
        expected.sort();
        for limit in [1, 7, 30, 1000] {
            let found = scan(&cluster, limit).await;
            let wanted = &expected[..expected.len().min(limit)];
            assert_eq!(found, wanted, "limit {limit}");
        }
        assert!(
            in_flight.most.load(Ordering::Relaxed) >= 2,
            "stretches were asked one after another"
        );
    });
}

/// The keys a scan of the whole ring from node 0 at ONE returns.
async fn scan(cluster: &Cluster, limit: usize) -> Vec<PartitionKey> {
    let mut stats = ReadStats::default();
    let policy = ReadPolicy::default();
    let scope = scope(RF1_KEYSPACE, Consistency::One, &policy);
    let (range, filter) = (KeyRange::all(), ReadFilter::all());
    let partitions = cluster
        .node(0)
        .coordinator
        .scan(&scope, &range, &filter, limit, &mut stats)
        .await
        .expect("the scan succeeds");
    partitions.into_iter().map(|p| p.key).collect()
}

/// Range reads being answered now, and the most at once.
#[derive(Default)]
struct InFlight {
    now: AtomicUsize,
    most: AtomicUsize,
}

/// Every node answers range reads as before, 20 ms later, counted while they are answered.
fn watch_range_reads(cluster: &Cluster) -> Arc<InFlight> {
    let in_flight = Arc::new(InFlight::default());
    for node in 0..cluster.len() {
        let messaging = &cluster.node(node).messaging;
        let inner = messaging
            .handler(Verb::RangeRead)
            .expect("range reads are handled");
        let counts = in_flight.clone();
        let watched = handler_fn(move |from, payload: Bytes| {
            let (inner, counts) = (inner.clone(), counts.clone());
            async move {
                let now = counts.now.fetch_add(1, Ordering::Relaxed) + 1;
                counts.most.fetch_max(now, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
                let answer = inner.handle(from, payload).await;
                counts.now.fetch_sub(1, Ordering::Relaxed);
                answer
            }
        });
        messaging.register(Verb::RangeRead, watched);
    }
    in_flight
}
