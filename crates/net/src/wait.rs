//! How long received messages wait between their arrival (the frame read whole) and the start
//! of their handler, per verb: `nodetool tpstats`'s "Latencies waiting in queue". Kept in
//! Cassandra's `EstimatedHistogram` buckets, whose bounds grow by about 1.2 from 1 µs.
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// Bucket upper bounds in microseconds: 1, 2, 3, …, 535, 642, 770, … up to about 108 s, each
/// the one before times 1.2 rounded (at least one more), as Cassandra's offsets.
pub const WAIT_BOUNDS_MICROS: [u64; 98] = bounds();

const fn bounds() -> [u64; 98] {
    let mut out = [1u64; 98];
    let mut i = 1;
    while i < out.len() {
        let grown = (12 * out[i - 1] + 5) / 10;
        out[i] = if grown > out[i - 1] {
            grown
        } else {
            out[i - 1] + 1
        };
        i += 1;
    }
    out
}

/// One verb's waits: a count per bucket of [`WAIT_BOUNDS_MICROS`], then an overflow bucket,
/// and their sum.
pub(crate) struct WaitHistogram {
    buckets: [AtomicU64; WAIT_BOUNDS_MICROS.len() + 1],
    sum_micros: AtomicU64,
}

impl Default for WaitHistogram {
    fn default() -> Self {
        WaitHistogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_micros: AtomicU64::new(0),
        }
    }
}

impl WaitHistogram {
    pub fn record(&self, waited: Duration) {
        let micros = u64::try_from(waited.as_micros()).unwrap_or(u64::MAX);
        let bucket = WAIT_BOUNDS_MICROS.partition_point(|&bound| bound < micros);
        self.buckets[bucket].fetch_add(1, Relaxed);
        self.sum_micros.fetch_add(micros, Relaxed);
    }

    pub fn snapshot(&self) -> QueueWait {
        let mut buckets: Vec<u64> = self.buckets.iter().map(|b| b.load(Relaxed)).collect();
        if buckets.iter().all(|&n| n == 0) {
            buckets.clear();
        }
        QueueWait {
            buckets,
            sum_micros: self.sum_micros.load(Relaxed),
        }
    }
}

/// A copy of one verb's queue waits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueWait {
    /// Messages per bucket of [`WAIT_BOUNDS_MICROS`] (not cumulative), overflow last; empty
    /// for a verb never received.
    pub buckets: Vec<u64>,
    /// The waits added up (a Prometheus summary's `_sum`).
    pub sum_micros: u64,
}

impl QueueWait {
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// The wait below which a fraction `q` of the messages fall, in microseconds: the upper
    /// bound of the bucket holding it (the overflow bucket reports the last bound); 0 when
    /// nothing was received.
    pub fn percentile_micros(&self, q: f64) -> u64 {
        let count = self.count();
        if count == 0 {
            return 0;
        }
        let rank = ((count as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        let bucket = self.buckets.iter().position(|&n| {
            seen += n;
            seen >= rank
        });
        bound(bucket.unwrap_or(self.buckets.len()))
    }

    /// The upper bound of the highest bucket used; 0 when nothing was received.
    pub fn max_micros(&self) -> u64 {
        self.buckets.iter().rposition(|&n| n > 0).map_or(0, bound)
    }
}

fn bound(bucket: usize) -> u64 {
    WAIT_BOUNDS_MICROS[bucket.min(WAIT_BOUNDS_MICROS.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_cassandras_offsets() {
        assert_eq!(
            WAIT_BOUNDS_MICROS[..12],
            [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17]
        );
        assert!(WAIT_BOUNDS_MICROS.contains(&642) && WAIT_BOUNDS_MICROS.contains(&17084));
        assert_eq!(WAIT_BOUNDS_MICROS[97], 107_964_792);
    }

    #[test]
    fn percentiles_are_bucket_bounds() {
        let h = WaitHistogram::default();
        assert_eq!(h.snapshot().percentile_micros(0.5), 0);
        assert_eq!(h.snapshot().max_micros(), 0);
        for micros in [3, 3, 9, 600] {
            h.record(Duration::from_micros(micros));
        }
        let s = h.snapshot();
        assert_eq!((s.count(), s.sum_micros), (4, 615));
        assert_eq!(s.percentile_micros(0.5), 3);
        assert_eq!(s.percentile_micros(0.75), 10);
        assert_eq!(s.percentile_micros(0.99), 642);
        assert_eq!(s.max_micros(), 642);
        h.record(Duration::from_secs(1000));
        assert_eq!(h.snapshot().max_micros(), 107_964_792);
    }
}
