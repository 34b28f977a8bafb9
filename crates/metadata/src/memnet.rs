//! An in-memory network for tests and simulations: every node's `Transport` in one process,
//! with links that can be cut (both ways or one way), delayed and made to drop messages, and
//! nodes that can crash and come back. Random choices come from a seeded generator. A lost
//! message is never answered: the caller sees its own timeout, as over a real cut link.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use parking_lot::Mutex;

use crate::transport::{RpcHandler, RpcKind, Transport, TransportError};

/// The whole simulated network.
pub struct MemNetwork {
    state: Mutex<NetState>,
}

struct NetState {
    handlers: HashMap<SocketAddr, HashMap<RpcKind, Arc<dyn RpcHandler>>>,
    up: HashSet<SocketAddr>,
    /// Directed links that lose every message.
    cut: HashSet<(SocketAddr, SocketAddr)>,
    latency: Duration,
    jitter: Duration,
    /// Probability (in millionths) that a message is lost.
    drop_ppm: u64,
    rng: SplitMix64,
}

/// One node's end of the network.
pub struct MemTransport {
    net: Arc<MemNetwork>,
    addr: SocketAddr,
}

enum Route {
    Deliver {
        handler: Arc<dyn RpcHandler>,
        delay: Duration,
    },
    Lost,
}

impl MemNetwork {
    /// A network with no latency and no losses; `seed` drives every random choice.
    pub fn new(seed: u64) -> Arc<MemNetwork> {
        Arc::new(MemNetwork {
            state: Mutex::new(NetState {
                handlers: HashMap::new(),
                up: HashSet::new(),
                cut: HashSet::new(),
                latency: Duration::ZERO,
                jitter: Duration::ZERO,
                drop_ppm: 0,
                rng: SplitMix64(seed),
            }),
        })
    }

    /// The transport of the node at `addr`, which is up from now on (again, after a crash).
    pub fn transport(self: &Arc<Self>, addr: SocketAddr) -> Arc<MemTransport> {
        self.state.lock().up.insert(addr);
        Arc::new(MemTransport {
            net: self.clone(),
            addr,
        })
    }

    /// The node at `addr` stops: its handlers are gone, calls to it find nobody, its own calls
    /// fail.
    pub fn crash(&self, addr: SocketAddr) {
        let mut state = self.state.lock();
        state.up.remove(&addr);
        state.handlers.remove(&addr);
    }

    /// Cuts every link between `side` and every other node, both ways.
    pub fn partition(&self, side: &[SocketAddr]) {
        let mut state = self.state.lock();
        let others: Vec<SocketAddr> = state
            .up
            .iter()
            .chain(state.handlers.keys())
            .filter(|addr| !side.contains(addr))
            .copied()
            .collect();
        for a in side {
            for b in &others {
                state.cut.insert((*a, *b));
                state.cut.insert((*b, *a));
            }
        }
    }

    /// Cuts the link from `from` to `to` only (answers from `to` still arrive).
    pub fn cut_one_way(&self, from: SocketAddr, to: SocketAddr) {
        self.state.lock().cut.insert((from, to));
    }

    /// Restores every link.
    pub fn heal(&self) {
        self.state.lock().cut.clear();
    }

    /// Every message takes `latency` plus up to `jitter` more.
    pub fn set_latency(&self, latency: Duration, jitter: Duration) {
        let mut state = self.state.lock();
        state.latency = latency;
        state.jitter = jitter;
    }

    /// Each message is lost with this probability (0.0 to 1.0).
    pub fn set_drop_rate(&self, probability: f64) {
        self.state.lock().drop_ppm = (probability.clamp(0.0, 1.0) * 1e6) as u64;
    }

    /// How a message from `from` to `to` fares.
    fn route(
        &self,
        from: SocketAddr,
        to: SocketAddr,
        kind: RpcKind,
    ) -> Result<Route, TransportError> {
        let mut state = self.state.lock();
        if !state.up.contains(&from) {
            return Err(TransportError::Shutdown);
        }
        let handler = state
            .handlers
            .get(&to)
            .and_then(|handlers| handlers.get(&kind))
            .cloned()
            .ok_or_else(|| TransportError::Unreachable(format!("connection to {to} refused")))?;
        if state.lost(from, to) {
            return Ok(Route::Lost);
        }
        let delay = state.delay();
        Ok(Route::Deliver { handler, delay })
    }

    /// Whether the answer from `to` back to `from` arrives, and after what delay.
    fn answer_route(&self, to: SocketAddr, from: SocketAddr) -> Option<Duration> {
        let mut state = self.state.lock();
        if !state.up.contains(&from) || state.lost(to, from) {
            return None;
        }
        Some(state.delay())
    }

    async fn exchange(
        self: Arc<Self>,
        from: SocketAddr,
        to: SocketAddr,
        kind: RpcKind,
        payload: Bytes,
    ) -> Result<Bytes, TransportError> {
        let (handler, delay) = match self.route(from, to, kind)? {
            Route::Deliver { handler, delay } => (handler, delay),
            Route::Lost => return futures::future::pending().await,
        };
        tokio::time::sleep(delay).await;
        let answer = tokio::spawn(handler.handle(from, payload))
            .await
            .unwrap_or_else(|e| Err(format!("handler failed: {e}")));
        match self.answer_route(to, from) {
            Some(delay) => tokio::time::sleep(delay).await,
            None => return futures::future::pending().await,
        }
        answer.map_err(TransportError::Remote)
    }
}

impl NetState {
    fn lost(&mut self, from: SocketAddr, to: SocketAddr) -> bool {
        self.cut.contains(&(from, to))
            || (self.drop_ppm > 0 && self.rng.below(1_000_000) < self.drop_ppm)
    }

    fn delay(&mut self) -> Duration {
        let jitter = self.jitter.as_micros() as u64;
        let extra = if jitter == 0 {
            0
        } else {
            self.rng.below(jitter + 1)
        };
        self.latency + Duration::from_micros(extra)
    }
}

impl Transport for MemTransport {
    fn local(&self) -> SocketAddr {
        self.addr
    }

    fn call(
        &self,
        to: SocketAddr,
        kind: RpcKind,
        payload: Bytes,
        timeout: Duration,
    ) -> BoxFuture<'static, Result<Bytes, TransportError>> {
        let exchange = self.net.clone().exchange(self.addr, to, kind, payload);
        Box::pin(async move {
            tokio::time::timeout(timeout, exchange)
                .await
                .unwrap_or(Err(TransportError::Timeout(timeout)))
        })
    }

    fn register(&self, kind: RpcKind, handler: Arc<dyn RpcHandler>) {
        let mut state = self.net.state.lock();
        if state.up.contains(&self.addr) {
            state
                .handlers
                .entry(self.addr)
                .or_default()
                .insert(kind, handler);
        }
    }
}

/// A small deterministic generator (SplitMix64).
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}
