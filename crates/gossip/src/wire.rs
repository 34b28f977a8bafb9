//! How chitchat's messages leave and reach this node.
//!
//! chitchat drives a [`chitchat::transport::Socket`]; ours encodes each message to bytes and hands
//! them to a [`Wire`] (the internode `net` crate, on TCP or turmoil).
//! Inbound bytes arrive through [`Inbox::deliver`] (called by the `Verb::Gossip` handler), are
//! decoded here, and messages of another cluster are refused and logged before chitchat sees them.

use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::anyhow;
use async_trait::async_trait;
use bytes::Bytes;
use chitchat::transport::{Socket, Transport};
use chitchat::{ChitchatMessage, Deserializable, Serializable};
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::{debug, warn};

use crate::partners::{ChitchatSlot, Partners};

/// One-way delivery of an encoded gossip message to a peer's listen address.
pub trait Wire: Send + Sync + 'static {
    /// Queues `payload` for `to`; never waits. Delivery is best effort: gossip repeats itself.
    fn send(&self, to: SocketAddr, payload: Bytes) -> Result<(), WireError>;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// The peer cannot be reached now (no connection, handshake refused, queue full...).
    Unreachable(String),
    /// The transport is closed for good: gossip stops.
    Shutdown,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Unreachable(reason) => write!(f, "unreachable: {reason}"),
            WireError::Shutdown => f.write_str("transport shut down"),
        }
    }
}

/// Messages waiting for chitchat; beyond it inbound gossip is dropped (and counted).
const INBOX_CAPACITY: usize = 1024;
/// A refusal is logged at most once per peer in this period.
const REFUSAL_LOG_PERIOD: Duration = Duration::from_secs(60);

/// Counters of the gossip transport (for metrics and tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GossipStats {
    pub sent: u64,
    pub send_failures: u64,
    pub received: u64,
    /// Inbound payloads that are not chitchat messages.
    pub undecodable: u64,
    /// Inbound messages of another cluster, and peers refusing ours for that reason.
    pub foreign_cluster: u64,
    /// Inbound messages dropped because chitchat was behind.
    pub inbox_overflow: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    sent: AtomicU64,
    send_failures: AtomicU64,
    received: AtomicU64,
    undecodable: AtomicU64,
    foreign_cluster: AtomicU64,
    inbox_overflow: AtomicU64,
}

impl Counters {
    fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> GossipStats {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        GossipStats {
            sent: load(&self.sent),
            send_failures: load(&self.send_failures),
            received: load(&self.received),
            undecodable: load(&self.undecodable),
            foreign_cluster: load(&self.foreign_cluster),
            inbox_overflow: load(&self.inbox_overflow),
        }
    }
}

type Inbound = (SocketAddr, Bytes);

/// Where inbound gossip goes: the socket of the running chitchat instance, or nowhere while
/// gossip is stopped (as Cassandra ignores gossip while disabled).
#[derive(Default)]
pub(crate) struct Inbox {
    current: Mutex<Option<mpsc::Sender<Inbound>>>,
    counters: Arc<Counters>,
}

impl Inbox {
    pub(crate) fn counters(&self) -> &Arc<Counters> {
        &self.counters
    }

    pub(crate) fn deliver(&self, from: SocketAddr, payload: Bytes) {
        let current = self.current.lock();
        let Some(sender) = current.as_ref() else {
            return;
        };
        if sender.try_send((from, payload)).is_err() {
            Counters::bump(&self.counters.inbox_overflow);
        }
    }

    fn open(&self) -> mpsc::Receiver<Inbound> {
        let (sender, receiver) = mpsc::channel(INBOX_CAPACITY);
        *self.current.lock() = Some(sender);
        receiver
    }

    pub(crate) fn close(&self) {
        self.current.lock().take();
    }
}

/// chitchat's transport over a [`Wire`]; each `open` takes over the [`Inbox`].
pub(crate) struct WireTransport {
    pub(crate) wire: Arc<dyn Wire>,
    pub(crate) inbox: Arc<Inbox>,
    pub(crate) cluster_name: String,
    /// With a seed, the socket chooses each round's partners ([`Partners`]), from the chitchat
    /// instance the slot will hold.
    pub(crate) partners: Option<(u64, ChitchatSlot)>,
}

#[async_trait]
impl Transport for WireTransport {
    async fn open(&self, listen_addr: SocketAddr) -> anyhow::Result<Box<dyn Socket>> {
        Ok(Box::new(WireSocket {
            local: listen_addr,
            wire: self.wire.clone(),
            inbound: self.inbox.open(),
            counters: self.inbox.counters.clone(),
            cluster_name: self.cluster_name.clone(),
            refusals: RefusalLog::default(),
            partners: self
                .partners
                .clone()
                .map(|(seed, chitchat)| Partners::new(seed, chitchat, listen_addr)),
        }))
    }
}

