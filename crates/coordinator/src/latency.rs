//! Latency histograms: fixed buckets in atomic counters, striped per thread, so recording
//! never takes a lock.
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the latency buckets, in microseconds (an overflow bucket follows).
pub const LATENCY_BOUNDS_MICROS: [u64; 16] = [
    100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000,
];

const BUCKETS: usize = LATENCY_BOUNDS_MICROS.len() + 1;

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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

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
}
