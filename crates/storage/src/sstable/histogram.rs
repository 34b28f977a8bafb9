//! Histograms kept in Statistics: a bounded streaming histogram of tombstone drop times (the
//! Ben-Haim/Tom-Tov algorithm Cassandra uses for `estimatedTombstoneDropTime`) and an
//! exponential-bucket histogram of partition sizes (Cassandra's `EstimatedHistogram`).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use bytes::BufMut;

use crate::error::Result;
use crate::sstable::format::Decoder;

/// Most bins a [`StreamingHistogram`] keeps, as Cassandra's `TOMBSTONE_HISTOGRAM_BIN_SIZE`.
pub const MAX_BINS: usize = 100;
/// Drop times are rounded up to this many seconds before insertion, as Cassandra does.
pub const ROUNDING_SECONDS: i64 = 60;

/// Approximate counts of values (local deletion times), in at most [`MAX_BINS`] bins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamingHistogram {
    bins: BTreeMap<i64, u64>,
}

impl StreamingHistogram {
    /// Counts one value.
    pub fn add(&mut self, value: i64) {
        let rounded = value
            .div_euclid(ROUNDING_SECONDS)
            .saturating_add(i64::from(value.rem_euclid(ROUNDING_SECONDS) != 0));
        *self
            .bins
            .entry(rounded.saturating_mul(ROUNDING_SECONDS))
            .or_default() += 1;
        if self.bins.len() > MAX_BINS {
            self.merge_closest();
        }
    }

    /// Merges the two adjacent bins whose points are closest into their weighted mean.
    fn merge_closest(&mut self) {
        let points: Vec<(i64, u64)> = self.bins.iter().map(|(p, c)| (*p, *c)).collect();
        let Some(pair) = points
            .windows(2)
            .min_by_key(|w| w[1].0.saturating_sub(w[0].0))
            .map(|w| (w[0], w[1]))
        else {
            return;
        };
        let ((p1, c1), (p2, c2)) = pair;
        self.bins.remove(&p1);
        self.bins.remove(&p2);
        let total = c1 + c2;
        let mean =
            (i128::from(p1) * i128::from(c1) + i128::from(p2) * i128::from(c2)) / i128::from(total);
        *self.bins.entry(mean as i64).or_default() += total;
    }

    /// Estimated number of values strictly below `bound`.
    pub fn count_below(&self, bound: i64) -> u64 {
        self.bins.range(..bound).map(|(_, c)| c).sum()
    }

    pub fn total(&self) -> u64 {
        self.bins.values().sum()
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.put_u32(self.bins.len() as u32);
        for (point, count) in &self.bins {
            out.put_i64(*point);
            out.put_u64(*count);
        }
    }

    pub(crate) fn decode(d: &mut Decoder<'_>) -> Result<StreamingHistogram> {
        let count = d.count(16)?;
        let mut bins = BTreeMap::new();
        for _ in 0..count {
            let point = d.i64()?;
            bins.insert(point, d.u64()?);
        }
        Ok(StreamingHistogram { bins })
    }
}

/// Number of buckets of an [`EstimatedHistogram`] (covers values up to ~10^12).
pub const SIZE_BUCKETS: usize = 150;

/// Counts of values in buckets growing by ~1.2x; the last bucket collects overflow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EstimatedHistogram {
    counts: Vec<u64>,
}

impl Default for EstimatedHistogram {
    fn default() -> Self {
        EstimatedHistogram {
            counts: vec![0; SIZE_BUCKETS + 1],
        }
    }
}

/// Upper bounds of the buckets: 1, 2, 3, ... growing by 1.2x, as Cassandra's offsets.
/// Computed once: every flushed or compacted partition looks its size up here.
static OFFSETS: LazyLock<Vec<u64>> = LazyLock::new(|| {
    std::iter::successors(Some(1u64), |last| {
        Some((*last as f64 * 1.2).round().max(*last as f64 + 1.0) as u64)
    })
    .take(SIZE_BUCKETS)
    .collect()
});

fn bucket_offsets() -> impl Iterator<Item = u64> {
    OFFSETS.iter().copied()
}

impl EstimatedHistogram {
    pub fn add(&mut self, value: u64) {
        let index = OFFSETS.partition_point(|&bound| bound < value);
        if let Some(count) = self.counts.get_mut(index) {
            *count += 1;
        }
    }

    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Adds `other`'s counts to these (the histogram of several SSTables).
    pub fn merge(&mut self, other: &EstimatedHistogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
    }

