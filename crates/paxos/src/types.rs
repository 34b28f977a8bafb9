//! What one use of Paxos decides over: keys, updates, reads. The crate is generic over them so
//! that the protocol and its tests do not depend on the data model; the node will decide
//! `mutation` partition updates of a table's partitions.
use std::fmt::Debug;
use std::hash::Hash;

use crate::ballot::Ballot;

/// The types of one use of Paxos (a marker type implements it).
pub trait Types: Clone + Debug + PartialEq + Send + Sync + 'static {
    /// A partition: Paxos decides one sequence of updates per key.
    type Key: Clone + Eq + Hash + Debug + Send + Sync + 'static;
    /// What a round decides and a commit applies. An update carries its own write timestamps
    /// (the ballot's microseconds when it was first proposed), so a repaired proposal applies
    /// as it was proposed; two updates are equal only when one re-proposes the other.
    type Update: Clone + Debug + PartialEq + Send + Sync + 'static;
    /// What to read with a prepare (the columns a condition or a SERIAL read needs).
    type Query: Clone + Debug + Send + Sync + 'static;
    /// One replica's answer to a query.
    type Read: Clone + Debug + PartialEq + Send + Sync + 'static;
    /// Replicas' answers resolved into one: what a condition examines and a read returns.
    type Value: Clone + Debug + PartialEq + Send + 'static;

    /// The update that changes nothing: proposed to close a round without a change.
    fn empty_update(key: &Self::Key) -> Self::Update;
    fn is_empty(update: &Self::Update) -> bool;
    /// Resolves the reads of a quorum (newest write wins).
    fn resolve(query: &Self::Query, reads: Vec<Self::Read>) -> Self::Value;
}

/// An update under a ballot: a proposal, an accepted proposal or a commit.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal<U> {
    pub ballot: Ballot,
    pub update: U,
}

impl<U> Proposal<U> {
    pub fn new(ballot: Ballot, update: U) -> Self {
        Proposal { ballot, update }
    }
}

/// The ballot of an optional proposal, [`Ballot::ZERO`] for none.
pub(crate) fn ballot_of<U>(proposal: &Option<Proposal<U>>) -> Ballot {
    proposal.as_ref().map_or(Ballot::ZERO, |p| p.ballot)
}
