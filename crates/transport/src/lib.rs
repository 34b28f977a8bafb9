//! CQL native protocol server, versions 3, 4 and 5.
//!
//! Owns everything between the socket and the [`QueryHandler`]: legacy envelope framing and
//! v5 segment framing (CRC24/CRC32, LZ4), version negotiation, the STARTUP handshake, request
//! decoding, response/error/event encoding, per-connection concurrency, and the registry of
//! live clients.
//!
//! Overload is bounded (`limits`, as Cassandra's `ClientResourceLimits`): request bytes in
//! flight, held as a body's bytes arrive, in all and per client address; connection caps; the
//! native-transport rate limit. `clock` closes stalled and idle clients.
//!
//! The codec is our own rather than the `cassandra-protocol` crate: that crate copies buffers
//! per frame (`split_off`) and reports errors as strings, while a server needs stream-id-aware
//! ProtocolErrors, per-frame size limits that skip oversized bodies without buffering them,
//! and version negotiation that answers the way drivers expect in order to downgrade.
mod body;
mod budget;
mod client;
mod clock;
mod compression;
mod connection;
mod crc;
mod error_body;
mod event;
mod framer;
mod handler;
mod header;
mod limits;
mod options;
mod panics;
mod rate;
mod request;
mod response;
mod result;
mod segment;
mod server;
mod wire;
mod writer;

pub use client::{ClientInfo, ClientState, Clients, DriverInfo};
pub use event::{Event, TopologyChangeKind};
pub use handler::QueryHandler;
pub use limits::{LimitStats, Limits};
pub use panics::install_hook as install_panic_hook;
pub use request::EventKind;
pub use server::{serve, Server, ServerConfig};

/// The inbound decoders, exposed for the `fuzz` crate's targets only: not an API.
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::compression::{append_compressed, decompress_body};
    pub use crate::framer::{Fatal, Framer, Inbound, LegacyDecoder, V5Decoder};
    pub use crate::header::{Opcode, FLAG_COMPRESSED, HEADER_LEN};
    pub use crate::request::decode_request;
    pub use crate::segment::SegmentPacker;
}
