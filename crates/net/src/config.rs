//! Settings of a node's messaging service.
use std::net::SocketAddr;
use std::time::Duration;

use clock::SharedClock;

pub type HostId = uuid::Uuid;

/// A node's identity and the limits `cassandra.yaml` sets.
#[derive(Clone, Debug)]
pub struct NetConfig {
    pub cluster_name: String,
    pub host_id: HostId,
    /// listen_address:storage_port. Outbound sockets are bound to this address before connect.
    pub listen: SocketAddr,
    /// LZ4 frames (internode_compression != none).
    pub compression: bool,
    /// Bounds the TCP connect and the handshake together.
    pub connect_timeout: Duration,
    /// Larger messages are refused before sending and, on read, before allocating.
    pub max_message_bytes: usize,
    /// Per peer and class; beyond it sends fail `Overloaded`.
    pub send_queue_bytes: usize,
    /// This node's wall clock, which the Echo verb answers with.
    pub clock: SharedClock,
}

impl NetConfig {
    /// Cassandra's defaults: internode_tcp_connect_timeout 2 s, no compression.
    pub fn new(cluster_name: impl Into<String>, host_id: HostId, listen: SocketAddr) -> NetConfig {
        NetConfig {
            cluster_name: cluster_name.into(),
            host_id,
            listen,
            compression: false,
            connect_timeout: Duration::from_secs(2),
            max_message_bytes: 128 * 1024 * 1024,
            send_queue_bytes: 16 * 1024 * 1024,
            clock: SharedClock::default(),
        }
    }
}

/// Timings and bounds that rarely need changing; tests and simulations shorten them.
#[derive(Clone, Debug)]
pub struct Tuning {
    /// A connection that has sent something and heard nothing back for this long is pinged.
    pub keepalive: Duration,
    /// ... and declared dead (closed, its requests failed `Unreachable`) after this long.
    pub dead_after: Duration,
    /// Reconnect backoff: the first delay after a failed connect, doubled per failure.
    pub reconnect_min: Duration,
    pub reconnect_max: Duration,
    /// Per inbound connection: bytes of requests being processed (read and not yet answered);
    /// beyond it the connection stops reading.
    pub inbound_bytes: usize,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            keepalive: Duration::from_secs(5),
            dead_after: Duration::from_secs(20),
            reconnect_min: Duration::from_millis(100),
            reconnect_max: Duration::from_secs(5),
            inbound_bytes: 16 * 1024 * 1024,
        }
    }
}

/// The node at the other end of a connection, as its handshake told us.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Peer {
    /// The peer's listen address (not the connection's ephemeral source port).
    pub addr: SocketAddr,
    pub host_id: HostId,
}
