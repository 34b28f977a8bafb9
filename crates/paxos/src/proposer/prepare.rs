//! The prepare round and what a quorum of its answers says (Cassandra's `PaxosPrepare`,
//! `PaxosPrepareRefresh`).
use crate::ballot::{Ballot, Clock};
use crate::error::Shortfall;
use crate::gather::Gather;
use crate::messages::{NoReply, Permitted, Prepare, PrepareAnswer};
use crate::metrics::Metrics;
use crate::replicas::{Participants, Replicas};
use crate::types::{ballot_of, Proposal, Types};

use super::Proposer;

/// How a prepare round ended.
pub(super) enum Prepared<T: Types> {
    /// A quorum promised (or permitted a read) and holds the latest commit.
    Permitted(Success<T>),
    /// A newer ballot stands: back off and retry above it.
    Superseded(Ballot),
    /// A proposal newer than the latest commit was accepted somewhere: complete it first.
    IncompleteAccepted(Proposal<T::Update>),
    /// The latest commit is missing on too many of the quorum and none that answered with a
    /// read holds it: prepare again with the commit folded in.
    IncompleteCommitted(Proposal<T::Update>),
    Failed(Shortfall),
}

pub(super) struct Success<T: Types> {
    pub(super) promised: bool,
    pub(super) reads: Vec<T::Read>,
    /// Every answer was stable: the reads are linearizable without a proposal.
    pub(super) stable: bool,
    pub(super) superseded_by: Option<Ballot>,
}

/// The answers of one prepare round so far.
struct Tally<T: Types, N> {
    latest_committed: Option<Proposal<T::Update>>,
    /// Replicas that answered with the latest commit, and those that missed it.
    with_latest: Vec<N>,
    need_latest: Vec<N>,
    /// Whether a read came from a replica holding the latest commit.
    read_with_latest: bool,
    latest_accepted: Option<Proposal<T::Update>>,
    reads: Vec<T::Read>,
    only_promises: bool,
    stable: bool,
    superseded_by: Option<Ballot>,
    shortfall: Shortfall,
}

impl<T: Types, N> Tally<T, N> {
    fn new<M: Clone>(participants: &Participants<M>) -> Self {
        Tally {
            latest_committed: None,
            with_latest: Vec::new(),
            need_latest: Vec::new(),
            read_with_latest: false,
            latest_accepted: None,
            reads: Vec::new(),
            only_promises: true,
            stable: true,
            superseded_by: None,
            shortfall: Shortfall {
                polled: participants.polled(),
                required: participants.required,
                ..Shortfall::default()
            },
        }
    }

    fn answered(&self) -> usize {
        self.with_latest.len() + self.need_latest.len()
    }

    fn permit(&mut self, node: N, permitted: Permitted<T>) {
        if !permitted.promised {
            self.only_promises = false;
            self.superseded_by = self.superseded_by.max(permitted.superseded_by);
        }
        let has_read = permitted.read.is_some();
        let committed = ballot_of(&permitted.committed);
        let latest = ballot_of(&self.latest_committed);
        if committed > latest {
            self.need_latest.append(&mut self.with_latest);
            self.with_latest.push(node);
            self.read_with_latest = has_read;
            self.latest_committed = permitted.committed;
        } else if committed == latest {
            self.with_latest.push(node);
            self.read_with_latest |= has_read;
        } else {
            self.need_latest.push(node);
        }
        if ballot_of(&permitted.accepted) > ballot_of(&self.latest_accepted) {
            self.latest_accepted = permitted.accepted;
        }
        self.reads.extend(permitted.read);
        self.stable &= permitted.stable;
    }

    fn fail(&mut self, reason: NoReply) {
        match reason {
            NoReply::Timeout => self.shortfall.timeouts += 1,
            NoReply::Failed => self.shortfall.failures += 1,
        }
    }

    /// A proposal accepted and not committed, newer than the latest commit and not a
    /// re-proposal of it. One older than the latest commit lost to it and must never be
    /// replayed (CASSANDRA-12126); an empty one changes nothing and needs no completing.
    fn in_progress(&self) -> Option<&Proposal<T::Update>> {
        let accepted = self.latest_accepted.as_ref()?;
        if T::is_empty(&accepted.update) {
            return None;
        }
        match &self.latest_committed {
            Some(commit)
                if accepted.ballot <= commit.ballot || accepted.update == commit.update =>
            {
                None
            }
            _ => Some(accepted),
        }
    }

