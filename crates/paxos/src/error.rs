//! What an operation ends with.

/// A compare-and-set that completed.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome<V> {
    /// The condition held and the update was committed.
    Applied,
    /// The condition did not hold on this value; nothing was changed.
    NotApplied(V),
}

/// An operation that did not complete.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PaxosError {
    /// Too few replicas answered in time, or contention outlasted the deadline. With
    /// `write_unknown`, the operation's own update may have been accepted and may yet be
    /// committed (Cassandra's CAS_WRITE_UNKNOWN); without, it was not applied.
    #[error("Paxos timed out: {received} of {required} replicas answered, {contentions} contended attempts{}", if *.write_unknown { ", the write may have been applied" } else { "" })]
    Timeout {
        received: usize,
        required: usize,
        contentions: u32,
        write_unknown: bool,
    },
    /// Fewer live replicas than a quorum: nothing was sent.
    #[error("Paxos unavailable: {alive} live replicas, {required} required")]
    Unavailable { required: usize, alive: usize },
    /// Replicas answered with failures, so no quorum could answer.
    #[error("Paxos failed: {failures} replicas failed, {received} answered, {required} required")]
    Failure {
        received: usize,
        required: usize,
        failures: usize,
        write_unknown: bool,
    },
}

impl PaxosError {
    /// Whether the operation's update may have been applied.
    pub fn write_unknown(&self) -> bool {
        match self {
            PaxosError::Timeout { write_unknown, .. }
            | PaxosError::Failure { write_unknown, .. } => *write_unknown,
            PaxosError::Unavailable { .. } => false,
        }
    }
}

/// How a round fell short of a quorum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shortfall {
    pub(crate) polled: usize,
    pub(crate) required: usize,
    /// Positive answers.
    pub(crate) received: usize,
    /// Replicas that answered with a failure.
    pub(crate) failures: usize,
    /// Replicas that did not answer in time.
    pub(crate) timeouts: usize,
}

impl Shortfall {
    /// Whether a failed or silent replica may still have taken the request (with `received`
    /// answers of a proposal, some did).
    pub(crate) fn maybe_taken(&self) -> bool {
        self.received + self.timeouts > 0
    }

    /// Whether the replicas yet to answer could still make a quorum.
    pub(crate) fn quorum_possible(&self) -> bool {
        let missing = self.failures + self.timeouts;
        self.polled.saturating_sub(missing) >= self.required
    }

    /// The error: Failure when failures alone made a quorum impossible (as Cassandra counts
    /// them), else Timeout.
    pub(crate) fn error(self, contentions: u32, write_unknown: bool) -> PaxosError {
        if self.polled.saturating_sub(self.failures) < self.required {
            PaxosError::Failure {
                received: self.received,
                required: self.required,
                failures: self.failures,
                write_unknown,
            }
        } else {
            PaxosError::Timeout {
                received: self.received,
                required: self.required,
                contentions,
                write_unknown,
            }
        }
    }
}
