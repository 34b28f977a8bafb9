//! Range scans over replicas: each replica answers with its unresolved partitions of a key
//! range ([`ScanSource`]), at most a number of them; a coordinator merges the answers with
//! [`ScanRound`], and only partitions up to the earliest stop among the replicas that stopped
//! are complete (a replica that stopped earlier may hold a deletion of a later one).

use std::collections::BTreeMap;

use crate::partition::PartitionData;
use crate::PartitionKey;

/// One replica's answer to a range scan: partitions in (token, key) order, each restricted to
/// the filter with its tombstones (a partition holding only tombstones is there too).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanSource {
    pub partitions: Vec<(PartitionKey, PartitionData)>,
    /// The last key returned when the partition limit cut the scan; `None` when the scan read
    /// the whole range.
    pub stopped_at: Option<PartitionKey>,
}

/// The merged answers of several replicas to one range scan.
#[derive(Clone, Debug, Default)]
pub struct ScanRound {
    partitions: BTreeMap<PartitionKey, PartitionData>,
    /// The earliest key where a replica stopped.
    horizon: Option<PartitionKey>,
}

impl ScanRound {
    pub fn new() -> ScanRound {
        ScanRound::default()
    }

    /// Merges one replica's answer.
    pub fn add(&mut self, source: ScanSource) {
        for (key, data) in source.partitions {
            match self.partitions.get_mut(&key) {
                Some(merged) => merged.merge(data),
                None => {
                    self.partitions.insert(key, data);
                }
            }
        }
        if let Some(stop) = source.stopped_at {
            if self.horizon.as_ref().is_none_or(|h| stop < *h) {
                self.horizon = Some(stop);
            }
        }
    }

    /// The complete partitions, in (token, key) order, and the horizon: when some replica
    /// stopped, the next round resumes after it.
    pub fn complete(self) -> (Vec<(PartitionKey, PartitionData)>, Option<PartitionKey>) {
        let horizon = self.horizon;
        let complete = self
            .partitions
            .into_iter()
            .filter(|(key, _)| horizon.as_ref().is_none_or(|h| key <= h))
            .collect();
        (complete, horizon)
    }
}
