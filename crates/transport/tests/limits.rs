//! Overload limits over TCP: request bytes reserved (a large body's declared length from its
//! header, its bytes as they arrive; back-pressure or Overloaded), connection caps, the rate
//! limit, and clients that stall mid-frame or idle.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
mod echo;
#[allow(dead_code)] // the client's other helpers serve tests/server.rs
mod wire_client;

use echo::Echo;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::broadcast;
use transport::{LimitStats, Limits, Server, ServerConfig};
use wire_client::Client;

struct Running {
    addr: std::net::SocketAddr,
    limits: Arc<Limits>,
}

impl Running {
    fn stats(&self) -> LimitStats {
        self.limits.stats()
    }
}

async fn start(config: ServerConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (events, _) = broadcast::channel(4);
    let server = Server::new(Arc::new(Echo), events, config);
    let limits = server.limits();
    tokio::spawn(async move { server.run(listener, std::future::pending()).await });
    Running { addr, limits }
}

/// A v4 QUERY envelope with a text of `len` bytes.
fn query_envelope(stream: i16, len: usize) -> Vec<u8> {
    let body = wire_client::query_body(4, &"x".repeat(len));
    let mut out = vec![4, 0];
    out.extend_from_slice(&stream.to_be_bytes());
    out.push(0x07);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

async fn ready(addr: std::net::SocketAddr) -> Client {
    let mut c = Client::connect(addr, 4).await;
    c.startup(None).await;
    c
}

/// Waits until `check` holds, for at most two seconds.
async fn eventually(what: &str, check: impl Fn() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never: {what}");
}

fn per_ip_budget(bytes: u64, throw_on_overload: bool) -> ServerConfig {
    ServerConfig {
        max_request_data_in_flight_per_ip: bytes,
        throw_on_overload,
        ..ServerConfig::default()
    }
}

/// A client that declared a 1500-byte query and sent 20 bytes of it: the budget holds it.
async fn holding_1500_bytes(server: &Running) -> (Client, Vec<u8>) {
    let mut big = ready(server.addr).await;
    let envelope = query_envelope(1, 1500);
    big.send_raw(&envelope[..20]).await;
    eventually("the big body is reserved", || {
        server.stats().bytes_in_flight >= 1500
    })
    .await;
    (big, envelope)
}

#[tokio::test]
async fn a_declared_body_is_reserved_before_it_is_read_and_others_wait() {
    let server = start(per_ip_budget(2000, false)).await;
    let mut small = ready(server.addr).await;
    let (mut big, envelope) = holding_1500_bytes(&server).await;
    small.send_raw(&query_envelope(2, 600)).await;
    eventually("the small client is paused", || {
        server.stats().paused_connections == 1
    })
    .await;
    big.send_raw(&envelope[20..]).await;
    assert_eq!(big.recv().await.opcode, 0x08);
    assert_eq!(small.recv().await.opcode, 0x08);
    eventually("everything is released", || {
        server.stats().bytes_in_flight == 0
    })
    .await;
    assert_eq!(server.stats().pauses, 1);
}

#[tokio::test]
async fn throw_on_overload_answers_overloaded_and_skips_the_body() {
    let server = start(per_ip_budget(2000, true)).await;
    let mut small = ready(server.addr).await;
    let (mut big, envelope) = holding_1500_bytes(&server).await;
    small.send_raw(&query_envelope(2, 600)).await;
    let overloaded = small.recv().await;
    assert_eq!((overloaded.stream, overloaded.error_code()), (2, 0x1001));
    assert!(
        overloaded
            .error_message()
            .starts_with("Request breached limit on bytes in flight. (Using 15"),
        "{}",
        overloaded.error_message()
    );
    assert_eq!(small.query(3, "fits").await.opcode, 0x08);
    big.send_raw(&envelope[20..]).await;
    assert_eq!(big.recv().await.opcode, 0x08);
    assert_eq!(server.stats().discarded, 1);
}

#[tokio::test]
async fn a_client_asks_for_overloaded_answers_in_startup() {
    let server = start(per_ip_budget(2000, false)).await;
    let mut thrower = Client::connect(server.addr, 4).await;
    thrower.startup_with(&[("THROW_ON_OVERLOAD", "1")]).await;
    let _held = holding_1500_bytes(&server).await;
    thrower.send_raw(&query_envelope(2, 600)).await;
    assert_eq!(thrower.recv().await.error_code(), 0x1001);
}

fn budget_of_40_mib() -> ServerConfig {
    ServerConfig {
        max_request_data_in_flight: 40 << 20,
        max_request_data_in_flight_per_ip: 40 << 20,
        ..ServerConfig::default()
    }
}

/// Issue 27: clients of one address that each send a STARTUP, then a header declaring a
/// 16 MiB body and 64 KiB of it. Two bodies fit the budgets and the rest wait their turn, yet
/// the address's new connections and other requests are served at once: a body holds the room
/// of what arrived (128 KiB), not of what it declares.
#[tokio::test]
async fn half_sent_large_bodies_do_not_lock_their_address_out() {
    let server = start(budget_of_40_mib()).await;
    let mut established = ready(server.addr).await;
    let mut half_sent = Vec::new();
    let envelope = query_envelope(1, (16 << 20) - 100);
    for _ in 0..10 {
        let mut c = ready(server.addr).await;
        c.send_raw(&envelope[..9 + (64 << 10)]).await;
        half_sent.push(c);
    }
    let declared = envelope.len() as u64 - 9;
    eventually("two bodies are read and the rest wait", || {
        let stats = server.stats();
        (
            stats.paused_connections,
            stats.bytes_announced,
            stats.bytes_in_flight,
        ) == (8, 2 * declared, 2 * (128 << 10))
    })
    .await;
    let mut fresh = ready(server.addr).await; // STARTUP answered (within 5 s)
    assert_eq!(fresh.request(1, 0x05, b"").await.opcode, 0x06, "SUPPORTED");
    assert_eq!(fresh.query(2, "small").await.opcode, 0x08);
    assert_eq!(established.query(3, "small").await.opcode, 0x08);
    // The first body sent in full is answered; the next waiting one then begins.
    half_sent[0].send_raw(&envelope[9 + (64 << 10)..]).await;
    assert_eq!(half_sent[0].recv().await.opcode, 0x08);
    eventually("the next body begins", || {
        let stats = server.stats();
        (stats.paused_connections, stats.bytes_announced) == (7, 2 * declared)
    })
    .await;
}

/// Bodies being received always fit the budgets together, so large bodies sent at once all
/// complete, whatever the order their bytes arrive in (none waits forever for room another
/// body holds).
#[tokio::test]
async fn large_bodies_sent_together_all_complete() {
    for version in [4, 5] {
        let server = start(per_ip_budget(1 << 20, false)).await;
        let mut clients = Vec::new();
        for _ in 0..6 {
            let mut c = Client::connect(server.addr, version).await;
            c.startup(None).await;
            clients.push(c);
        }
        let text = "y".repeat(400 << 10);
        for c in &mut clients {
            c.send_query(1, &text).await;
        }
        for c in &mut clients {
            assert_eq!(c.recv().await.opcode, 0x08, "v{version}");
        }
        eventually("everything is released", || {
            let stats = server.stats();
            (stats.bytes_in_flight, stats.bytes_announced) == (0, 0)
        })
        .await;
    }
}

#[tokio::test]
async fn connections_over_the_per_address_cap_are_closed() {
    let server = start(ServerConfig {
        max_connections_per_ip: Some(2),
        ..ServerConfig::default()
    })
    .await;
    let _a = ready(server.addr).await;
    let mut b = ready(server.addr).await;
    let mut refused = Client::connect(server.addr, 4).await;
    assert!(refused.is_closed().await);
    assert_eq!(b.query(1, "still served").await.opcode, 0x08);
    assert_eq!(server.stats().refused_connections, 1);
}

#[tokio::test]
async fn requests_over_the_rate_are_overloaded_when_throwing() {
    let server = start(ServerConfig {
        max_requests_per_second: Some(1),
        throw_on_overload: true,
        ..ServerConfig::default()
    })
    .await;
    let mut c = Client::connect(server.addr, 4).await;
    c.startup(None).await; // outside the limits, as in Cassandra
    assert_eq!(c.query(1, "first").await.opcode, 0x08);
    let over = c.query(2, "too soon").await;
    assert_eq!(over.error_code(), 0x1001);
    assert_eq!(
        over.error_message(),
        "Request breached global limit of 1 requests/second. Server is currently in an \
         overloaded state and cannot accept more requests."
    );
}

#[tokio::test]
async fn a_client_that_stalls_mid_frame_is_closed() {
    let server = start(ServerConfig {
        frame_timeout: Duration::from_millis(200),
        ..ServerConfig::default()
    })
    .await;
    let mut stalled = ready(server.addr).await;
    stalled.send_raw(&query_envelope(1, 100)[..30]).await;
    assert!(stalled.is_closed().await);
    eventually("the budget is released", || {
        server.stats().bytes_in_flight == 0
    })
    .await;
    assert_eq!(server.stats().timed_out_connections, 1);
    let mut half_header = ready(server.addr).await;
    half_header.send_raw(&[4, 0, 0]).await;
    assert!(half_header.is_closed().await);
}

#[tokio::test]
async fn idle_connections_close_unless_a_request_is_in_flight() {
    let server = start(ServerConfig {
        idle_timeout: Some(Duration::from_millis(300)),
        ..ServerConfig::default()
    })
    .await;
    let mut busy = ready(server.addr).await;
    for stream in 0..5 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(busy.query(stream, "keeps it alive").await.opcode, 0x08);
    }
    assert!(busy.is_closed().await, "closed once idle");
    assert_eq!(server.stats().timed_out_connections, 1);
}
