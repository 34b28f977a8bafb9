//! Hinted handoff, as Cassandra's `org.apache.cassandra.hints`: a write that misses a replica
//! (down, or timed out) is kept here as a hint and replayed when the replica is back.
//!
//! - [`HintsService`]: stores hints ([`HintsService::store`]), answers whether to hint
//!   ([`HintsService::should_hint`]), delivers when told a host is alive and every 10 s, and
//!   holds the nodetool switches and metrics.
//! - Per host a `HintsStore`: a buffer, written and synced every `hints_flush_period` to the
//!   host's current file `<host_id>-<timestamp>-<version>.hints` (header: `HintsDescriptor`),
//!   closed at `max_hints_file_size` or when delivery starts; records are
//!   `[size][CRC32(size)][payload][CRC32(payload)]` (`HintsWriter`, `HintsReader`).
//! - `HintsDispatcher` sends a file's hints in order through [`Deliver`] (over
//!   `net::Messaging` with [`MessagingDeliver`]), throttled, resuming after a failure at the
//!   first hint not acknowledged.
//! - The replica decodes what it receives with [`decode_hint`].
//!
//! See docs/architecture.md ("Hints").
mod catalog;
mod config;
mod deliver;
mod descriptor;
mod dispatcher;
mod hint;
mod messaging;
mod metrics;
mod reader;
mod record;
mod service;
mod store;
mod tasks;
mod throttle;
mod writer;

pub use config::{Compression, HintsConfig};
pub use deliver::{BoxFuture, Deliver, DeliveryError};
pub use dispatcher::GcGrace;
pub use hint::{decode_hint, encode as encode_hint, HintError};
pub use messaging::MessagingDeliver;
pub use metrics::HintsMetrics;
pub use service::{HandoffStatus, HintsEnv, HintsService, PendingHints, StoreError};
pub use tasks::DISPATCH_INTERVAL;
