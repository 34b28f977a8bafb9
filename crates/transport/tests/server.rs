//! End-to-end tests: `serve` on a loopback port driven by hand-built frames.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate
mod echo;
mod wire_client;

use echo::Echo;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, oneshot};
use transport::{serve, Clients, Event, Server, ServerConfig};
use types::result::{SchemaChange, SchemaChangeKind, SchemaChangeTarget};
use wire_client::{Client, Frame};

struct Running {
    addr: std::net::SocketAddr,
    events: broadcast::Sender<Event>,
    clients: Arc<Clients>,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start(config: ServerConfig) -> Running {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (events, _) = broadcast::channel(16);
    let server = Server::new(Arc::new(Echo), events.clone(), config);
    let clients = server.clients();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let shutdown = async {
            let _ = stopped.await;
        };
        server.run(listener, shutdown).await
    });
    Running {
        addr,
        events,
        clients,
        stop: Some(stop),
        task,
    }
}

async fn started() -> Running {
    start(ServerConfig::default()).await
}

fn assert_rows_echo(frame: &Frame, text: &str) {
    assert_eq!(frame.opcode, 0x08, "expected RESULT, got {frame:?}");
    let body = &frame.body;
    assert_eq!(&body[..4], &[0, 0, 0, 2]);
    let tail = &body[body.len() - text.len()..];
    assert_eq!(tail, text.as_bytes());
}

#[tokio::test]
async fn v4_options_startup_query_and_errors() {
    let server = started().await;
    let mut c = Client::connect(server.addr, 4).await;
    let supported = c.request(0, 0x05, &[]).await;
    assert_eq!((supported.version, supported.opcode), (0x84, 0x06));
    assert!(supported.body_contains(b"3.4.7") && supported.body_contains(b"5/v5"));
    c.startup(None).await;
    assert_rows_echo(&c.query(1, "SELECT 1").await, "SELECT 1");
    let err = c.query(2, "fail").await;
    assert_eq!((err.opcode, err.error_code()), (0x00, 0x2200));
    let use_ks = c.query(3, "USE my_ks").await;
    assert_eq!(&use_ks.body[..4], &[0, 0, 0, 3]);
    let snapshot = server.clients.snapshot();
    assert_eq!(snapshot.len(), 1);
    assert_eq!(snapshot[0].keyspace.as_deref(), Some("my_ks"));
    assert_eq!(snapshot[0].protocol_version, 4);
    assert_eq!(
        snapshot[0].driver.driver_name.as_deref(),
        Some("test-driver")
    );
    let unprepared = c.execute(4, b"abc").await;
    assert_eq!(unprepared.error_code(), 0x2500);
    assert_eq!(c.query(5, "panic").await.error_code(), 0x0000);
    assert_rows_echo(&c.query(6, "after panic").await, "after panic");
}

/// What a tracing subscriber writes, kept for the test to read.
#[derive(Clone, Default)]
struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);