    /// The mean, each value counted as its bucket's upper bound, rounded up (Cassandra's
    /// EstimatedHistogram.mean; values past the last bucket are left out); 0 when empty.
    pub fn mean(&self) -> u64 {
        let (mut count, mut sum) = (0u64, 0u128);
        for (bound, n) in bucket_offsets().zip(&self.counts) {
            count += n;
            sum += u128::from(bound) * u128::from(*n);
        }
        if count == 0 {
            return 0;
        }
        sum.div_ceil(u128::from(count)) as u64
    }

    /// Upper bound of the highest non-empty bucket (`u64::MAX` if values overflowed).
    pub fn max(&self) -> u64 {
        match self.counts.iter().rposition(|c| *c > 0) {
            None => 0,
            Some(SIZE_BUCKETS) => u64::MAX,
            Some(i) => OFFSETS.get(i).copied().unwrap_or(u64::MAX),
        }
    }

    /// Upper bound of the bucket holding the `p`-th quantile (0.0..=1.0).
    pub fn percentile(&self, p: f64) -> u64 {
        let target = (self.count() as f64 * p.clamp(0.0, 1.0)).ceil() as u64;
        let mut seen = 0;
        for (bound, count) in bucket_offsets().chain([u64::MAX]).zip(&self.counts) {
            seen += count;
            if seen >= target.max(1) {
                return bound;
            }
        }
        0
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.put_u32(self.counts.len() as u32);
        for count in &self.counts {
            out.put_u64(*count);
        }
    }

    pub(crate) fn decode(d: &mut Decoder<'_>) -> Result<EstimatedHistogram> {
        let count = d.count(8)?;
        if count != SIZE_BUCKETS + 1 {
            return Err(d.corrupt(format!("size histogram has {count} buckets")));
        }
        let counts = (0..count).map(|_| d.u64()).collect::<Result<Vec<_>>>()?;
        Ok(EstimatedHistogram { counts })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_counts_values_as_their_buckets_upper_bounds() {
        let mut h = EstimatedHistogram::default();
        assert_eq!(h.mean(), 0);
        h.add(10);
        h.add(20);
        h.add(19);
        // 10, 20 and 20 (19 falls in the bucket that ends at 20): 50 / 3, rounded up.
        assert_eq!(h.mean(), 17);
    }

    #[test]
    fn streaming_histogram_bounds_bins_and_counts_below() {
        let mut h = StreamingHistogram::default();
        for t in 0..10_000i64 {
            h.add(t * 97);
        }
        assert!(h.bins.len() <= MAX_BINS);
        assert_eq!(h.total(), 10_000);
        let half = h.count_below(5_000 * 97);
        assert!((4_000..=6_000).contains(&half), "estimate {half}");
        assert_eq!(h.count_below(i64::MIN), 0);
        assert_eq!(h.count_below(i64::MAX), 10_000);
        let mut exact = StreamingHistogram::default();
        exact.add(61);
        assert_eq!(exact.count_below(120), 0, "rounded up to the next minute");
        assert_eq!(exact.count_below(121), 1);
    }

    #[test]
    fn estimated_histogram_buckets_and_percentiles() {
        let mut h = EstimatedHistogram::default();
        for v in [1u64, 2, 3, 100, 1000] {
            h.add(v);
        }
        assert_eq!(h.count(), 5);
        assert!(h.max() >= 1000 && h.max() < 1300);
        assert_eq!(h.percentile(0.2), 1);
        assert!(h.percentile(0.8) >= 100 && h.percentile(0.8) < 130);
        h.add(u64::MAX);
        assert_eq!(h.max(), u64::MAX);
    }

    #[test]
    fn each_value_lands_in_the_first_bucket_whose_bound_holds_it() {
        let bounds: Vec<u64> = bucket_offsets().collect();
        let probes = bounds
            .iter()
            .flat_map(|b| [b - 1, *b, b + 1])
            .chain([0, u64::MAX]);
        for value in probes {
            let mut h = EstimatedHistogram::default();
            h.add(value);
            let expected = bounds
                .iter()
                .position(|bound| value <= *bound)
                .unwrap_or(SIZE_BUCKETS);
            assert_eq!(h.counts[expected], 1, "value {value}");
        }
    }

    #[test]
    fn merged_histograms_add_counts() {
        let (mut a, mut b) = (EstimatedHistogram::default(), EstimatedHistogram::default());
        a.add(10);
        b.add(10);
        b.add(5000);
        a.merge(&b);
        assert_eq!((a.count(), a.percentile(0.0)), (3, 10));
        assert_eq!(a.max(), b.max());
    }
}
