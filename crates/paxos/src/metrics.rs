//! A proposer's counters (Cassandra's `casWriteMetrics` and `casReadMetrics`: contention,
//! unfinishedCommit, conditionNotMet, timeouts, unavailables).
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Outcome, PaxosError};

#[derive(Debug, Default)]
pub struct Metrics {
    /// Updates committed.
    pub applied: AtomicU64,
    /// Compare-and-sets whose condition did not hold.
    pub not_applied: AtomicU64,
    /// SERIAL reads answered.
    pub reads: AtomicU64,
    /// Rounds lost to a competing ballot, each followed by a randomised back-off.
    pub contentions: AtomicU64,
    /// In-progress proposals of other rounds found and completed before the operation's own.
    pub repairs: AtomicU64,
    /// Commits missing on replicas of a quorum, sent again before the operation went on.
    pub commit_refreshes: AtomicU64,
    /// Operations that timed out; `write_unknown` those that may still apply.
    pub timeouts: AtomicU64,
    pub write_unknown: AtomicU64,
    pub unavailables: AtomicU64,
    pub failures: AtomicU64,
}

impl Metrics {
    pub(crate) fn count(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Reads a counter.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }

    pub(crate) fn outcome<V>(&self, result: &Result<Outcome<V>, PaxosError>) {
        match result {
            Ok(Outcome::Applied) => Self::count(&self.applied),
            Ok(Outcome::NotApplied(_)) => Self::count(&self.not_applied),
            Err(error) => self.error(error),
        }
    }

    pub(crate) fn error(&self, error: &PaxosError) {
        Self::count(match error {
            PaxosError::Timeout { .. } => &self.timeouts,
            PaxosError::Unavailable { .. } => &self.unavailables,
            PaxosError::Failure { .. } => &self.failures,
        });
        if error.write_unknown() {
            Self::count(&self.write_unknown);
        }
    }
}
