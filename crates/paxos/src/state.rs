//! A replica's Paxos registers for one partition and the rules that change them (Cassandra's
//! `PaxosState.Snapshot`, `promiseIfNewer`, `acceptIfLatest`, `commit`). Pure: the
//! [`Replica`](crate::Replica) loads a state, applies a rule and persists the result before
//! it answers.
use crate::ballot::Ballot;
use crate::types::{ballot_of, Proposal, Types};

/// One partition's Paxos registers on a replica.
#[derive(Clone, Debug, PartialEq)]
pub struct PaxosState<T: Types> {
    /// The newest ballot promised, for a read or a write.
    pub promised: Ballot,
    /// The newest ballot promised for a write (at most `promised`). Reads commute, so a read
    /// is refused only by a newer write promise (Cassandra's read commutativity).
    pub promised_write: Ballot,
    /// The newest proposal accepted and not yet known committed: always newer than `committed`.
    pub accepted: Option<Proposal<T::Update>>,
    /// The newest proposal committed here.
    pub committed: Option<Proposal<T::Update>>,
}

impl<T: Types> Default for PaxosState<T> {
    fn default() -> Self {
        PaxosState {
            promised: Ballot::ZERO,
            promised_write: Ballot::ZERO,
            accepted: None,
            committed: None,
        }
    }
}

/// The answer of [`PaxosState::promise`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Promise {
    /// Promised: no proposal under an older ballot will be accepted here.
    Promised,
    /// A newer read has been promised, but no newer write: the ballot may read, not propose.
    ReadOnly { superseded_by: Ballot },
    /// Refused: a newer ballot (or the purge low bound) stands.
    Rejected { by: Ballot },
}

impl<T: Types> PaxosState<T> {
    /// The newest ballot of a write witnessed here: write promise, non-empty accepted
    /// proposal, commit, or the low bound below which state was purged.
    pub fn latest_write(&self, low_bound: Ballot) -> Ballot {
        let accepted = match &self.accepted {
            Some(p) if !T::is_empty(&p.update) => p.ballot,
            _ => Ballot::ZERO,
        };
        self.promised_write
            .max(accepted)
            .max(ballot_of(&self.committed))
            .max(low_bound)
    }

    /// The newest ballot witnessed here of any kind.
    pub fn latest(&self, low_bound: Ballot) -> Ballot {
        self.latest_write(low_bound)
            .max(self.promised)
            .max(ballot_of(&self.accepted))
    }

    /// Promises `ballot` if it is of a later microsecond than every ballot witnessed here; a
    /// read ballot newer than every write gets a read-only permission; else a refusal.
    pub fn promise(&mut self, ballot: Ballot, is_write: bool, low_bound: Ballot) -> Promise {
        let latest = self.latest(low_bound);
        if ballot.is_later_than(&latest) {
            self.promised = ballot;
            if is_write {
                self.promised_write = ballot;
            }
            Promise::Promised
        } else if ballot.is_later_than(&self.latest_write(low_bound)) {
            Promise::ReadOnly {
                superseded_by: latest,
            }
        } else {
            Promise::Rejected { by: latest }
        }
    }

    /// Whether no write promised here can be making a proposal not yet seen: the newest
    /// commit (or accepted empty proposal) is at least the newest write promise. A read
    /// answered by a quorum of stable replicas needs no empty proposal to be linearizable
    /// (Cassandra's "proposal stability"). Judged on the state before this prepare's promise.
    pub fn is_stable(&self) -> bool {
        let committed = ballot_of(&self.committed);
        let decided = match &self.accepted {
            Some(p) if T::is_empty(&p.update) && p.ballot > committed => p.ballot,
            _ => committed,
        };
        decided >= self.promised_write
    }

    /// Accepts `proposal` unless a newer ballot was witnessed: `Ok(true)` when the state
    /// changed, `Ok(false)` when it was already committed, `Err(newer)` when refused.
    pub fn accept(
        &mut self,
        proposal: Proposal<T::Update>,
        low_bound: Ballot,
    ) -> Result<bool, Ballot> {
        let latest = self.latest(low_bound);
        if proposal.ballot < latest {
            return Err(latest);
        }
        if self.committed.as_ref().map(|c| c.ballot) == Some(proposal.ballot) {
            return Ok(false);
        }
        self.accepted = Some(proposal);
        Ok(true)
    }

    /// Records a commit (unconditional): it replaces an older commit and clears an accepted
    /// proposal it covers. Returns whether the state changed.
    pub fn commit(&mut self, commit: Proposal<T::Update>) -> bool {
        if commit.ballot <= ballot_of(&self.committed) {
            return false;
        }
        if ballot_of(&self.accepted) <= commit.ballot {
            self.accepted = None;
        }
        self.committed = Some(commit);
        true
    }