struct WireSocket {
    local: SocketAddr,
    wire: Arc<dyn Wire>,
    inbound: mpsc::Receiver<Inbound>,
    counters: Arc<Counters>,
    cluster_name: String,
    refusals: RefusalLog,
    partners: Option<Partners>,
}

#[async_trait]
impl Socket for WireSocket {
    async fn send(&mut self, to: SocketAddr, message: ChitchatMessage) -> anyhow::Result<()> {
        let targets = match (&mut self.partners, &message) {
            (Some(partners), ChitchatMessage::Syn { .. }) => partners.route(to).await,
            _ => vec![to],
        };
        let payload = encode(&message);
        for to in targets {
            self.send_to(to, payload.clone())?;
        }
        Ok(())
    }

    async fn recv(&mut self) -> anyhow::Result<(SocketAddr, ChitchatMessage)> {
        loop {
            let (from, payload) = self
                .inbound
                .recv()
                .await
                .ok_or_else(|| anyhow!("gossip inbox closed"))?;
            Counters::bump(&self.counters.received);
            if let Some(message) = self.admit(from, &payload) {
                return Ok((from, message));
            }
        }
    }
}

impl WireSocket {
    fn send_to(&self, to: SocketAddr, payload: Bytes) -> anyhow::Result<()> {
        if to == self.local {
            // chitchat may pick an old generation of this very node as a dead peer to try.
            return Ok(());
        }
        match self.wire.send(to, payload) {
            Ok(()) => Counters::bump(&self.counters.sent),
            Err(WireError::Shutdown) => {
                return Err(anyhow!("the internode transport is shut down"))
            }
            Err(error) => {
                Counters::bump(&self.counters.send_failures);
                debug!(from = %self.local, %to, %error, "gossip message not sent");
            }
        }
        Ok(())
    }

    /// Decodes an inbound payload; refuses (and answers) messages of another cluster.
    fn admit(&mut self, from: SocketAddr, payload: &[u8]) -> Option<ChitchatMessage> {
        let message = match decode(payload) {
            Ok(message) => message,
            Err(error) => {
                Counters::bump(&self.counters.undecodable);
                warn!(%from, len = payload.len(), %error, "dropping an undecodable gossip message");
                return None;
            }
        };
        match message {
            ChitchatMessage::Syn { cluster_id, .. } if cluster_id != self.cluster_name => {
                self.refuse(from, &cluster_id);
                None
            }
            ChitchatMessage::BadCluster => {
                Counters::bump(&self.counters.foreign_cluster);
                if self.refusals.should_log(from) {
                    warn!(
                        "{from} refused gossip from this node: it is not in cluster '{}' \
                         (check cluster_name and seed_provider)",
                        self.cluster_name
                    );
                }
                None
            }
            message => Some(message),
        }
    }

    fn refuse(&mut self, from: SocketAddr, their_cluster: &str) {
        Counters::bump(&self.counters.foreign_cluster);
        if self.refusals.should_log(from) {
            warn!(
                "refusing gossip from {from}: it belongs to cluster '{their_cluster}', this node \
                 to cluster '{}' (check cluster_name and seed_provider)",
                self.cluster_name
            );
        }
        if let Err(error) = self.wire.send(from, encode(&ChitchatMessage::BadCluster)) {
            debug!(%from, %error, "could not tell a foreign node it is refused");
        }
    }
}

/// The last refusal logged per peer.
#[derive(Default)]
struct RefusalLog {
    last: HashMap<SocketAddr, Instant>,
}

impl RefusalLog {
    fn should_log(&mut self, peer: SocketAddr) -> bool {
        let now = Instant::now();
        match self.last.get(&peer) {
            Some(at) if now.duration_since(*at) < REFUSAL_LOG_PERIOD => false,
            _ => {
                self.last.insert(peer, now);
                true
            }
        }
    }
}

pub(crate) fn encode(message: &ChitchatMessage) -> Bytes {
    Bytes::from(message.serialize_to_vec())
}

