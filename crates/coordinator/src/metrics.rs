//! Request metrics: client-request latency per kind and consistency level (Cassandra's
//! `ClientRequest` metrics) and local reads and writes per table (its `Table` metrics), kept
//! in atomic counters and fixed-bucket latency histograms so recording never takes a lock (the
//! per-table map is replaced whole when a table is first used).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use mutation::TableId;
use types::Consistency;

/// Upper bounds of the latency buckets, in microseconds (an overflow bucket follows).
pub const LATENCY_BOUNDS_MICROS: [u64; 16] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000,
];

const BUCKETS: usize = LATENCY_BOUNDS_MICROS.len() + 1;

/// Every consistency level, in protocol-code order (the index of its histograms).
pub const CONSISTENCY_LEVELS: [Consistency; 11] = [
    Consistency::Any,
    Consistency::One,
    Consistency::Two,
    Consistency::Three,
    Consistency::Quorum,
    Consistency::All,
    Consistency::LocalQuorum,
    Consistency::EachQuorum,
    Consistency::Serial,
    Consistency::LocalSerial,
    Consistency::LocalOne,
];

/// Stripes of a histogram: each thread records into its own (threads share when there are
/// more of them), so that two cores recording every request never contend for one cache line.
const STRIPES: usize = 4;

/// A latency histogram: a sum and fixed buckets, all atomic, striped per thread.
#[derive(Debug, Default)]
pub struct LatencyHistogram {
    stripes: [Stripe; STRIPES],
}

#[derive(Debug, Default)]
#[repr(align(128))]
struct Stripe {
    sum_micros: AtomicU64,
    buckets: [AtomicU64; BUCKETS],
}

/// A copy of a [`LatencyHistogram`]'s counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LatencySnapshot {
    pub count: u64,
    pub sum_micros: u64,
    /// Observations per bucket of [`LATENCY_BOUNDS_MICROS`] (not cumulative), overflow last.
    pub buckets: Vec<u64>,
}

impl LatencyHistogram {
    pub fn record(&self, elapsed: Duration) {
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        let bucket = LATENCY_BOUNDS_MICROS.partition_point(|&bound| bound < micros);
        let stripe = &self.stripes[storage::stripes::thread_stripe(STRIPES)];
        stripe.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        stripe.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// The counters, summed over the stripes; `count` is the buckets' total, so the two always
    /// agree.
    pub fn snapshot(&self) -> LatencySnapshot {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let buckets: Vec<u64> = (0..BUCKETS)
            .map(|b| self.stripes.iter().map(|s| load(&s.buckets[b])).sum())
            .collect();
        LatencySnapshot {
            count: buckets.iter().sum(),
            sum_micros: self.stripes.iter().map(|s| load(&s.sum_micros)).sum(),
            buckets,
        }
    }
}

impl LatencySnapshot {
    /// Mean latency in milliseconds; `None` before the first observation.
    pub fn mean_millis(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_micros as f64 / self.count as f64 / 1000.0)
    }

    /// The latency below which a fraction `q` of the observations fall, as the upper bound
    /// of the bucket holding it (the overflow bucket reports the last bound); 0 when empty.
    pub fn quantile_micros(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((self.count as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        let bucket = self
            .buckets
            .iter()
            .position(|&n| {
                seen += n;
                seen >= rank
            })
            .unwrap_or(self.buckets.len());
        bucket_bound(bucket)
    }

    /// The upper bound of the highest bucket used; 0 when empty.
    pub fn max_micros(&self) -> u64 {
        self.buckets
            .iter()
            .rposition(|&n| n > 0)
            .map_or(0, bucket_bound)
    }
}

/// The upper bound of bucket `i`; the overflow bucket reports the last bound.
fn bucket_bound(i: usize) -> u64 {
    LATENCY_BOUNDS_MICROS[i.min(LATENCY_BOUNDS_MICROS.len() - 1)]
}

/// Local reads and writes of one table.
#[derive(Debug, Default)]
pub struct TableMetrics {
    /// Single-partition reads.
    pub reads: LatencyHistogram,
    /// Partition-range reads (scans).
    pub range_reads: LatencyHistogram,
    /// Mutations applied (one per partition written).
    pub writes: LatencyHistogram,
}

/// What a client request did, for the `ClientRequest` latencies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    Read,
    Range,
    Write,
}

impl RequestKind {
    pub const ALL: [RequestKind; 3] = [RequestKind::Read, RequestKind::Range, RequestKind::Write];

    pub fn name(self) -> &'static str {
        match self {
            RequestKind::Read => "read",
            RequestKind::Range => "range",
            RequestKind::Write => "write",
        }
    }
}

/// The coordinator's request metrics.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: [[LatencyHistogram; CONSISTENCY_LEVELS.len()]; 3],
    tables: ArcSwap<HashMap<TableId, Arc<TableMetrics>>>,
    proxy: Arc<crate::proxy_metrics::ProxyMetrics>,
}