    /// Whether everything here is committed and no older than `repaired`, a ballot below which
    /// Paxos repair has completed every round: then the state may be purged, the low bound
    /// standing in for its ballots.
    pub fn is_purgeable(&self, repaired: Ballot) -> bool {
        self.accepted.is_none() && self.latest(Ballot::ZERO) <= repaired
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testing::{ballot, set, Reg};

    type State = PaxosState<Reg>;

    #[test]
    fn a_newer_ballot_is_promised_and_an_older_refused_with_the_newest() {
        let mut state = State::default();
        assert_eq!(
            state.promise(ballot(10), true, Ballot::ZERO),
            Promise::Promised
        );
        assert_eq!(
            (state.promised, state.promised_write),
            (ballot(10), ballot(10))
        );
        assert_eq!(
            state.promise(ballot(9), true, Ballot::ZERO),
            Promise::Rejected { by: ballot(10) }
        );
        // The same microsecond from another node is not later: refused too.
        let same_micro = Ballot {
            node: 99,
            ..ballot(10)
        };
        assert!(matches!(
            state.promise(same_micro, true, Ballot::ZERO),
            Promise::Rejected { .. }
        ));
        assert_eq!(state.promised, ballot(10));
    }

    #[test]
    fn reads_commute_an_older_read_is_permitted_to_read_only() {
        let mut state = State::default();
        assert_eq!(
            state.promise(ballot(5), true, Ballot::ZERO),
            Promise::Promised
        );
        assert_eq!(
            state.promise(ballot(20), false, Ballot::ZERO),
            Promise::Promised
        );
        assert_eq!(
            (state.promised, state.promised_write),
            (ballot(20), ballot(5))
        );
        // Older than the read promise, newer than the write promise: may read.
        assert_eq!(
            state.promise(ballot(15), false, Ballot::ZERO),
            Promise::ReadOnly {
                superseded_by: ballot(20)
            }
        );
        // A write asked under such a ballot may read too, but cannot propose: the read
        // promise refuses its proposal.
        assert!(matches!(
            state.promise(ballot(15), true, Ballot::ZERO),
            Promise::ReadOnly { .. }
        ));
        assert_eq!(
            state.accept(Proposal::new(ballot(15), set(1, 15)), Ballot::ZERO),
            Err(ballot(20))
        );
        // Older than the write promise: refused.
        assert_eq!(
            state.promise(ballot(4), false, Ballot::ZERO),
            Promise::Rejected { by: ballot(20) }
        );
    }

    #[test]
    fn accept_needs_the_promised_ballot_or_newer() {
        let mut state = State::default();
        state.promise(ballot(10), true, Ballot::ZERO);
        assert_eq!(
            state.accept(Proposal::new(ballot(9), set(1, 9)), Ballot::ZERO),
            Err(ballot(10))
        );
        assert_eq!(
            state.accept(Proposal::new(ballot(10), set(1, 10)), Ballot::ZERO),
            Ok(true)
        );
        assert_eq!(state.accepted, Some(Proposal::new(ballot(10), set(1, 10))));
        // Once accepted, an older promise's proposal is refused by the accepted ballot.
        state.promised = ballot(1);
        assert_eq!(
            state.accept(Proposal::new(ballot(8), set(2, 8)), Ballot::ZERO),
            Err(ballot(10))
        );
    }

    #[test]
    fn a_commit_clears_the_accepted_proposal_it_covers_and_never_goes_back() {
        let mut state = State::default();
        state.promise(ballot(10), true, Ballot::ZERO);
        state
            .accept(Proposal::new(ballot(10), set(1, 10)), Ballot::ZERO)
            .unwrap();
        assert!(state.commit(Proposal::new(ballot(10), set(1, 10))));
        assert_eq!(state.accepted, None);
        assert_eq!(state.committed, Some(Proposal::new(ballot(10), set(1, 10))));
        // An older commit arriving late changes nothing.
        assert!(!state.commit(Proposal::new(ballot(7), set(0, 7))));
        assert_eq!(state.committed.as_ref().map(|c| c.ballot), Some(ballot(10)));
        // A proposal already committed is acknowledged without change.
        assert_eq!(
            state.accept(Proposal::new(ballot(10), set(1, 10)), Ballot::ZERO),
            Ok(false)
        );
    }

    #[test]
    fn a_commit_keeps_a_newer_accepted_proposal() {
        let mut state = State::default();
        state.promise(ballot(20), true, Ballot::ZERO);
        state
            .accept(Proposal::new(ballot(20), set(2, 20)), Ballot::ZERO)
            .unwrap();
        assert!(state.commit(Proposal::new(ballot(10), set(1, 10))));
        assert_eq!(state.accepted.as_ref().map(|a| a.ballot), Some(ballot(20)));
    }

    #[test]
    fn stability_is_a_commit_at_least_as_new_as_the_write_promise() {
        let mut state = State::default();
        assert!(state.is_stable());
        state.promise(ballot(10), true, Ballot::ZERO);
        assert!(!state.is_stable(), "a write promised and not decided");
        state
            .accept(Proposal::new(ballot(10), set(1, 10)), Ballot::ZERO)
            .unwrap();
        assert!(!state.is_stable(), "accepted, not committed");
        state.commit(Proposal::new(ballot(10), set(1, 10)));
        assert!(state.is_stable());
        // A read promise does not unsettle it; an accepted empty proposal settles a write.
        state.promise(ballot(11), false, Ballot::ZERO);
        assert!(state.is_stable());
        state.promise(ballot(12), true, Ballot::ZERO);
        assert!(!state.is_stable());
        state
            .accept(Proposal::new(ballot(12), None), Ballot::ZERO)
            .unwrap();
        assert!(state.is_stable());
    }

    #[test]
    fn the_low_bound_refuses_older_ballots_and_purging_needs_everything_committed() {
        let mut state = State::default();
        assert_eq!(
            state.promise(ballot(5), true, ballot(8)),
            Promise::Rejected { by: ballot(8) }
        );
        assert_eq!(state.promise(ballot(9), true, ballot(8)), Promise::Promised);
        state
            .accept(Proposal::new(ballot(9), set(1, 9)), ballot(8))
            .unwrap();
        assert!(
            !state.is_purgeable(ballot(100)),
            "an accepted proposal is not purged"
        );
        state.commit(Proposal::new(ballot(9), set(1, 9)));
        assert!(!state.is_purgeable(ballot(8)), "committed after the repair");
        assert!(state.is_purgeable(ballot(9)));
    }
}
