//! Requests, one-way messages, errors and failures between real nodes on loopback TCP.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use clock::Clock;
use common::*;
use net::{handler_fn, Class, NetError, RemoteError, Verb};
use tokio::sync::mpsc;

const SECOND: Duration = Duration::from_secs(1);

#[tokio::test]
async fn request_gets_its_answer_and_both_sides_learn_host_ids() {
    let (a, b) = (node(1).await, node(2).await);
    let seen = Arc::new(parking_lot::Mutex::new(None));
    let seen_by_b = seen.clone();
    b.register(
        Verb::Read,
        handler_fn(move |from, payload: Bytes| {
            *seen_by_b.lock() = Some(from);
            async move { Ok(Bytes::from([&b"re: "[..], &payload].concat())) }
        }),
    );
    let answer = a
        .request(b.local(), Verb::Read, Bytes::from("key"), SECOND)
        .await;
    assert_eq!(answer.unwrap(), Bytes::from("re: key"));
    let from = seen.lock().expect("handler ran");
    assert_eq!((from.addr, from.host_id), (a.local(), a.host_id()));
    assert_eq!(a.host_id_of(b.local()), Some(b.host_id()));
    assert_eq!(b.host_id_of(a.local()), Some(a.host_id()));
    let link = a.stats().link(b.local(), Class::Small).cloned().unwrap();
    assert!(
        link.connected && link.sent_messages == 1 && link.pending_messages == 0,
        "{link:?}"
    );
    assert_eq!(b.stats().verb(Verb::Read).completed, 1);
    let inbound = b.stats().link(a.local(), Class::Small).cloned().unwrap();
    assert_eq!(inbound.inbound_connections, 1);
}

#[tokio::test]
async fn many_concurrent_requests_each_get_their_own_answer() {
    let (a, b) = (node(1).await, node(2).await);
    b.register(Verb::Mutation, echo_payload());
    let requests = (0..200u32).map(|i| {
        let a = a.clone();
        let to = b.local();
        async move {
            let payload = Bytes::from(i.to_be_bytes().to_vec());
            (i, a.request(to, Verb::Mutation, payload, 5 * SECOND).await)
        }
    });
    for (i, answer) in join_all(requests).await {
        assert_eq!(answer.unwrap(), Bytes::from(i.to_be_bytes().to_vec()));
    }
}

async fn join_all<F: std::future::Future + Send + 'static>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}

