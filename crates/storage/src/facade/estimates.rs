//! Size estimates per token range (`system.size_estimates`, `system.table_estimates`), as
//! Cassandra's SizeEstimatesRecorder makes them: for each SSTable whose tokens overlap a range,
//! its Summary samples in the range times the partitions a sample stands for (at least one),
//! and the mean partition size of the SSTables. Memtables are not counted (Cassandra 5.0.4
//! shows 0 partitions for a table not yet flushed).

use super::Storage;
use crate::error::Result;
use crate::sstable::{EstimatedHistogram, Sstable};
use mutation::{TableId, TokenRange};

/// One table's estimates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SizeEstimates {
    /// Partitions estimated in each range asked for, in the same order.
    pub partitions: Vec<u64>,
    /// Mean uncompressed size of a partition in bytes (0 without SSTables).
    pub mean_partition_bytes: u64,
}

pub(super) fn contains(range: TokenRange, token: i64) -> bool {
    range.0 < token && token <= right_end(range)
}

pub(super) fn right_end((_, right): TokenRange) -> i64 {
    if right == i64::MIN {
        i64::MAX
    } else {
        right
    }
}

impl Storage {
    /// The table's partitions in each of `ranges` and their mean size.
    pub fn size_estimates(&self, table: TableId, ranges: &[TokenRange]) -> Result<SizeEstimates> {
        let view = self.core.engine(table)?.view();
        let mut partitions = vec![0u64; ranges.len()];
        let mut sizes = EstimatedHistogram::default();
        for live in &view.sstables {
            sizes.merge(&live.sstable.stats().partition_sizes);
            for (count, range) in partitions.iter_mut().zip(ranges) {
                *count += sstable_partitions_in(&live.sstable, *range);
            }
        }
        Ok(SizeEstimates {
            partitions,
            mean_partition_bytes: sizes.mean(),
        })
    }
}

/// Cassandra's estimatedKeysForRanges: nothing when the SSTable's tokens miss the range, else
/// its samples in the range times the partitions per sample, at least one.
fn sstable_partitions_in(sstable: &Sstable, range: TokenRange) -> u64 {
    let summary = &sstable.summary;
    let (Some(first), Some(last)) = (summary.blocks.first(), summary.last_key.as_ref()) else {
        return 0;
    };
    if last.token <= range.0 || first.first_key.token > right_end(range) {
        return 0;
    }
    let samples = summary
        .blocks
        .iter()
        .filter(|b| contains(range, b.first_key.token))
        .count() as u64;
    let per_sample = sstable.stats().partitions as f64 / summary.blocks.len() as f64;
    ((samples as f64 * per_sample).round() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::contains;

    #[test]
    fn a_range_holds_its_right_end_and_not_its_left() {
        assert!(contains((-5, 5), 5));
        assert!(!contains((-5, 5), -5));
        assert!(contains((i64::MIN, 0), i64::MIN + 1));
        assert!(contains((7, i64::MIN), i64::MAX));
        assert!(!contains((7, i64::MIN), i64::MIN));
    }
}
