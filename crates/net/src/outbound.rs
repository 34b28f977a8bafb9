//! The sending side of one peer and class: a bounded queue, the requests awaiting answers, and
//! the task that connects (backing off while the peer is unreachable) and serves the queue.
use std::collections::{BTreeMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::sync::{oneshot, Notify};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use crate::config::Tuning;
use crate::connection;
use crate::context::Context;
use crate::error::NetError;
use crate::frame::{Frame, Kind};
use crate::handshake::{self, HandshakeError};
use crate::network::BoxStream;
use crate::stats::{LinkCounters, Tally};
use crate::verb::{Class, Verb};

/// A message waiting in the queue.
pub(crate) struct Envelope {
    pub verb: Verb,
    pub frame: Frame,
    /// When the sender stops waiting; `None` for one-way messages.
    pub deadline: Option<Instant>,
}

impl Envelope {
    fn size(&self) -> usize {
        self.frame.wire_len()
    }
}

pub(crate) type Reply = oneshot::Sender<Result<Bytes, NetError>>;

struct Waiter {
    reply: Reply,
    /// The connection generation the request was written on.
    sent_on: Option<u64>,
}

enum Phase {
    Open,
    /// The last connect failed: sends fail with `error` until `until`.
    Backoff {
        until: Instant,
        error: NetError,
    },
    Closed,
}

struct State {
    queue: VecDeque<Envelope>,
    bytes: usize,
    waiters: BTreeMap<u64, Waiter>,
    phase: Phase,
}

pub(crate) struct Outbound {
    pub peer: SocketAddr,
    pub class: Class,
    pub counters: Arc<LinkCounters>,
    /// Wakes the task: work was queued or a ping is due.
    pub wake: Notify,
    capacity: usize,
    state: Mutex<State>,
    seed: u64,
}

impl Outbound {
    pub fn new(peer: SocketAddr, class: Class, ctx: &Context) -> Outbound {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (ctx.config.host_id, peer, class).hash(&mut hasher);
        Outbound {
            peer,
            class,
            counters: ctx.stats.link(peer, class),
            wake: Notify::new(),
            capacity: ctx.config.send_queue_bytes,
            state: Mutex::new(State {
                queue: VecDeque::new(),
                bytes: 0,
                waiters: BTreeMap::new(),
                phase: Phase::Open,
            }),
            seed: hasher.finish(),
        }
    }

    /// Queues a message (with `reply` for a request). Fails fast when the queue is full, the
    /// peer was unreachable moments ago, or messaging is shut down.
    pub fn enqueue(&self, envelope: Envelope, reply: Option<Reply>) -> Result<(), NetError> {
        let size = envelope.size();
        {
            let mut state = self.state.lock();
            match &state.phase {
                Phase::Closed => return Err(NetError::Shutdown),
                Phase::Backoff { until, error } if Instant::now() < *until => {
                    return Err(error.clone())
                }
                _ => state.phase = Phase::Open,
            }
            if state.bytes > 0 && state.bytes + size > self.capacity {
                LinkCounters::bump(&self.counters.overloaded);
                return Err(NetError::Overloaded);
            }
            if let Some(reply) = reply {
                let waiter = Waiter {
                    reply,
                    sent_on: None,
                };
                state.waiters.insert(envelope.frame.id, waiter);
            }
            state.bytes += size;
            state.queue.push_back(envelope);
            self.publish(&state);
        }
        self.wake.notify_one();
        Ok(())
    }

    /// The peer is known to be back: the next message connects at once instead of failing
    /// until the backoff pause ends.
    pub fn retry_now(&self) {
        let mut state = self.state.lock();
        if matches!(state.phase, Phase::Backoff { .. }) {
            state.phase = Phase::Open;
        }
    }

    /// The requester stopped waiting (timed out, or its future was dropped).
    pub fn forget(&self, id: u64) {
        self.state.lock().waiters.remove(&id);
    }

    /// An answer arrived for request `id`.
    pub fn complete(&self, id: u64, result: Result<Bytes, NetError>) {
        let waiter = self.state.lock().waiters.remove(&id);
        if let Some(waiter) = waiter {
            let _ = waiter.reply.send(result);
        }
    }

    /// The next message to write on connection `generation`.
    pub fn next(&self, generation: u64) -> Option<Envelope> {
        let mut state = self.state.lock();
        let envelope = state.queue.pop_front()?;
        if envelope.frame.kind == Kind::Request {
            if let Some(waiter) = state.waiters.get_mut(&envelope.frame.id) {
                waiter.sent_on = Some(generation);
            }
        }
        self.publish(&state);
        Some(envelope)
    }

    /// A message taken by `next` was written or dropped: its bytes leave the queue's account.
    pub fn release(&self, envelope: &Envelope) {
        let mut state = self.state.lock();
        state.bytes = state.bytes.saturating_sub(envelope.size());
        self.publish(&state);
    }

    /// Fails everything queued or awaited with `error` and refuses further sends.
    pub fn close(&self, error: NetError) {
        self.drain(Phase::Closed, error);
        self.counters.connected.store(false, Relaxed);
    }

    fn publish(&self, state: &State) {
        let counters = &self.counters;
        counters
            .pending_messages
            .store(state.queue.len() as u64, Relaxed);
        counters.pending_bytes.store(state.bytes as u64, Relaxed);
    }

    /// Empties the queue and the waiters, answering each with `error`; returns the verbs of
    /// the one-way messages that were dropped.
    fn drain(&self, phase: Phase, error: NetError) -> Vec<Verb> {
        let (queue, waiters) = {
            let mut state = self.state.lock();
            if !matches!(state.phase, Phase::Closed) {
                state.phase = phase;
            }
            state.bytes = 0;
            let queue = std::mem::take(&mut state.queue);
            let waiters = std::mem::take(&mut state.waiters);
            self.publish(&state);
            (queue, waiters)
        };
        for waiter in waiters.into_values() {
            let _ = waiter.reply.send(Err(error.clone()));
        }
        let one_way = queue.into_iter().filter(|e| e.frame.kind == Kind::OneWay);
        one_way.map(|envelope| envelope.verb).collect()
    }

    /// Connection `generation` ended: the requests written on it will get no answer.
    fn lost(&self, generation: u64, reason: &str) {
        let lost: Vec<Waiter> = {
            let mut state = self.state.lock();
            let sent_on_it = state
                .waiters
                .extract_if(.., |_, w| w.sent_on == Some(generation));
            sent_on_it.map(|(_, waiter)| waiter).collect()
        };
        let why = format!(
            "connection to {} lost before the answer: {reason}",
            self.peer
        );
        for waiter in lost {
            let _ = waiter.reply.send(Err(NetError::Unreachable(why.clone())));
        }
    }

    async fn wait_for_work(&self) {
        while self.state.lock().queue.is_empty() {
            self.wake.notified().await;
        }
    }

    /// Connects when there is work, serves the connection until it ends, and repeats.
    pub async fn run(self: Arc<Self>, ctx: Arc<Context>) {
        let mut backoff = Backoff::new(self.seed, &ctx.tuning);
        let mut generation = 0;
        loop {
            self.wait_for_work().await;
            match connect(&ctx, self.peer, self.class).await {
                Ok((stream, version)) => {
                    if backoff.failures > 0 {
                        info!(
                            "internode {} connection to {} established",
                            self.class, self.peer
                        );
                    }
                    backoff.failures = 0;
                    generation += 1;
                    if generation > 1 {
                        LinkCounters::bump(&self.counters.reconnects);
                    }
                    self.counters.connected.store(true, Relaxed);
                    let reason = connection::serve(&ctx, &self, stream, version, generation).await;
                    self.counters.connected.store(false, Relaxed);
                    debug!(
                        "internode {} connection to {} closed: {reason}",
                        self.class, self.peer
                    );
                    self.lost(generation, &reason);
                }
                Err(error) => self.unreachable(&ctx, &mut backoff, error),
            }
        }
    }

    fn unreachable(&self, ctx: &Context, backoff: &mut Backoff, error: NetError) {
        let delay = backoff.next();
        let (class, peer) = (self.class, self.peer);
        if backoff.failures == 1 || matches!(error, NetError::Rejected(_)) {
            warn!("internode {class} connection to {peer} failed: {error}; retrying in {delay:?}");
        } else {
            debug!("internode {class} connection to {peer} failed again: {error}");
        }
        let until = Instant::now() + delay;
        let failed = self.drain(
            Phase::Backoff {
                until,
                error: error.clone(),
            },
            error,
        );
        for verb in failed {
            ctx.stats.count(verb, Tally::Failure);
        }
    }
}

/// Opens a connection and runs the handshake, both within the connect timeout.
async fn connect(
    ctx: &Context,
    peer: SocketAddr,
    class: Class,
) -> Result<(BoxStream, u8), NetError> {
    let attempt = async {
        let from = ctx.local.ip();
        let mut stream = ctx
            .network
            .connect(from, peer)
            .await
            .map_err(|e| NetError::Unreachable(format!("cannot connect to {peer}: {e}")))?;
        let handshake = handshake::initiate(&mut stream, &ctx.hello, class).await;
        let (theirs, version) = handshake.map_err(|e| match e {
            HandshakeError::Refused(why) => NetError::Rejected(why),
            other => NetError::Unreachable(format!("handshake with {peer} failed: {other}")),
        })?;
        ctx.learn(peer, theirs.host_id);
        Ok((stream, version))
    };
    let limit = ctx.config.connect_timeout;
    match tokio::time::timeout(limit, attempt).await {
        Ok(result) => result,
        Err(_) => Err(NetError::Unreachable(format!(
            "connecting to {peer} timed out after {limit:?}"
        ))),
    }
}

/// Exponential backoff with jitter: the n-th consecutive failure waits between half and all
/// of min·2ⁿ⁻¹ (capped at max). The jitter is seeded per link so simulations repeat.
struct Backoff {
    failures: u32,
    rng: u64,
    min: Duration,
    max: Duration,
}

impl Backoff {
    fn new(seed: u64, tuning: &Tuning) -> Backoff {
        Backoff {
            failures: 0,
            rng: seed,
            min: tuning.reconnect_min,
            max: tuning.reconnect_max.max(tuning.reconnect_min),
        }
    }

    fn next(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        let doublings = (self.failures - 1).min(30);
        let ceiling = self.min.saturating_mul(1 << doublings).min(self.max);
        let fraction = (self.random() >> 11) as f64 / (1u64 << 53) as f64;
        ceiling.mul_f64(0.5 + fraction / 2.0)
    }

    /// splitmix64.
    fn random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuning(min_ms: u64, max_ms: u64) -> Tuning {
        Tuning {
            reconnect_min: Duration::from_millis(min_ms),
            reconnect_max: Duration::from_millis(max_ms),
            ..Tuning::default()
        }
    }

    #[test]
    fn backoff_doubles_with_jitter_up_to_the_cap() {
        let mut backoff = Backoff::new(42, &tuning(100, 1000));
        let ceilings = [100, 200, 400, 800, 1000, 1000, 1000];
        for ceiling in ceilings {
            let delay = backoff.next();
            let ceiling = Duration::from_millis(ceiling);
            assert!(
                delay >= ceiling / 2 && delay <= ceiling,
                "{delay:?} vs {ceiling:?}"
            );
        }
        for _ in 0..100 {
            assert!(backoff.next() <= Duration::from_millis(1000));
        }
    }

    #[test]
    fn backoff_jitter_differs_between_links_and_repeats_per_seed() {
        let delays = |seed| {
            let mut backoff = Backoff::new(seed, &tuning(1000, 1000));
            (0..8).map(|_| backoff.next()).collect::<Vec<_>>()
        };
        assert_eq!(delays(1), delays(1));
        assert_ne!(delays(1), delays(2));
        let spread = delays(3);
        assert!(spread.iter().any(|d| *d != spread[0]), "{spread:?}");
    }
}
