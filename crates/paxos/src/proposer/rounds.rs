//! The propose and commit rounds (Cassandra's `PaxosPropose`, `PaxosCommit`).
use crate::ballot::{Ballot, Clock};
use crate::error::Shortfall;
use crate::gather::Gather;
use crate::messages::{NoReply, ProposeAnswer};
use crate::replicas::{Participants, Replicas};
use crate::types::{Proposal, Types};

use super::Proposer;

/// How a propose round ended.
pub(super) enum Proposed {
    /// A quorum accepted: the proposal is decided.
    Accepted,
    /// A replica refused for a newer ballot, so no quorum can accept. With `maybe_accepted`,
    /// some replica accepted, or may have (it did not answer): the proposal may still be
    /// completed by another proposer.
    Superseded { by: Ballot, maybe_accepted: bool },
    /// Too few answers, none refusing.
    Failed(Shortfall),
}

/// Counts of a propose round's answers.
struct Votes {
    shortfall: Shortfall,
    refusals: usize,
    newest: Option<Ballot>,
}

impl Votes {
    fn can_succeed(&self) -> bool {
        self.refusals == 0 && self.shortfall.quorum_possible()
    }

    /// Whether a replica accepted or may have.
    fn maybe_accepted(&self) -> bool {
        self.shortfall.maybe_taken()
    }

    fn outcome(self) -> Proposed {
        if self.shortfall.received >= self.shortfall.required {
            return Proposed::Accepted;
        }
        match self.newest {
            Some(by) => Proposed::Superseded {
                by,
                maybe_accepted: self.refusals < self.shortfall.polled,
            },
            None => Proposed::Failed(self.shortfall),
        }
    }
}

impl<T: Types, R: Replicas<T>, C: Clock> Proposer<T, R, C> {
    /// Proposes to every live voter until a quorum accepts or none can. With
    /// `wait_for_no_side_effects`, a refused round waits for the other answers while it may
    /// still learn that every replica refused (then the update surely was not accepted).
    pub(super) async fn propose(
        &self,
        participants: &Participants<R::Node>,
        key: &T::Key,
        proposal: &Proposal<T::Update>,
        wait_for_no_side_effects: bool,
    ) -> Proposed {
        let mut gather = Gather::new();
        for node in participants.all() {
            gather.push((), self.replicas.propose(node, key, proposal));
        }
        let mut votes = Votes {
            shortfall: Shortfall {
                polled: participants.polled(),
                required: participants.required,
                ..Shortfall::default()
            },
            refusals: 0,
            newest: None,
        };
        while let Some(((), answer)) = gather.next().await {
            match answer {
                Ok(ProposeAnswer::Accepted) => votes.shortfall.received += 1,
                Ok(ProposeAnswer::Rejected { by }) => {
                    self.ballots.witness(by);
                    votes.refusals += 1;
                    votes.newest = votes.newest.max(Some(by));
                }
                Err(NoReply::Timeout) => votes.shortfall.timeouts += 1,
                Err(NoReply::Failed) => votes.shortfall.failures += 1,
            }
            let decided = votes.shortfall.received >= participants.required;
            let waits = wait_for_no_side_effects && !votes.maybe_accepted();
            if decided || !(votes.can_succeed() || waits) {
                break;
            }
        }
        votes.outcome()
    }

    /// Commits a decided proposal to every live voter and waits for a quorum to apply it.
    pub(super) async fn commit(
        &self,
        participants: &Participants<R::Node>,
        key: &T::Key,
        commit: &Proposal<T::Update>,
    ) -> Result<(), Shortfall> {
        let mut gather = Gather::new();
        for node in participants.all() {
            gather.push((), self.replicas.commit(node, key, commit));
        }
        let mut shortfall = Shortfall {
            polled: participants.polled(),
            required: participants.required,
            ..Shortfall::default()
        };
        while let Some(((), answer)) = gather.next().await {
            match answer {
                Ok(()) => shortfall.received += 1,
                Err(NoReply::Timeout) => shortfall.timeouts += 1,
                Err(NoReply::Failed) => shortfall.failures += 1,
            }
            if shortfall.received >= participants.required {
                return Ok(());
            }
        }
        Err(shortfall)
    }
}
