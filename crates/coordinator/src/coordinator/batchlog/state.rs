//! What the batchlog keeps while the node runs: its replays (one at a time) and their count.
use std::sync::atomic::AtomicU64;

/// The batchlog of this node: its replays (one at a time) and what they did.
#[derive(Default)]
pub(crate) struct Batchlog {
    pub replaying: tokio::sync::Mutex<()>,
    pub replayed: AtomicU64,
    /// `batchlog_replay_throttle` in bytes per second for the whole node; 0: unthrottled.
    pub throttle: AtomicU64,
}

/// What the batchlog did since the node started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchlogStats {
    /// Batches replayed (Cassandra's `TotalBatchesReplayed`).
    pub replayed: u64,
}
