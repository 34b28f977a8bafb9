//! What the storage proxy did on the cluster path, as Cassandra counts it: timeouts,
//! unavailables and failures per request kind (ClientRequest metrics), speculative retries,
//! digest mismatches and read repairs, each replica's latency as seen from here, and how many
//! single-partition requests reached a replica of their key (drivers' token-aware routing).
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::RwLock;
use types::CqlError;

use crate::latency::{LatencyHistogram, LatencySnapshot};

/// How a request failed, as ClientRequest metrics name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Timeouts,
    Unavailables,
    Failures,
}

impl Outcome {
    pub const ALL: [Outcome; 3] = [Outcome::Timeouts, Outcome::Unavailables, Outcome::Failures];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Timeouts => "timeouts",
            Outcome::Unavailables => "unavailables",
            Outcome::Failures => "failures",
        }
    }

    fn of(error: &CqlError) -> Option<Outcome> {
        match error {
            CqlError::ReadTimeout { .. }
            | CqlError::WriteTimeout { .. }
            | CqlError::CasWriteTimeout { .. }
            | CqlError::CasWriteUnknown { .. } => Some(Outcome::Timeouts),
            CqlError::Unavailable { .. } => Some(Outcome::Unavailables),
            CqlError::ReadFailure { .. } | CqlError::WriteFailure { .. } => Some(Outcome::Failures),
            _ => None,
        }
    }
}

/// The storage proxy's counters.
#[derive(Debug, Default)]
pub struct ProxyMetrics {
    pub speculative_retries: AtomicU64,
    pub digest_mismatches: AtomicU64,
    /// Repair mutations sent to replicas that missed something.
    pub read_repairs: AtomicU64,
    /// Single-partition requests this node coordinated as a replica of the key / not.
    pub routed_to_replica: AtomicU64,
    pub routed_elsewhere: AtomicU64,
    errors: [[AtomicU64; 3]; 5],
    replicas: RwLock<BTreeMap<IpAddr, Arc<ReplicaStats>>>,
}

/// How one replica answers this coordinator: a latency histogram, and a moving score (the
/// dynamic snitch's) that follows its recent latency — writes, sent to every replica, keep
/// it fresh for replicas reads avoid.
#[derive(Debug, Default)]
pub struct ReplicaStats {
    pub latency: LatencyHistogram,
    score_micros: AtomicU64,
}

impl ReplicaStats {
    pub fn record(&self, elapsed: std::time::Duration) {
        self.latency.record(elapsed);
        let sample = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let blend = |old: u64| Some(old / 4 * 3 + sample / 4);
        let _ = self.score_micros.fetch_update(Relaxed, Relaxed, blend);
    }

    /// The replica's recent latency class: 0 under a millisecond, then one more per doubling,
    /// so replicas whose latencies differ by less than about twice are not told apart.
    pub fn score_class(&self) -> u32 {
        let millis = self.score_micros.load(Relaxed) / 1000;
        match millis {
            0 => 0,
            m => m.ilog2() + 1,
        }
    }
}

impl ProxyMetrics {
    /// Counts a failed client request of `kind`; whether it was one of the outcomes counted
    /// (a timeout, an unavailable or a failure).
    pub fn record_error(&self, kind: RequestKind, error: &CqlError) -> bool {
        let Some(outcome) = Outcome::of(error) else {
            return false;
        };
        self.errors[kind as usize][outcome as usize].fetch_add(1, Relaxed);
        true
    }

    /// Failed requests of `kind`, per outcome.
    pub fn errors(&self, kind: RequestKind) -> Vec<(Outcome, u64)> {
        Outcome::ALL
            .iter()
            .map(|&o| (o, self.errors[kind as usize][o as usize].load(Relaxed)))
            .collect()
    }

    /// Counts a single-partition request by whether this node is a replica of its key.
    pub fn count_routing(&self, local_is_replica: bool) {
        let counter = match local_is_replica {
            true => &self.routed_to_replica,
            false => &self.routed_elsewhere,
        };
        counter.fetch_add(1, Relaxed);
    }

    /// How the replica at `addr` has been answering.
    pub fn replica(&self, addr: IpAddr) -> Arc<ReplicaStats> {
        if let Some(h) = self.replicas.read().get(&addr) {
            return h.clone();
        }
        self.replicas.write().entry(addr).or_default().clone()
    }

    /// The latency class of the replica at `addr` (0 when never asked).
    pub fn score_class(&self, addr: IpAddr) -> u32 {
        self.replicas
            .read()
            .get(&addr)
            .map_or(0, |r| r.score_class())
    }

    /// Every replica's latency so far.
    pub fn replicas(&self) -> Vec<(IpAddr, LatencySnapshot)> {
        let replicas = self.replicas.read();
        replicas
            .iter()
            .map(|(a, r)| (*a, r.latency.snapshot()))
            .collect()
    }
}

/// What a client request did, for the `ClientRequest` latencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    Read,
    Range,
    Write,
    /// Lightweight transactions: SERIAL reads and compare-and-sets.
    CasRead,
    CasWrite,
}

impl RequestKind {
    pub const ALL: [RequestKind; 5] = [
        RequestKind::Read,
        RequestKind::Range,
        RequestKind::Write,
        RequestKind::CasRead,
        RequestKind::CasWrite,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RequestKind::Read => "read",
            RequestKind::Range => "range",
            RequestKind::Write => "write",
            RequestKind::CasRead => "cas_read",
            RequestKind::CasWrite => "cas_write",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use types::Consistency;

    #[test]
    fn errors_are_counted_per_kind_and_outcome() {
        let metrics = ProxyMetrics::default();
        let unavailable = CqlError::Unavailable {
            message: String::new(),
            consistency: Consistency::All,
            required: 3,
            alive: 2,
        };
        assert!(metrics.record_error(RequestKind::Write, &unavailable));
        assert!(!metrics.record_error(RequestKind::Write, &CqlError::invalid("not counted")));
        let writes = metrics.errors(RequestKind::Write);
        assert_eq!(writes[1], (Outcome::Unavailables, 1));
        assert_eq!(writes[0].1 + writes[2].1, 0);
        assert!(metrics
            .errors(RequestKind::Read)
            .iter()
            .all(|(_, n)| *n == 0));
    }

    #[test]
    fn replica_latencies_are_kept_per_address() {
        let metrics = ProxyMetrics::default();
        let addr = IpAddr::from([127, 0, 0, 2]);
        metrics.replica(addr).record(Duration::from_millis(2));
        metrics.replica(addr).record(Duration::from_millis(3));
        assert_eq!(metrics.replicas()[0].1.count, 2);
        assert_eq!(metrics.score_class(addr), 1); // about 1.1 ms after 2 ms and 3 ms
        for _ in 0..20 {
            metrics.replica(addr).record(Duration::from_millis(40));
        }
        assert_eq!(metrics.score_class(addr), 6); // 32..64 ms
        assert_eq!(metrics.score_class(IpAddr::from([127, 0, 0, 3])), 0);
    }
}
