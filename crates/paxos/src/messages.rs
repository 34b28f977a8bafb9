//! The requests a proposer sends and the answers replicas give (Cassandra's
//! `PAXOS2_PREPARE`, `PAXOS2_PROPOSE`, `PAXOS_COMMIT` payloads). Encoding them for `net` is the
//! wiring's business.
use crate::ballot::Ballot;
use crate::types::{Proposal, Types};

/// Asks for a promise on `ballot`; with `read`, also for the replica's data (read with
/// prepare); with `commit`, first applies that commit (a repaired or lagging commit folded
/// into the next round instead of a round of its own).
#[derive(Clone, Debug)]
pub struct Prepare<T: Types> {
    pub key: T::Key,
    pub ballot: Ballot,
    /// A write's prepare; a read's asks only for a read promise, which other reads do not
    /// refuse.
    pub is_write: bool,
    pub read: Option<T::Query>,
    pub commit: Option<Proposal<T::Update>>,
}

/// A replica's answer to a [`Prepare`].
#[derive(Clone, Debug, PartialEq)]
pub enum PrepareAnswer<T: Types> {
    Permitted(Permitted<T>),
    /// A newer ballot stands: the proposer retries above it.
    Rejected {
        by: Ballot,
    },
}

/// A promise, or a read-only permission, with what the replica knows of the partition.
#[derive(Clone, Debug, PartialEq)]
pub struct Permitted<T: Types> {
    /// A promise; false for a read-only permission (a newer read was promised).
    pub promised: bool,
    /// For a read-only permission, the newest ballot witnessed.
    pub superseded_by: Option<Ballot>,
    /// A proposal accepted here and not known committed (newer than `committed`).
    pub accepted: Option<Proposal<T::Update>>,
    pub committed: Option<Proposal<T::Update>>,
    pub read: Option<T::Read>,
    /// No write promised here before this prepare can be proposing unseen (see
    /// [`PaxosState::is_stable`](crate::PaxosState::is_stable)).
    pub stable: bool,
}

/// A replica's answer to a proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProposeAnswer {
    Accepted,
    Rejected { by: Ballot },
}

/// Why a replica gave no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoReply {
    /// None came in time: the request may or may not have been applied.
    Timeout,
    /// The replica answered that it failed (its store, say).
    Failed,
}

/// A replica's answer or why there is none.
pub type Answer<A> = Result<A, NoReply>;
