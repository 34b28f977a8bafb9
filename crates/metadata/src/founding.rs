//! Choosing the founder of a new group: single-decree Paxos among the seeds, the value being
//! the seed that founds. Every seed is an acceptor (this module, its state kept in
//! `<metadata_directory>/founding`); a seed that finds no group proposes itself
//! (`discovery`). A founder is chosen once a majority of the seeds accepted it, and since two
//! majorities share a seed that would have refused the lower ballot, no two founders are ever
//! chosen — so a cluster forms with a seed down, and two sides of a partition never found two
//! groups.

use std::io;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::codec::{decode, encode};
use crate::model::HostId;
use crate::raft_log::invalid_data;
use crate::raft_log::whole_file::WholeFile;
use crate::rpc::Peer;

const FILE: WholeFile = WholeFile {
    name: "founding",
    tmp_name: "founding.tmp",
    magic: b"HLNSFND1",
    what: "metadata founding state",
};

/// A proposal number: higher rounds win, the proposer's host id breaks ties.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Ballot {
    pub round: u64,
    pub host_id: HostId,
}

/// What a discovery call asks of a seed besides "are you in a group?".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum FoundingStep {
    /// Only the state.
    Ask,
    /// Phase 1: promise to refuse lower ballots, and say what you accepted.
    Prepare(Ballot),
    /// Phase 2: accept this founder under this ballot.
    Accept(Ballot, Peer),
    /// A majority accepted this founder.
    Chosen(Peer),
}

/// One acceptor's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct AcceptorState {
    /// The highest ballot promised or accepted.
    pub promised: Ballot,
    /// The founder last accepted, with its ballot.
    pub accepted: Option<(Ballot, Peer)>,
    /// The founder known to be chosen.
    pub chosen: Option<Peer>,
}

/// An acceptor's answer to a step: whether it was granted, and the state after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FoundingReply {
    pub granted: bool,
    pub state: AcceptorState,
}

impl AcceptorState {
    /// Applies `step` (Paxos's acceptor rules); whether it was granted.
    pub(crate) fn apply(&mut self, step: FoundingStep) -> bool {
        match step {
            FoundingStep::Ask => true,
            FoundingStep::Prepare(ballot) if ballot >= self.promised => {
                self.promised = ballot;
                true
            }
            FoundingStep::Accept(ballot, founder) if ballot >= self.promised => {
                self.promised = ballot;
                self.accepted = Some((ballot, founder));
                true
            }
            FoundingStep::Prepare(_) | FoundingStep::Accept(..) => false,
            FoundingStep::Chosen(founder) => {
                self.chosen = Some(founder);
                true
            }
        }
    }
}

/// This node's acceptor, its state durable before any answer leaves the node.
pub(crate) struct Acceptor {
    dir: PathBuf,
    state: Mutex<AcceptorState>,
}

impl Acceptor {
    pub(crate) fn open(dir: &Path) -> io::Result<Acceptor> {
        let state = match FILE.read(dir)? {
            Some(payload) => {
                decode(&payload).map_err(|e| FILE.corrupt(&dir.join(FILE.name), &e.to_string()))?
            }
            None => AcceptorState::default(),
        };
        Ok(Acceptor {
            dir: dir.to_path_buf(),
            state: Mutex::new(state),
        })
    }

    pub(crate) fn state(&self) -> AcceptorState {
        *self.state.lock()
    }

    /// The answer to a step this node will not take (a call from another cluster).
    pub(crate) fn refusal(&self) -> FoundingReply {
        FoundingReply {
            granted: false,
            state: self.state(),
        }
    }

    /// Applies `step`, writing the new state to disk when it changed.
    pub(crate) fn step(&self, step: FoundingStep) -> Result<FoundingReply, String> {
        self.try_step(step)
            .map_err(|e| format!("cannot record the founding step: {e}"))
    }

