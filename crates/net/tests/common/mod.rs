//! Helpers for the loopback integration tests.
#![allow(dead_code)]
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use net::{handler_fn, Handler, Messaging, NetConfig, TokioNetwork, Tuning};
use tokio::sync::Semaphore;

pub const CLUSTER: &str = "Test Cluster";

pub fn config(cluster: &str, n: u128) -> NetConfig {
    NetConfig::new(
        cluster,
        net::HostId::from_u128(n),
        "127.0.0.1:0".parse().unwrap(),
    )
}

/// Short timings so failures show within the test's time.
pub fn tuning() -> Tuning {
    Tuning {
        keepalive: Duration::from_millis(500),
        dead_after: Duration::from_secs(3),
        reconnect_min: Duration::from_millis(20),
        reconnect_max: Duration::from_millis(200),
        ..Tuning::default()
    }
}

pub async fn start(config: NetConfig, tuning: Tuning) -> Arc<Messaging> {
    Messaging::start_tuned(config, tuning, Arc::new(TokioNetwork))
        .await
        .unwrap()
}

pub async fn node(n: u128) -> Arc<Messaging> {
    start(config(CLUSTER, n), tuning()).await
}

/// Answers with the payload it was sent.
pub fn echo_payload() -> Arc<dyn Handler> {
    handler_fn(|_, payload| async move { Ok(payload) })
}

/// A handler that counts its calls and then waits for the gate to open (one permit per call).
pub struct Gated {
    pub calls: Arc<AtomicUsize>,
    pub gate: Arc<Semaphore>,
}

impl Gated {
    pub fn new() -> Gated {
        Gated {
            calls: Arc::new(AtomicUsize::new(0)),
            gate: Arc::new(Semaphore::new(0)),
        }
    }

    pub fn handler(&self) -> Arc<dyn Handler> {
        let (calls, gate) = (self.calls.clone(), self.gate.clone());
        handler_fn(move |_, payload: Bytes| {
            let (calls, gate) = (calls.clone(), gate.clone());
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                let permit = gate.acquire().await;
                permit.map(|p| p.forget()).ok();
                Ok(Bytes::from(payload.len().to_be_bytes().to_vec()))
            }
        })
    }

    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    pub fn open(&self, n: usize) {
        self.gate.add_permits(n);
    }
}

/// Waits until `condition` holds, polling; panics with `what` after `limit`.
pub async fn eventually(limit: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + limit;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// An address nothing listens on (bound once, then released).
pub fn free_addr() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// Registers a gated Read handler on `b` and sends it a request from `a` (30 s timeout);
/// returns once the handler holds the request.
pub async fn request_held_by(
    a: &Arc<Messaging>,
    b: &Messaging,
) -> (Gated, tokio::task::JoinHandle<Result<Bytes, net::NetError>>) {
    let gated = Gated::new();
    b.register(net::Verb::Read, gated.handler());
    let (a, to) = (a.clone(), b.local());
    let pending = tokio::spawn(async move {
        let timeout = Duration::from_secs(30);
        a.request(to, net::Verb::Read, Bytes::new(), timeout).await
    });
    eventually(
        Duration::from_secs(1),
        "the request to reach its handler",
        || gated.calls() == 1,
    )
    .await;
    (gated, pending)
}
