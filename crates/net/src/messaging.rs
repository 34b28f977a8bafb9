//! The messaging service a node starts once: requests, one-way messages, handlers, stats.
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use clock::{Clock, SharedClock};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tracing::info;

use crate::config::{HostId, NetConfig, Tuning};
use crate::context::Context;
use crate::error::NetError;
use crate::frame::{Frame, Kind};
use crate::handler::{handler_fn, Handler};
use crate::handshake::{Hello, MAX_CLUSTER_NAME, MESSAGING_VERSION};
use crate::inbound;
use crate::network::Network;
use crate::outbound::{Envelope, Outbound};
use crate::stats::{NetStats, Tally};
use crate::verb::{Class, Verb};

/// Stands for a request timeout too large to add to the clock.
const FOREVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// A node's internode messaging. Dropping the last `Arc` stops it like `shutdown` (without
/// waiting); a handler that holds the `Arc` keeps it alive until `shutdown` is called.
pub struct Messaging {
    ctx: Arc<Context>,
}

impl Messaging {
    /// Binds the listener and starts accepting; outbound connections open lazily.
    pub async fn start(config: NetConfig, network: Arc<dyn Network>) -> io::Result<Arc<Messaging>> {
        Self::start_tuned(config, Tuning::default(), network).await
    }

    /// `start` with non-default timings and bounds.
    pub async fn start_tuned(
        config: NetConfig,
        tuning: Tuning,
        network: Arc<dyn Network>,
    ) -> io::Result<Arc<Messaging>> {
        if config.cluster_name.len() > MAX_CLUSTER_NAME {
            let why = format!("cluster name longer than {MAX_CLUSTER_NAME} bytes");
            return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
        }
        if config.listen.ip().is_unspecified() {
            let why = format!(
                "internode listen address {} must be a specific address: peers know a node by it",
                config.listen
            );
            return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
        }
        let listener = network.bind(config.listen).await?;
        let local = SocketAddr::new(config.listen.ip(), listener.local_addr()?.port());
        let hello = Hello {
            version: MESSAGING_VERSION,
            host_id: config.host_id,
            listen: local,
            cluster_name: config.cluster_name.clone(),
        };
        info!(
            "internode messaging listening on {local} (cluster '{}', host {}, version {})",
            config.cluster_name, config.host_id, MESSAGING_VERSION
        );
        let clock = config.clock.clone();
        let ctx = Arc::new(Context::new(config, tuning, network, local, hello));
        ctx.register(
            Verb::Echo,
            handler_fn(move |_, _| {
                let now = clock.now_millis();
                async move { Ok(Bytes::copy_from_slice(&now.to_be_bytes())) }
            }),
        );
        ctx.spawn(inbound::accept_loop(ctx.clone(), listener));
        Ok(Arc::new(Messaging { ctx }))
    }

    /// Sets the handler of `verb` (replacing any). Echo has a built-in one, which answers with
    /// this node's wall clock (see [`wall_clock_of`]).
    pub fn register(&self, verb: Verb, handler: Arc<dyn Handler>) {
        self.ctx.register(verb, handler);
    }

    /// The handler registered for `verb` (a test wraps it to watch the requests).
    pub fn handler(&self, verb: Verb) -> Option<Arc<dyn Handler>> {
        self.ctx.handler(verb)
    }

    /// Request/response, matched by id; the timeout travels with the message so the receiver
    /// drops work that expired before it started (counted as dropped, per verb).
    pub async fn request(
        &self,
        to: SocketAddr,
        verb: Verb,
        payload: Bytes,
        timeout: Duration,
    ) -> Result<Bytes, NetError> {
        let now = Instant::now();
        let deadline = now.checked_add(timeout).unwrap_or(now + FOREVER);
        let envelope = Envelope {
            verb,
            frame: Frame::new(Kind::Request, verb as u8, self.ctx.next_id(), payload),
            deadline: Some(deadline),
        };
        let result = self.exchange(to, envelope, deadline).await;
        match &result {
            Ok(_) => {}
            Err(NetError::Timeout) => self.ctx.stats.count(verb, Tally::Timeout),
            Err(_) => self.ctx.stats.count(verb, Tally::Failure),
        }
        result
    }

    async fn exchange(
        &self,
        to: SocketAddr,
        envelope: Envelope,
        deadline: Instant,
    ) -> Result<Bytes, NetError> {
        let outbound = self.outbound_for(to, envelope.verb, &envelope.frame.payload)?;
        let id = envelope.frame.id;
        let (reply, answer) = oneshot::channel();
        outbound.enqueue(envelope, Some(reply))?;
        let _forget = Forget(&outbound, id);
        match tokio::time::timeout_at(deadline, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(NetError::Shutdown),
            Err(_) => Err(NetError::Timeout),
        }
    }

    /// One-way message (no response).
    pub fn send(&self, to: SocketAddr, verb: Verb, payload: Bytes) -> Result<(), NetError> {
        let envelope = |payload| Envelope {
            verb,
            frame: Frame::new(Kind::OneWay, verb as u8, 0, payload),
            deadline: None,
        };
        let result = self
            .outbound_for(to, verb, &payload)
            .and_then(|outbound| outbound.enqueue(envelope(payload), None));
        if result.is_err() {
            self.ctx.stats.count(verb, Tally::Failure);
        }
        result
    }

    fn outbound_for(
        &self,
        to: SocketAddr,
        verb: Verb,
        payload: &Bytes,
    ) -> Result<Arc<Outbound>, NetError> {
        let max = self.ctx.config.max_message_bytes;
        if payload.len() > max {
            let size = payload.len();
            return Err(NetError::TooLarge { size, max });
        }
        self.ctx.outbound(to, Class::of(verb, payload.len()))
    }

    /// `peer` is up again (gossip says so): links to it that failed to connect while it was
    /// down connect at the next message rather than failing fast until their backoff ends, as
    /// Cassandra reconnects to a node it sees come back.
    pub fn peer_up(&self, peer: IpAddr) {
        self.ctx.retry_now(peer);
    }

    /// The address peers reach this node at (the bound port if `listen` had port 0).
    pub fn local(&self) -> SocketAddr {
        self.ctx.local
    }

    /// This node's wall clock (`NetConfig::clock`), the one Echo answers with.
    pub fn clock(&self) -> &SharedClock {
        &self.ctx.config.clock
    }

    pub fn host_id(&self) -> HostId {
        self.ctx.config.host_id
    }

    /// The host id a peer at `addr` (its listen address) gave in a handshake, either way.
    pub fn host_id_of(&self, addr: SocketAddr) -> Option<HostId> {
        self.ctx.host_id_of(addr)
    }

    pub fn stats(&self) -> NetStats {
        self.ctx.stats.snapshot()
    }

    /// Closes the listener and every connection; pending requests and queued messages fail
    /// with `Shutdown`, and so does anything sent afterwards.
    pub async fn shutdown(&self) {
        self.ctx.shutdown().await;
        info!("internode messaging on {} shut down", self.ctx.local);
    }
}

impl Drop for Messaging {
    fn drop(&mut self) {
        self.ctx.abort();
    }
}

/// Forgets a request's waiter when the request stops waiting, however it ends.
struct Forget<'a>(&'a Outbound, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.forget(self.1);
    }
}

/// The wall clock an Echo answer carries (milliseconds since the Unix epoch, 8 bytes
/// big-endian); `None` for an answer without one.
pub fn wall_clock_of(answer: &[u8]) -> Option<i64> {
    Some(i64::from_be_bytes(answer.try_into().ok()?))
}