pub(crate) fn decode(payload: &[u8]) -> anyhow::Result<ChitchatMessage> {
    let mut rest = payload;
    let message = ChitchatMessage::deserialize(&mut rest)?;
    if !rest.is_empty() {
        return Err(anyhow!("{} bytes after the message", rest.len()));
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    struct Recorder(Mutex<Vec<(SocketAddr, Bytes)>>);

    impl Wire for Recorder {
        fn send(&self, to: SocketAddr, payload: Bytes) -> Result<(), WireError> {
            self.0.lock().push((to, payload));
            Ok(())
        }
    }

    fn addr(last: u8) -> SocketAddr {
        SocketAddr::from(([127, 0, 9, last], 7000))
    }

    fn syn(cluster: &str) -> Bytes {
        // A SYN with an empty digest, as chitchat encodes it (magic, version, type, digest, name).
        let mut bytes = vec![0x53, 0xb0, 0, 0, 0, 0];
        bytes.extend((cluster.len() as u16).to_le_bytes());
        bytes.extend(cluster.as_bytes());
        Bytes::from(bytes)
    }

    async fn socket(cluster: &str) -> (Box<dyn Socket>, Arc<Inbox>, Arc<Recorder>) {
        let recorder = Arc::new(Recorder(Mutex::new(Vec::new())));
        let inbox = Arc::new(Inbox::default());
        let transport = WireTransport {
            wire: recorder.clone(),
            inbox: inbox.clone(),
            cluster_name: cluster.to_string(),
            partners: None,
        };
        (transport.open(addr(1)).await.unwrap(), inbox, recorder)
    }

    #[test]
    fn hand_built_syn_decodes_as_chitchat_encodes_it() {
        let message = decode(&syn("A")).unwrap();
        assert!(matches!(&message, ChitchatMessage::Syn { cluster_id, .. } if cluster_id == "A"));
        assert_eq!(encode(&message), syn("A"));
    }

    #[test]
    fn trailing_bytes_are_refused() {
        let mut bytes = syn("A").to_vec();
        bytes.push(0);
        assert!(decode(&bytes)
            .unwrap_err()
            .to_string()
            .contains("1 bytes after"));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&bytes);
        }

        #[test]
        fn any_body_after_a_valid_header_never_panics(
            kind in 0u8..4,
            body in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            let mut bytes = vec![0x53, 0xb0, 0, kind];
            bytes.extend(body);
            let _ = decode(&bytes);
        }

        #[test]
        fn truncated_messages_are_errors(cut in 0usize..9) {
            let whole = syn("cluster");
            prop_assert!(decode(&whole[..cut]).is_err());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn foreign_syn_is_answered_bad_cluster_and_never_reaches_chitchat() {
        let (mut socket, inbox, recorder) = socket("A").await;
        inbox.deliver(addr(2), syn("B"));
        inbox.deliver(addr(3), syn("A"));
        let (from, message) = socket.recv().await.unwrap();
        assert_eq!(from, addr(3));
        assert!(matches!(message, ChitchatMessage::Syn { .. }));
        let sent = recorder.0.lock().clone();
        assert_eq!(sent, vec![(addr(2), encode(&ChitchatMessage::BadCluster))]);
        assert_eq!(inbox.counters().snapshot().foreign_cluster, 1);
        assert_eq!(inbox.counters().snapshot().received, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn garbage_is_counted_and_skipped() {
        let (mut socket, inbox, _) = socket("A").await;
        inbox.deliver(addr(2), Bytes::from_static(b"junk"));
        inbox.deliver(addr(2), syn("A"));
        let (_, message) = socket.recv().await.unwrap();
        assert!(matches!(message, ChitchatMessage::Syn { .. }));
        assert_eq!(inbox.counters().snapshot().undecodable, 1);
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_is_queued_while_closed_and_overflow_is_counted() {
        let (_socket, inbox, _) = socket("A").await;
        inbox.close();
        inbox.deliver(addr(2), syn("A"));
        assert_eq!(inbox.counters().snapshot().inbox_overflow, 0);
        let _receiver = inbox.open();
        for _ in 0..INBOX_CAPACITY + 3 {
            inbox.deliver(addr(2), syn("A"));
        }
        assert_eq!(inbox.counters().snapshot().inbox_overflow, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn refusals_are_logged_once_a_minute_per_peer() {
        let mut log = RefusalLog::default();
        assert!(log.should_log(addr(2)));
        assert!(!log.should_log(addr(2)));
        assert!(log.should_log(addr(3)));
        tokio::time::advance(REFUSAL_LOG_PERIOD).await;
        assert!(log.should_log(addr(2)));
    }

    #[tokio::test(start_paused = true)]
    async fn send_failures_to_one_peer_keep_gossip_running_but_shutdown_stops_it() {
        struct Failing(WireError);
        impl Wire for Failing {
            fn send(&self, _: SocketAddr, _: Bytes) -> Result<(), WireError> {
                Err(self.0.clone())
            }
        }
        for (error, fatal) in [
            (WireError::Unreachable("down".into()), false),
            (WireError::Shutdown, true),
        ] {
            let transport = WireTransport {
                wire: Arc::new(Failing(error)),
                inbox: Arc::new(Inbox::default()),
                cluster_name: "A".into(),
                partners: None,
            };
            let mut socket = transport.open(addr(1)).await.unwrap();
            let result = socket.send(addr(2), ChitchatMessage::BadCluster).await;
            assert_eq!(result.is_err(), fatal);
        }
    }
}