impl Logs {
    fn text(&self) -> String {
        let bytes = self.0.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut bytes) = self.0.lock() {
            bytes.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;

    fn make_writer(&'a self) -> Logs {
        self.clone()
    }
}

#[tokio::test]
async fn a_panicking_request_is_a_server_error_logged_with_its_backtrace() {
    transport::install_panic_hook();
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_ansi(false)
        .finish();
    // The process-wide default: a thread-local one loses events when tests on other threads
    // reset tracing's cached interest in a callsite (seen as an empty log under load).
    tracing::subscriber::set_global_default(subscriber).expect("the only test that logs");
    let server = started().await;
    let mut c = Client::connect(server.addr, 4).await;
    c.startup(None).await;
    let answer = c.query(1, "panic").await;
    assert_eq!(answer.error_code(), 0x0000);
    assert_eq!(
        answer.error_message(),
        "Unexpected error while executing the request: handler bug"
    );
    assert_rows_echo(&c.query(2, "after panic").await, "after panic");
    let text = logs.text();
    assert!(
        text.contains("ERROR") && text.contains("handling QUERY on stream 1 from 127.0.0.1:"),
        "{text}"
    );
    assert!(
        text.contains("handler bug at crates/transport/tests/echo/mod.rs:"),
        "{text}"
    );
    // the backtrace names the handler's frame (by file and line: dev builds keep line tables
    // only, which give inlined async frames short names)
    assert!(
        text.contains("core::panicking::panic_fmt") && text.contains("at ./tests/echo/mod.rs:"),
        "{text}"
    );
}

#[tokio::test]
async fn v4_lz4_compression() {
    let server = started().await;
    let mut c = Client::connect(server.addr, 4).await;
    c.startup(Some("lz4")).await;
    let text = "SELECT compressible ".repeat(50);
    let frame = c.query(1, &text).await;
    assert!(frame.was_compressed);
    assert_rows_echo(&frame, &text);
}

#[tokio::test]
async fn v5_framing_plain_and_lz4() {
    let server = started().await;
    for compression in [None, Some("lz4")] {
        let mut c = Client::connect(server.addr, 5).await;
        c.startup(compression).await;
        assert_rows_echo(&c.query(1, "SELECT v5").await, "SELECT v5");
        let big = "x".repeat(300_000);
        assert_rows_echo(&c.query(2, &big).await, &big);
        let supported = c.request(3, 0x05, &[]).await;
        assert_eq!(supported.opcode, 0x06);
    }
}

#[tokio::test]
async fn concurrent_streams_on_one_connection() {
    let server = started().await;
    let mut c = Client::connect(server.addr, 4).await;
    c.startup(None).await;
    for stream in 0..100i16 {
        let text = format!("sleep {} #{stream}", (100 - stream) % 7);
        c.send_query(stream, &text).await;
    }
    let mut seen = [false; 100];
    for _ in 0..100 {
        let frame = c.recv().await;
        let stream = frame.stream as usize;
        assert!(!seen[stream]);
        seen[stream] = true;
        assert_rows_echo(&frame, &format!("sleep {} #{stream}", (100 - stream) % 7));
    }
}

/// A request that completes at once is answered from the connection's own task; one that
/// waits moves to a task of its own and does not hold back the requests behind it.
#[tokio::test]
async fn a_waiting_request_does_not_hold_back_the_next() {
    let server = started().await;
    let mut c = Client::connect(server.addr, 4).await;
    c.startup(None).await;
    c.send_query(1, "sleep 300").await;
    c.send_query(2, "at once").await;
    let first = c.recv().await;
    assert_eq!(first.stream, 2);
    assert_rows_echo(&first, "at once");
    let second = c.recv().await;
    assert_eq!(second.stream, 1);
    assert_rows_echo(&second, "sleep 300");
}

#[tokio::test]
async fn unsupported_versions_are_refused_and_closed() {
    let server = started().await;
    for (version, reply) in [(6u8, 0x85u8), (0x16, 0x85), (0x7f, 0x85), (2, 0x82)] {
        let mut c = Client::connect(server.addr, 4).await;
        c.send_raw(&[version, 0, 0, 0, 5, 0, 0, 0, 0]).await;
        let err = c.recv().await;
        assert_eq!((err.version, err.error_code()), (reply, 0x000A));
        let expected = format!(
            "Invalid or unsupported protocol version ({}); supported versions are (3/v3, 4/v4, 5/v5)",
            version & 0x7f
        );
        assert_eq!(err.error_message(), expected);
        assert!(c.is_closed().await);
    }
}

#[tokio::test]
async fn malformed_body_keeps_connection() {
    let server = started().await;
    let mut c = Client::connect(server.addr, 4).await;
    c.startup(None).await;
    let bad = c.request(7, 0x07, &[0, 0, 0, 50, b'a']).await;
    assert_eq!((bad.stream, bad.error_code()), (7, 0x000A));
    let unknown = c.request(8, 0x04, &[]).await;
    assert_eq!((unknown.stream, unknown.error_code()), (8, 0x000A));
    let mut bad_cl = wire_client::long_string("SELECT 1");
    bad_cl.extend_from_slice(&[0x00, 0x42, 0]);
    assert_eq!(c.request(9, 0x07, &bad_cl).await.error_code(), 0x000A);
    assert_rows_echo(&c.query(10, "still alive").await, "still alive");
}

#[tokio::test]
async fn requests_before_startup_are_refused() {
    let server = started().await;
    let mut c = Client::connect(server.addr, 4).await;
    let err = c
        .request(1, 0x07, &wire_client::query_body(4, "SELECT 1"))
        .await;
    assert_eq!(err.error_code(), 0x000A);
    assert!(err.error_message().contains("expecting STARTUP or OPTIONS"));
    let missing = c.request(2, 0x01, &[0, 0]).await;
    assert_eq!(missing.error_code(), 0x000A);
    c.startup(None).await;
    let again = c
        .request(3, 0x01, &wire_client::startup_body_with(&[]))
        .await;
    assert_eq!(again.error_code(), 0x000A);
}

#[tokio::test]
async fn oversized_frames_are_skipped() {
    let config = ServerConfig {
        max_frame_bytes: 1024,
        ..ServerConfig::default()
    };
    let server = start(config).await;
    for version in [4, 5] {
        let mut c = Client::connect(server.addr, version).await;
        c.startup(None).await;
        let too_big = c.query(1, &"y".repeat(5000)).await;
        assert_eq!((too_big.stream, too_big.error_code()), (1, 0x2200));
        assert!(too_big.error_message().starts_with("Request is too big"));
        assert_rows_echo(&c.query(2, "after").await, "after");
    }
}

#[tokio::test]
async fn garbage_closes_only_that_connection() {
    let server = started().await;
    let mut good = Client::connect(server.addr, 5).await;
    good.startup(None).await;
    let mut bad = Client::connect(server.addr, 4).await;
    bad.send_raw(&[0x04, 0, 0, 1, 0x07, 0xff, 0xff, 0xff, 0xf0, 1, 2, 3])
        .await;
    assert_eq!(bad.recv().await.error_code(), 0x000A);
    assert!(bad.is_closed().await);
    let mut bad_v5 = Client::connect(server.addr, 5).await;
    bad_v5.startup(None).await;
    bad_v5
        .send_raw(b"\x13\x37 this is not a segment at all")
        .await;
    assert_eq!(bad_v5.recv().await.error_code(), 0x000A);
    assert!(bad_v5.is_closed().await);
    assert_rows_echo(&good.query(1, "unaffected").await, "unaffected");
}

#[tokio::test]
async fn registered_events_arrive_on_stream_minus_one() {
    let server = started().await;
    let mut c = Client::connect(server.addr, 5).await;
    c.startup(None).await;
    let mut body = vec![0, 1];
    body.extend_from_slice(&wire_client::string("SCHEMA_CHANGE"));
    assert_eq!(c.request(1, 0x0B, &body).await.opcode, 0x02);
    let addr = "127.0.0.1:9042".parse().unwrap();
    server
        .events
        .send(Event::StatusChange { up: true, addr })
        .unwrap();
    let change = SchemaChange {
        kind: SchemaChangeKind::Created,
        target: SchemaChangeTarget::Keyspace,
        keyspace: "new_ks".into(),
        name: String::new(),
        arg_types: vec![],
    };
    server.events.send(Event::SchemaChange(change)).unwrap();
    let event = c.recv().await;
    assert_eq!((event.opcode, event.stream), (0x0C, -1));
    assert!(event.body_contains(b"SCHEMA_CHANGE") && event.body_contains(b"new_ks"));
}

#[tokio::test]
async fn shutdown_finishes_in_flight_requests() {
    let mut server = started().await;
    let mut c = Client::connect(server.addr, 4).await;
    c.startup(None).await;
    c.send_query(1, "sleep 200").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    if let Some(stop) = server.stop.take() {
        let _ = stop.send(());
    }
    assert_rows_echo(&c.recv().await, "sleep 200");
    assert!(c.is_closed().await);
    server.task.await.unwrap().unwrap();
    assert!(tokio::net::TcpStream::connect(server.addr).await.is_err());
}

#[tokio::test]
async fn serve_function_runs_until_shutdown() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (events, _) = broadcast::channel(4);
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(
        listener,
        Arc::new(Echo),
        events,
        ServerConfig::default(),
        async {
            let _ = stopped.await;
        },
    ));
    let mut c = Client::connect(addr, 4).await;
    c.startup(None).await;
    assert_rows_echo(&c.query(1, "hi").await, "hi");
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}
