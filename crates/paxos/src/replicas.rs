//! How a proposer reaches a partition's replicas, and who votes (Cassandra's
//! `Paxos.Electorate` and `Participants`).
use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::time::Duration;

use crate::error::PaxosError;
use crate::messages::{Answer, Prepare, PrepareAnswer, ProposeAnswer};
use crate::types::{Proposal, Types};

/// The replicas that vote on a partition: its natural replicas, and the pending ones that
/// will own it once a topology change completes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Electorate<N> {
    pub natural: Vec<N>,
    pub pending: Vec<N>,
}

impl<N> Electorate<N> {
    /// Answers a round needs: a majority of the natural replicas plus every pending one, so
    /// that a quorum before the change and one after it always share a replica (Cassandra's
    /// `sizeOfConsensusQuorum`).
    pub fn quorum(&self) -> usize {
        self.natural.len() / 2 + 1 + self.pending.len()
    }
}

/// The proposer's link to replicas. Each request is sent when its method is called (or at the
/// latest when its future is first polled); the future resolves with the answer or, once the
/// request timeout passes, with [`NoReply::Timeout`](crate::NoReply::Timeout) — it never
/// hangs. Dropping the future forgets the answer, not the request.
pub trait Replicas<T: Types>: Send + Sync {
    /// How replicas are named.
    type Node: Clone + Eq + Hash + Debug + Send + Sync;

    /// The replicas of `key`, live or not.
    fn electorate(&self, key: &T::Key) -> Electorate<Self::Node>;
    /// Whether the failure detector holds `node` up: only those are asked.
    fn is_alive(&self, node: &Self::Node) -> bool;

    fn prepare(
        &self,
        to: &Self::Node,
        request: &Prepare<T>,
    ) -> impl Future<Output = Answer<PrepareAnswer<T>>> + Send;

    fn propose(
        &self,
        to: &Self::Node,
        key: &T::Key,
        proposal: &Proposal<T::Update>,
    ) -> impl Future<Output = Answer<ProposeAnswer>> + Send;

    fn commit(
        &self,
        to: &Self::Node,
        key: &T::Key,
        commit: &Proposal<T::Update>,
    ) -> impl Future<Output = Answer<()>> + Send;

    /// Waits (the back-off after contention).
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send;
}

/// The live voters of one operation and how many answers a round needs.
#[derive(Clone, Debug)]
pub(crate) struct Participants<N> {
    pub(crate) natural: Vec<N>,
    pub(crate) pending: Vec<N>,
    pub(crate) required: usize,
}

impl<N: Clone> Participants<N> {
    /// The live members of `electorate`, or Unavailable when they are fewer than a quorum.
    pub(crate) fn live(
        electorate: Electorate<N>,
        is_alive: impl Fn(&N) -> bool,
    ) -> Result<Self, PaxosError> {
        let required = electorate.quorum();
        let natural: Vec<N> = electorate.natural.into_iter().filter(&is_alive).collect();
        let pending: Vec<N> = electorate.pending.into_iter().filter(&is_alive).collect();
        let alive = natural.len() + pending.len();
        if alive < required {
            return Err(PaxosError::Unavailable { required, alive });
        }
        Ok(Participants {
            natural,
            pending,
            required,
        })
    }

    /// How many are asked.
    pub(crate) fn polled(&self) -> usize {
        self.natural.len() + self.pending.len()
    }

    pub(crate) fn all(&self) -> impl Iterator<Item = &N> {
        self.natural.iter().chain(&self.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_replicas_raise_the_quorum() {
        let three = Electorate {
            natural: vec![1, 2, 3],
            pending: vec![],
        };
        assert_eq!(three.quorum(), 2);
        let joining = Electorate {
            natural: vec![1, 2, 3],
            pending: vec![4],
        };
        assert_eq!(joining.quorum(), 3);
        let five_two_pending = Electorate {
            natural: vec![1, 2, 3, 4, 5],
            pending: vec![6, 7],
        };
        assert_eq!(five_two_pending.quorum(), 5);
    }

    #[test]
    fn too_few_live_voters_are_unavailable() {
        let electorate = Electorate {
            natural: vec![1, 2, 3],
            pending: vec![4],
        };
        let up = Participants::live(electorate.clone(), |n| *n != 1).unwrap();
        assert_eq!((up.polled(), up.required), (3, 3));
        let error = Participants::live(electorate, |n| *n != 1 && *n != 4).unwrap_err();
        assert_eq!(
            error,
            PaxosError::Unavailable {
                required: 3,
                alive: 2
            }
        );
    }
}