    fn try_step(&self, step: FoundingStep) -> io::Result<FoundingReply> {
        let mut state = self.state.lock();
        let mut next = *state;
        let granted = next.apply(step);
        if next != *state {
            let payload = encode(&next).map_err(|e| invalid_data(e.to_string()))?;
            FILE.write(&self.dir, &payload)?;
            *state = next;
        }
        Ok(FoundingReply {
            granted,
            state: next,
        })
    }
}

/// The founder a proposer holding `promises` (granted by a majority) must propose: the one
/// accepted under the highest ballot, or `me` if none was accepted.
pub(crate) fn value_to_propose(promises: &[AcceptorState], me: Peer) -> Peer {
    promises
        .iter()
        .filter_map(|state| state.accepted)
        .max_by_key(|(ballot, _)| *ballot)
        .map_or(me, |(_, founder)| founder)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(n: u8) -> Peer {
        Peer {
            host_id: HostId::from_bytes([n; 16]),
            addr: format!("127.0.0.{n}:7000").parse().unwrap(),
        }
    }

    fn ballot(round: u64, n: u8) -> Ballot {
        Ballot {
            round,
            host_id: peer(n).host_id,
        }
    }

    #[test]
    fn an_acceptor_refuses_ballots_lower_than_its_promise() {
        let mut state = AcceptorState::default();
        assert!(state.apply(FoundingStep::Prepare(ballot(2, 1))));
        assert!(!state.apply(FoundingStep::Prepare(ballot(1, 9))));
        assert!(!state.apply(FoundingStep::Accept(ballot(1, 9), peer(9))));
        assert_eq!(state.accepted, None);
        assert!(state.apply(FoundingStep::Accept(ballot(2, 1), peer(1))));
        assert_eq!(state.accepted, Some((ballot(2, 1), peer(1))));
        // Same round, higher host id: a higher ballot.
        assert!(state.apply(FoundingStep::Prepare(ballot(2, 3))));
        assert!(!state.apply(FoundingStep::Accept(ballot(2, 1), peer(1))));
        assert_eq!(state.promised, ballot(2, 3));
        assert!(state.apply(FoundingStep::Ask));
        assert!(state.apply(FoundingStep::Chosen(peer(1))));
        assert_eq!(state.chosen, Some(peer(1)));
    }

    #[test]
    fn a_proposer_keeps_the_founder_accepted_under_the_highest_ballot() {
        let accepted = |b: Ballot, p: Peer| AcceptorState {
            promised: b,
            accepted: Some((b, p)),
            chosen: None,
        };
        assert_eq!(
            value_to_propose(&[AcceptorState::default()], peer(5)),
            peer(5)
        );
        let promises = [
            accepted(ballot(1, 2), peer(2)),
            AcceptorState::default(),
            accepted(ballot(3, 1), peer(1)),
        ];
        assert_eq!(value_to_propose(&promises, peer(5)), peer(1));
    }

    #[test]
    fn the_state_survives_a_restart_and_a_refused_step_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let acceptor = Acceptor::open(dir.path()).unwrap();
        assert_eq!(acceptor.state(), AcceptorState::default());
        assert!(!dir.path().join(FILE.name).exists(), "an Ask wrote nothing");
        acceptor.step(FoundingStep::Ask).unwrap();
        assert!(!dir.path().join(FILE.name).exists());
        let reply = acceptor
            .step(FoundingStep::Accept(ballot(4, 2), peer(2)))
            .unwrap();
        assert!(reply.granted);
        let refused = acceptor.step(FoundingStep::Prepare(ballot(3, 9))).unwrap();
        assert!(!refused.granted);
        assert_eq!(refused.state.promised, ballot(4, 2));
        drop(acceptor);
        let reopened = Acceptor::open(dir.path()).unwrap();
        assert_eq!(reopened.state().accepted, Some((ballot(4, 2), peer(2))));
        assert_eq!(reopened.state().promised, ballot(4, 2));
    }
}