    fn into_success(self) -> Success<T> {
        Success {
            promised: self.only_promises,
            reads: self.reads,
            stable: self.stable,
            superseded_by: self.superseded_by,
        }
    }
}

impl<T: Types, R: Replicas<T>, C: Clock> Proposer<T, R, C> {
    /// Sends the prepare to every live voter (the pending ones without the read) and judges
    /// the first quorum of answers; a refusal ends the round at once.
    pub(super) async fn prepare(
        &self,
        participants: &Participants<R::Node>,
        request: &Prepare<T>,
    ) -> Prepared<T> {
        let without_read = Prepare {
            read: None,
            ..request.clone()
        };
        let mut gather = Gather::new();
        for node in &participants.natural {
            gather.push(node.clone(), self.replicas.prepare(node, request));
        }
        for node in &participants.pending {
            gather.push(node.clone(), self.replicas.prepare(node, &without_read));
        }
        let mut tally = Tally::new(participants);
        while let Some((node, answer)) = gather.next().await {
            match answer {
                Ok(PrepareAnswer::Rejected { by }) => {
                    self.ballots.witness(by);
                    return Prepared::Superseded(by);
                }
                Ok(PrepareAnswer::Permitted(permitted)) => {
                    tally.permit(node, permitted);
                    if tally.answered() >= participants.required {
                        return self.judge(participants, &request.key, tally).await;
                    }
                }
                Err(reason) => {
                    tally.fail(reason);
                    if !tally.shortfall.quorum_possible() {
                        break;
                    }
                }
            }
        }
        tally.shortfall.received = tally.answered();
        Prepared::Failed(tally.shortfall)
    }

    /// What a quorum of permissions allows.
    async fn judge(
        &self,
        participants: &Participants<R::Node>,
        key: &T::Key,
        tally: Tally<T, R::Node>,
    ) -> Prepared<T> {
        let superseded = || Prepared::Superseded(tally.superseded_by.unwrap_or(Ballot::ZERO));
        if !tally.only_promises && !tally.stable {
            // A read-only permission is of no use while a write may be in flight.
            return superseded();
        }
        if let Some(accepted) = tally.in_progress().filter(|_| !self.skips_repair()) {
            return match tally.only_promises {
                true => Prepared::IncompleteAccepted(accepted.clone()),
                false => superseded(),
            };
        }
        let Some(latest) = tally.latest_committed.clone() else {
            return Prepared::Permitted(tally.into_success());
        };
        if tally.with_latest.len() >= participants.required {
            Prepared::Permitted(tally.into_success())
        } else if tally.read_with_latest {
            self.refresh(participants, key, latest, tally).await
        } else {
            Prepared::IncompleteCommitted(latest)
        }
    }

    /// Sends the latest commit to the replicas of the quorum that missed it; once a quorum
    /// holds it, the reads (one of which saw it) stand.
    async fn refresh(
        &self,
        participants: &Participants<R::Node>,
        key: &T::Key,
        latest: Proposal<T::Update>,
        mut tally: Tally<T, R::Node>,
    ) -> Prepared<T> {
        Metrics::count(&self.metrics.commit_refreshes);
        let need_latest = std::mem::take(&mut tally.need_latest);
        let mut gather = Gather::new();
        for node in &need_latest {
            gather.push(node.clone(), self.replicas.commit(node, key, &latest));
        }
        let mut shortfall = Shortfall {
            received: tally.with_latest.len(),
            ..tally.shortfall
        };
        while let Some((_, answer)) = gather.next().await {
            match answer {
                Ok(()) => shortfall.received += 1,
                Err(NoReply::Timeout) => shortfall.timeouts += 1,
                Err(NoReply::Failed) => shortfall.failures += 1,
            }
            if shortfall.received >= participants.required {
                return Prepared::Permitted(tally.into_success());
            }
        }
        Prepared::Failed(shortfall)
    }

    #[cfg(test)]
    fn skips_repair(&self) -> bool {
        self.broken == Some(super::Broken::SkipRepair)
    }

    #[cfg(not(test))]
    fn skips_repair(&self) -> bool {
        false
    }
}
