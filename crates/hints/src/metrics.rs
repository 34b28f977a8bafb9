//! Counters and gauges of the service, for the admin API's metrics (Cassandra's
//! `StorageMetrics.totalHints`, `totalHintsInProgress` and `HintsServiceMetrics`).
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use net::HostId;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HintsMetrics {
    /// Hints stored (`totalHints`).
    pub written: u64,
    /// Hints accepted but not yet written to a file (`totalHintsInProgress`).
    pub in_progress: u64,
    /// Hints the replica acknowledged (`hintsSucceeded`).
    pub dispatched: u64,
    /// Deliveries that failed (`hintsFailed`).
    pub failed: u64,
    /// Deliveries with no answer in time (`hintsTimedOut`).
    pub timed_out: u64,
    /// Hints dropped unsent: older than their table's gc grace, or their table is gone.
    pub expired: u64,
    /// Records or files found corrupt when read.
    pub corrupt: u64,
    /// Hints refused (window passed, size limit, too many buffered) or lost to a disk error.
    pub not_stored: u64,
    /// Bytes of hints pending per host, on disk and buffered.
    pub bytes_on_disk: BTreeMap<HostId, u64>,
}

#[derive(Default)]
pub(crate) struct Counters {
    pub written: AtomicU64,
    pub dispatched: AtomicU64,
    pub failed: AtomicU64,
    pub timed_out: AtomicU64,
    pub expired: AtomicU64,
    pub corrupt: AtomicU64,
    pub not_stored: AtomicU64,
}

impl Counters {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Relaxed);
    }

    /// The counters into `metrics` (its gauges are the caller's).
    pub fn fill(&self, metrics: &mut HintsMetrics) {
        metrics.written = self.written.load(Relaxed);
        metrics.dispatched = self.dispatched.load(Relaxed);
        metrics.failed = self.failed.load(Relaxed);
        metrics.timed_out = self.timed_out.load(Relaxed);
        metrics.expired = self.expired.load(Relaxed);
        metrics.corrupt = self.corrupt.load(Relaxed);
        metrics.not_stored = self.not_stored.load(Relaxed);
    }
}
