//! Connection classes and back-pressure between real nodes on loopback TCP.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::*;
use net::{handler_fn, Class, NetConfig, NetError, Tuning, Verb, LARGE_MESSAGE_BYTES};
use tokio::time::Instant;

const SECOND: Duration = Duration::from_secs(1);
const MIB: usize = 1 << 20;

/// A stream of 1 MiB messages is stuck behind a receiver that stopped reading (its handler
/// holds the inbound budget), so many MiB sit in socket buffers and in the large queue; urgent
/// pings on the same pair of nodes keep answering within a bound all the while.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urgent_pings_answer_while_large_messages_are_stuck_in_flight() {
    let a = start(
        NetConfig {
            send_queue_bytes: 64 * MIB,
            ..config(CLUSTER, 1)
        },
        tuning(),
    )
    .await;
    let b = start(
        config(CLUSTER, 2),
        Tuning {
            inbound_bytes: MIB,
            ..tuning()
        },
    )
    .await;
    let gated = Gated::new();
    b.register(Verb::Mutation, gated.handler());
    let large: Vec<_> = (0..24)
        .map(|_| {
            let (a, to) = (a.clone(), b.local());
            tokio::spawn(async move {
                let payload = Bytes::from(vec![7u8; MIB]);
                a.request(to, Verb::Mutation, payload, 60 * SECOND).await
            })
        })
        .collect();
    let stuck = || {
        let link = a.stats().link(b.local(), Class::Large).cloned();
        link.is_some_and(|l| l.pending_bytes >= 4 * MIB as u64)
    };
    eventually(10 * SECOND, "large messages to back up", stuck).await;
    let mut slowest = Duration::ZERO;
    for _ in 0..50 {
        let started = Instant::now();
        let answer = a
            .request(b.local(), Verb::Echo, Bytes::new(), 5 * SECOND)
            .await;
        assert!(answer.is_ok_and(|clock| net::wall_clock_of(&clock).is_some()));
        slowest = slowest.max(started.elapsed());
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert!(
        slowest < Duration::from_millis(500),
        "slowest ping {slowest:?}"
    );
    assert!(
        stuck(),
        "the large stream was still in flight after the pings"
    );
    assert!(gated.calls() < 24);
    gated.open(24);
    for request in large {
        let answer = request.await.unwrap();
        assert_eq!(answer, Ok(Bytes::from(MIB.to_be_bytes().to_vec())));
    }
}

#[tokio::test]
async fn a_full_send_queue_fails_fast_with_overloaded() {
    let a = start(
        NetConfig {
            send_queue_bytes: 64 * 1024,
            ..config(CLUSTER, 1)
        },
        tuning(),
    )
    .await;
    let b = node(2).await;
    let delivered = Arc::new(AtomicUsize::new(0));
    let counted = delivered.clone();
    b.register(
        Verb::Hint,
        handler_fn(move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok(Bytes::new()) }
        }),
    );
    // A burst with no await in between: the connection task cannot drain the queue meanwhile.
    let payload = Bytes::from(vec![1u8; 16 * 1024]);
    let results: Vec<_> = (0..10)
        .map(|_| a.send(b.local(), Verb::Hint, payload.clone()))
        .collect();
    let accepted = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(accepted, 3, "{results:?}");
    assert!(results[3..].iter().all(|r| *r == Err(NetError::Overloaded)));
    let request = a
        .request(b.local(), Verb::Hint, payload.clone(), SECOND)
        .await;
    assert_eq!(request, Err(NetError::Overloaded));
    let stats = a.stats();
    assert_eq!(stats.link(b.local(), Class::Small).unwrap().overloaded, 8);
    assert_eq!(stats.verb(Verb::Hint).failures, 8);
    // What was accepted is delivered, and the drained queue takes messages again; a single
    // message larger than the whole queue still goes when the queue is empty.
    eventually(5 * SECOND, "the accepted messages", || {
        delivered.load(Ordering::SeqCst) == 3
    })
    .await;
    let over_queue = Bytes::from(vec![2u8; 100 * 1024]);
    assert_eq!(
        a.request(b.local(), Verb::Hint, over_queue, SECOND).await,
        Ok(Bytes::new())
    );
}

/// Requests of 60 KiB against an inbound budget of 256 KiB: at most four are read and being
/// handled at once; the rest wait unread until answers free budget.
#[tokio::test]
async fn the_inbound_budget_bounds_the_bytes_being_processed() {
    let a = node(1).await;
    let b = start(
        config(CLUSTER, 2),
        Tuning {
            inbound_bytes: 256 * 1024,
            ..tuning()
        },
    )
    .await;
    let gated = Gated::new();
    b.register(Verb::Mutation, gated.handler());
    let size = 60 * 1024;
    assert!(size <= LARGE_MESSAGE_BYTES, "all on the small connection");
    let requests: Vec<_> = (0..20)
        .map(|_| {
            let (a, to) = (a.clone(), b.local());
            tokio::spawn(async move {
                let payload = Bytes::from(vec![3u8; size]);
                a.request(to, Verb::Mutation, payload, 30 * SECOND).await
            })
        })
        .collect();
    eventually(5 * SECOND, "four requests in handlers", || {
        gated.calls() == 4
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(gated.calls(), 4, "a fifth would exceed the budget");
    gated.open(20);
    for request in requests {
        assert!(request.await.unwrap().is_ok());
    }
    assert_eq!(gated.calls(), 20);
}
