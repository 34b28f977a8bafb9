//! Overload limits over TCP: request bytes reserved from the header before the body is read
//! (back-pressure or Overloaded), connection caps, the rate limit, and clients that stall
//! mid-frame or idle.
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

#[tokio::test]
async fn many_clients_declaring_large_bodies_hold_only_the_budget() {
    let server = start(ServerConfig {
        max_request_data_in_flight: 40 << 20,
        max_request_data_in_flight_per_ip: 40 << 20,
        ..ServerConfig::default()
    })
    .await;
    let mut clients = Vec::new();
    for _ in 0..10 {
        clients.push(ready(server.addr).await);
    }
    // Declaring a body reserves it (the first two fit) or waits, in arrival order.
    let header = &query_envelope(0, (16 << 20) - 100)[..9];
    for c in &mut clients {
        c.send_raw(header).await;
    }
    eventually("two bodies are reserved and the rest wait", || {
        let stats = server.stats();
        stats.paused_connections == 8 && stats.bytes_in_flight == 2 * ((16 << 20) - 100 + 7)
    })
    .await;
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
    c.startup(None).await;
    let over = c.query(1, "too soon").await;
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