#[tokio::test]
async fn one_way_messages_reach_their_handler_in_order() {
    let (a, b) = (node(1).await, node(2).await);
    let (tx, mut rx) = mpsc::unbounded_channel();
    b.register(
        Verb::Gossip,
        handler_fn(move |from, payload| {
            tx.send((from.addr, payload)).unwrap();
            async { Ok(Bytes::new()) }
        }),
    );
    for i in 0..10u8 {
        a.send(b.local(), Verb::Gossip, Bytes::from(vec![i]))
            .unwrap();
    }
    for i in 0..10u8 {
        let (from, payload) = tokio::time::timeout(SECOND, rx.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!((from, payload), (a.local(), Bytes::from(vec![i])));
    }
    assert!(a.stats().link(b.local(), Class::Urgent).unwrap().connected);
}

#[tokio::test]
async fn echo_is_answered_without_registering_anything() {
    let (a, b) = (node(1).await, node(2).await);
    // Echo answers with the peer's wall clock (clock-skew checks)
    let answer = a.request(b.local(), Verb::Echo, Bytes::new(), SECOND).await;
    let clock = net::wall_clock_of(&answer.unwrap()).expect("a wall clock");
    assert!((clock - clock::SystemClock.now_millis()).abs() < 60_000);
    let endless = a
        .request(b.local(), Verb::Echo, Bytes::new(), Duration::MAX)
        .await;
    assert!(
        endless.is_ok_and(|a| net::wall_clock_of(&a).is_some()),
        "a timeout past the clock's range waits"
    );
}

#[tokio::test]
async fn a_slow_handler_times_the_request_out() {
    let (a, b) = (node(1).await, node(2).await);
    let gated = Gated::new();
    b.register(Verb::Read, gated.handler());
    let started = tokio::time::Instant::now();
    let answer = a
        .request(
            b.local(),
            Verb::Read,
            Bytes::new(),
            Duration::from_millis(200),
        )
        .await;
    assert_eq!(answer, Err(NetError::Timeout));
    assert!(started.elapsed() < SECOND, "{:?}", started.elapsed());
    assert_eq!(a.stats().verb(Verb::Read).timeouts, 1);
    // The late answer is ignored and the connection keeps working.
    gated.open(2);
    let answer = a
        .request(b.local(), Verb::Read, Bytes::from("x"), SECOND)
        .await;
    assert_eq!(answer.unwrap(), Bytes::from(1usize.to_be_bytes().to_vec()));
}

#[tokio::test]
async fn work_that_expired_before_it_started_is_dropped_not_run() {
    let a = node(1).await;
    // One request at a time on each of b's connections.
    let b = start(
        config(CLUSTER, 2),
        net::Tuning {
            inbound_bytes: 1,
            ..tuning()
        },
    )
    .await;
    let (gated, first) = request_held_by(&a, &b).await;
    let second = a
        .request(
            b.local(),
            Verb::Read,
            Bytes::new(),
            Duration::from_millis(100),
        )
        .await;
    assert_eq!(second, Err(NetError::Timeout));
    gated.open(1);
    assert!(first.await.unwrap().is_ok());
    eventually(SECOND, "the expired request to be dropped", || {
        b.stats().verb(Verb::Read).dropped == 1
    })
    .await;
    assert_eq!(gated.calls(), 1, "the expired request must not run");
    assert_eq!(b.stats().verb(Verb::Read).completed, 1);
}

#[tokio::test]
async fn handler_errors_and_missing_handlers_come_back_as_remote_errors() {
    let (a, b) = (node(1).await, node(2).await);
    b.register(
        Verb::Mutation,
        handler_fn(|_, _| async { Err(RemoteError::new(0x1100, "write timeout")) }),
    );
    let answer = a
        .request(b.local(), Verb::Mutation, Bytes::new(), SECOND)
        .await;
    assert_eq!(
        answer,
        Err(NetError::Remote(RemoteError::new(0x1100, "write timeout")))
    );
    let answer = a
        .request(b.local(), Verb::Truncate, Bytes::new(), SECOND)
        .await;
    match answer {
        Err(NetError::Remote(e)) => {
            assert_eq!(e.code, RemoteError::SERVER_ERROR);
            assert!(e.message.contains("no handler"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    let stats = a.stats();
    assert_eq!(stats.verb(Verb::Mutation).failures, 1);
    assert_eq!(stats.verb(Verb::Truncate).failures, 1);
}

/// A second node listening on `addr` that echoes Read payloads.
async fn echo_at(addr: std::net::SocketAddr) -> Arc<net::Messaging> {
    let b = start(
        net::NetConfig {
            listen: addr,
            ..config(CLUSTER, 2)
        },
        tuning(),
    )
    .await;
    b.register(Verb::Read, echo_payload());
    b
}

#[tokio::test]
async fn an_unreachable_peer_fails_fast_and_is_reconnected_once_it_listens() {
    let a = node(1).await;
    let addr = free_addr();
    let answer = a.request(addr, Verb::Read, Bytes::new(), 5 * SECOND).await;
    assert!(
        matches!(answer, Err(NetError::Unreachable(_))),
        "{answer:?}"
    );
    assert!(matches!(
        a.send(addr, Verb::Read, Bytes::new()),
        Ok(()) | Err(NetError::Unreachable(_))
    ));
    let b = echo_at(addr).await;
    let deadline = tokio::time::Instant::now() + 5 * SECOND;
    loop {
        match a.request(addr, Verb::Read, Bytes::from("up"), SECOND).await {
            Ok(answer) => break assert_eq!(answer, Bytes::from("up")),
            Err(NetError::Unreachable(_)) => {}
            Err(other) => panic!("{other:?}"),
        }
        assert!(tokio::time::Instant::now() < deadline, "never reconnected");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(a.host_id_of(addr), Some(b.host_id()));
}

#[tokio::test]
async fn a_peer_seen_up_again_is_reconnected_before_the_backoff_ends() {
    let long_backoff = net::Tuning {
        reconnect_min: Duration::from_secs(60),
        reconnect_max: Duration::from_secs(60),
        ..tuning()
    };
    let a = start(config(CLUSTER, 1), long_backoff).await;
    let addr = free_addr();
    let answer = a.request(addr, Verb::Read, Bytes::new(), 5 * SECOND).await;
    assert!(
        matches!(answer, Err(NetError::Unreachable(_))),
        "{answer:?}"
    );
    let _peer = echo_at(addr).await;
    // The peer listens again, but the link still backs off: requests fail at once.
    let answer = a.request(addr, Verb::Read, Bytes::from("up"), SECOND).await;
    assert!(
        matches!(answer, Err(NetError::Unreachable(_))),
        "{answer:?}"
    );
    a.peer_up(addr.ip());
    let answer = a
        .request(addr, Verb::Read, Bytes::from("up"), 5 * SECOND)
        .await;
    assert_eq!(answer.ok(), Some(Bytes::from("up")));
}

#[tokio::test]
async fn messages_queued_for_a_silent_peer_fail_unreachable_within_the_connect_timeout() {
    // Accepts TCP connections but never answers the handshake.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    let a = start(
        net::NetConfig {
            connect_timeout: Duration::from_millis(300),
            ..config(CLUSTER, 1)
        },
        tuning(),
    )
    .await;
    let started = tokio::time::Instant::now();
    let answer = a.request(addr, Verb::Read, Bytes::new(), 30 * SECOND).await;
    assert!(
        matches!(&answer, Err(NetError::Unreachable(m)) if m.contains("timed out")),
        "{answer:?}"
    );
    assert!(started.elapsed() < 5 * SECOND, "{:?}", started.elapsed());
    held.abort();
}

#[tokio::test]
async fn a_node_of_another_cluster_is_rejected_with_both_names() {
    let a = node(1).await;
    let b = start(config("Other Cluster", 2), tuning()).await;
    b.register(Verb::Read, echo_payload());
    let answer = a.request(b.local(), Verb::Read, Bytes::new(), SECOND).await;
    match answer {
        Err(NetError::Rejected(why)) => {
            assert!(
                why.contains("'Test Cluster'") && why.contains("'Other Cluster'"),
                "{why}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(b.stats().verb(Verb::Read).completed, 0);
    assert_eq!(
        b.host_id_of(a.local()),
        None,
        "a refused peer is not learnt"
    );
    // While backing off, sends fail fast with the same refusal.
    let again = a.send(b.local(), Verb::Read, Bytes::new());
    assert!(matches!(again, Err(NetError::Rejected(_))), "{again:?}");
}

#[tokio::test]
async fn a_peer_shutting_down_fails_requests_in_flight_with_unreachable() {
    let (a, b) = (node(1).await, node(2).await);
    let (_gated, pending) = request_held_by(&a, &b).await;
    b.shutdown().await;
    let answer = tokio::time::timeout(5 * SECOND, pending)
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(&answer, Err(NetError::Unreachable(m)) if m.contains("lost")),
        "{answer:?}"
    );
}

#[tokio::test]
async fn shutdown_fails_pending_requests_and_everything_after() {
    let (a, b) = (node(1).await, node(2).await);
    let (_gated, pending) = request_held_by(&a, &b).await;
    a.shutdown().await;
    assert_eq!(pending.await.unwrap(), Err(NetError::Shutdown));
    assert_eq!(
        a.send(b.local(), Verb::Read, Bytes::new()),
        Err(NetError::Shutdown)
    );
    let later = a.request(b.local(), Verb::Echo, Bytes::new(), SECOND).await;
    assert_eq!(later, Err(NetError::Shutdown));
    assert!(!a.stats().link(b.local(), Class::Small).unwrap().connected);
    // Its listener is closed too.
    let c = node(3).await;
    let answer = c.request(a.local(), Verb::Echo, Bytes::new(), SECOND).await;
    assert!(
        matches!(answer, Err(NetError::Unreachable(_))),
        "{answer:?}"
    );
}

#[tokio::test]
async fn compressed_and_plain_nodes_exchange_large_and_small_payloads() {
    let compressed = |n| net::NetConfig {
        compression: true,
        ..config(CLUSTER, n)
    };
    let a = start(compressed(1), tuning()).await;
    let b = start(compressed(2), tuning()).await;
    let plain = node(3).await;
    let counted = Arc::new(AtomicUsize::new(0));
    for peer in [&b, &plain] {
        let counted = counted.clone();
        peer.register(
            Verb::Read,
            handler_fn(move |_, payload: Bytes| {
                counted.fetch_add(1, Ordering::SeqCst);
                async move { Ok(payload) }
            }),
        );
    }
    let large = Bytes::from(b"0123456789abcdef".repeat(20_000));
    for to in [b.local(), plain.local()] {
        for payload in [Bytes::from("small"), large.clone()] {
            let answer = a.request(to, Verb::Read, payload.clone(), 5 * SECOND).await;
            assert_eq!(answer.unwrap(), payload);
        }
    }
    let sent = a.stats().link(b.local(), Class::Large).unwrap().sent_bytes;
    assert!(
        sent >= large.len() as u64,
        "sent_bytes counts the uncompressed size: {sent}"
    );
    assert_eq!(counted.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn messages_over_the_size_limit_are_refused() {
    let limited = |n, max| net::NetConfig {
        max_message_bytes: max,
        ..config(CLUSTER, n)
    };
    let a = start(limited(1, 4 << 20), tuning()).await;
    let b = start(limited(2, 1 << 20), tuning()).await;
    b.register(Verb::Mutation, echo_payload());
    let too_big = Bytes::from(vec![0u8; (4 << 20) + 1]);
    let answer = a.request(b.local(), Verb::Mutation, too_big, SECOND).await;
    assert_eq!(
        answer,
        Err(NetError::TooLarge {
            size: (4 << 20) + 1,
            max: 4 << 20
        })
    );
    // Within a's limit but over b's: b refuses the frame before reading it and closes.
    let over_b = Bytes::from(vec![0u8; 2 << 20]);
    let answer = a
        .request(b.local(), Verb::Mutation, over_b, 5 * SECOND)
        .await;
    assert!(
        matches!(answer, Err(NetError::Unreachable(_))),
        "{answer:?}"
    );
    let answer = a
        .request(b.local(), Verb::Mutation, Bytes::from("fits"), 5 * SECOND)
        .await;
    assert_eq!(answer.unwrap(), Bytes::from("fits"));
}

#[tokio::test]
async fn start_refuses_a_wildcard_listen_address_and_an_overlong_cluster_name() {
    let network = Arc::new(net::TokioNetwork);
    let wildcard = net::NetConfig {
        listen: "0.0.0.0:0".parse().unwrap(),
        ..config(CLUSTER, 1)
    };
    let error = net::Messaging::start(wildcard, network.clone())
        .await
        .err()
        .unwrap();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    let long = config(&"c".repeat(5000), 1);
    let error = net::Messaging::start(long, network).await.err().unwrap();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
}
