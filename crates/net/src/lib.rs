//! Internode messaging: one framed protocol over TCP between the nodes of a cluster.
//!
//! Knows nothing of mutations, schema or Raft: payloads are `Bytes`, and the crate owning a
//! verb owns its encoding. Each peer gets three connections (urgent, small, large) so a large
//! message never delays a heartbeat; every frame carries CRC32s on header and payload; a
//! versioned handshake refuses nodes of another cluster. See docs/architecture.md.
mod config;
mod connection;
mod context;
mod error;
mod frame;
mod handler;
mod handshake;
mod inbound;
mod messaging;
mod network;
mod outbound;
#[cfg(feature = "sim")]
mod sim;
mod sim_rng;
mod stats;
mod verb;
mod wait;

pub use config::{HostId, NetConfig, Peer, Tuning};
pub use error::{NetError, RemoteError};
pub use handler::{handler_fn, weak_handler, Handler, HandlerFuture};
pub use handshake::{MESSAGING_VERSION, MIN_MESSAGING_VERSION};
pub use messaging::{wall_clock_of, Messaging};
pub use network::{AsyncStream, BoxFuture, BoxStream, Listener, Network, TokioNetwork};
#[cfg(feature = "sim")]
pub use sim::{drive_client, with_sim, TurmoilNetwork};
pub use sim_rng::SimRng;
pub use stats::{LinkStats, NetStats, VerbStats};
pub use verb::{Class, Verb, LARGE_MESSAGE_BYTES};
pub use wait::{QueueWait, WAIT_BOUNDS_MICROS};

/// The frame and handshake decoders, exposed for the `fuzz` crate's targets only: not an API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::frame::{encode, read_frame, Frame, FrameError, Kind, Limits};
    pub use crate::handshake::{accept, initiate, HandshakeError, Hello};
}