impl Metrics {
    /// The storage proxy's cluster-path counters.
    pub fn proxy(&self) -> &Arc<crate::proxy_metrics::ProxyMetrics> {
        &self.proxy
    }

    pub fn record_request(&self, kind: RequestKind, cl: Consistency, elapsed: Duration) {
        let level = CONSISTENCY_LEVELS
            .iter()
            .position(|&c| c == cl)
            .unwrap_or(0);
        self.requests[kind as usize][level].record(elapsed);
    }

    /// Latencies of one kind of client request, per consistency level used at least once.
    pub fn requests(&self, kind: RequestKind) -> Vec<(Consistency, LatencySnapshot)> {
        CONSISTENCY_LEVELS
            .iter()
            .zip(&self.requests[kind as usize])
            .map(|(&cl, h)| (cl, h.snapshot()))
            .filter(|(_, s)| s.count > 0)
            .collect()
    }

    /// The metrics of `table`, created on first use.
    pub fn table(&self, table: TableId) -> Arc<TableMetrics> {
        if let Some(metrics) = self.tables.load().get(&table) {
            return metrics.clone();
        }
        let created = Arc::new(TableMetrics::default());
        self.tables.rcu(|tables| {
            let mut tables = HashMap::clone(tables);
            tables.entry(table).or_insert_with(|| created.clone());
            tables
        });
        self.table_if_used(table).unwrap_or(created)
    }

    /// Records a request of `kind` on `table` that took `elapsed`.
    pub fn record_table(&self, table: TableId, kind: RequestKind, elapsed: Duration) {
        let record = |metrics: &TableMetrics| {
            let histogram = match kind {
                RequestKind::Read => &metrics.reads,
                RequestKind::Range => &metrics.range_reads,
                RequestKind::Write => &metrics.writes,
            };
            histogram.record(elapsed);
        };
        match self.tables.load().get(&table) {
            Some(metrics) => record(metrics),
            None => record(&self.table(table)),
        }
    }

    /// The metrics of `table` if it was ever read or written.
    pub fn table_if_used(&self, table: TableId) -> Option<Arc<TableMetrics>> {
        self.tables.load().get(&table).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_by_upper_bound() {
        let h = LatencyHistogram::default();
        h.record(Duration::from_micros(100));
        h.record(Duration::from_micros(101));
        h.record(Duration::from_secs(60));
        let s = h.snapshot();
        assert_eq!(
            (s.count, s.buckets[0], s.buckets[1], s.buckets[16]),
            (3, 1, 1, 1)
        );
        assert_eq!(s.sum_micros, 60_000_201);
    }

    #[test]
    fn a_snapshot_sums_what_every_thread_recorded() {
        let h = Arc::new(LatencyHistogram::default());
        let threads: Vec<_> = (0..2 * STRIPES as u64)
            .map(|t| {
                let h = Arc::clone(&h);
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        h.record(Duration::from_micros(200 + t));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let s = h.snapshot();
        let n = 2 * STRIPES as u64;
        assert_eq!((s.count, s.buckets[1]), (n * 1000, n * 1000));
        assert_eq!(s.sum_micros, 1000 * (0..n).map(|t| 200 + t).sum::<u64>());
    }

    #[test]
    fn quantiles_are_bucket_upper_bounds() {
        let h = LatencyHistogram::default();
        assert_eq!(h.snapshot().quantile_micros(0.5), 0);
        assert_eq!(h.snapshot().max_micros(), 0);
        for micros in [50, 60, 700, 20_000_000] {
            h.record(Duration::from_micros(micros));
        }
        let s = h.snapshot();
        assert_eq!(s.quantile_micros(0.5), 100);
        assert_eq!(s.quantile_micros(0.75), 1_000);
        assert_eq!(s.quantile_micros(0.99), 10_000_000);
        assert_eq!(s.max_micros(), 10_000_000);
    }

    #[test]
    fn mean_is_none_before_any_observation() {
        let h = LatencyHistogram::default();
        assert_eq!(h.snapshot().mean_millis(), None);
        h.record(Duration::from_micros(1500));
        assert_eq!(h.snapshot().mean_millis(), Some(1.5));
    }

    #[test]
    fn requests_are_kept_per_consistency_level() {
        let m = Metrics::default();
        m.record_request(
            RequestKind::Write,
            Consistency::Quorum,
            Duration::from_micros(5),
        );
        m.record_request(
            RequestKind::Write,
            Consistency::One,
            Duration::from_micros(5),
        );
        let levels: Vec<_> = m
            .requests(RequestKind::Write)
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        assert_eq!(levels, vec![Consistency::One, Consistency::Quorum]);
        assert!(m.requests(RequestKind::Read).is_empty());
    }
}
