//! The replica side (Cassandra's `PaxosPrepare.RequestHandler`, `PaxosPropose.RequestHandler`,
//! `PaxosCommit`): each handler locks the partition, loads its [`PaxosState`], applies the
//! rule, and persists before it answers.
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

use parking_lot::{Mutex, MutexGuard};

use crate::ballot::Ballot;
use crate::messages::{Permitted, Prepare, PrepareAnswer, ProposeAnswer};
use crate::state::{PaxosState, Promise};
use crate::store::{Data, PaxosStore, StoreError};
use crate::types::{Proposal, Types};

/// Partitions share this many locks (by hash).
const LOCK_STRIPES: usize = 64;

/// One replica's Paxos participant over its store and data.
pub struct Replica<T: Types, S, D> {
    store: S,
    data: D,
    stripes: Vec<Mutex<()>>,
    types: PhantomData<fn() -> T>,
}

impl<T: Types, S: PaxosStore<T>, D: Data<T>> Replica<T, S, D> {
    pub fn new(store: S, data: D) -> Self {
        Replica {
            store,
            data,
            stripes: (0..LOCK_STRIPES).map(|_| Mutex::new(())).collect(),
            types: PhantomData,
        }
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    pub fn data(&self) -> &D {
        &self.data
    }

    fn lock(&self, key: &T::Key) -> MutexGuard<'_, ()> {
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        self.stripes[hasher.finish() as usize % LOCK_STRIPES].lock()
    }

    fn load(&self, key: &T::Key) -> Result<PaxosState<T>, StoreError> {
        Ok(self.store.get(key)?.unwrap_or_default())
    }

    /// Applies the commit it carries, then promises (or permits a read, or refuses) and reads.
    pub fn prepare(&self, request: &Prepare<T>) -> Result<PrepareAnswer<T>, StoreError> {
        let _guard = self.lock(&request.key);
        if let Some(commit) = &request.commit {
            self.commit_locked(&request.key, commit)?;
        }
        let low_bound = self.store.low_bound()?;
        let mut state = self.load(&request.key)?;
        let stable = state.is_stable();
        let promise = state.promise(request.ballot, request.is_write, low_bound);
        let superseded_by = match promise {
            Promise::Rejected { by } => return Ok(PrepareAnswer::Rejected { by }),
            Promise::ReadOnly { superseded_by } => Some(superseded_by),
            Promise::Promised => {
                self.store.put(&request.key, &state)?;
                None
            }
        };
        let read = match &request.read {
            Some(query) => Some(self.data.read(&request.key, query)?),
            None => None,
        };
        Ok(PrepareAnswer::Permitted(Permitted {
            promised: superseded_by.is_none(),
            superseded_by,
            accepted: state.accepted,
            committed: state.committed,
            read,
            stable,
        }))
    }

    /// Accepts the proposal unless a newer ballot was witnessed.
    pub fn propose(
        &self,
        key: &T::Key,
        proposal: &Proposal<T::Update>,
    ) -> Result<ProposeAnswer, StoreError> {
        let _guard = self.lock(key);
        let low_bound = self.store.low_bound()?;
        let mut state = self.load(key)?;
        match state.accept(proposal.clone(), low_bound) {
            Err(by) => Ok(ProposeAnswer::Rejected { by }),
            Ok(changed) => {
                if changed {
                    self.store.put(key, &state)?;
                }
                Ok(ProposeAnswer::Accepted)
            }
        }
    }

    /// Applies a decided update to the data and records the commit.
    pub fn commit(&self, key: &T::Key, commit: &Proposal<T::Update>) -> Result<(), StoreError> {
        let _guard = self.lock(key);
        self.commit_locked(key, commit)
    }

    fn commit_locked(&self, key: &T::Key, commit: &Proposal<T::Update>) -> Result<(), StoreError> {
        if !T::is_empty(&commit.update) {
            self.data.apply(key, &commit.update)?;
        }
        let mut state = self.load(key)?;
        if state.commit(commit.clone()) {
            self.store.put(key, &state)?;
        }
        Ok(())
    }

    /// Raises the store's low bound to `repaired` (the first step of a purge after repair, on
    /// every replica before any forgets anything): from then on no ballot at or below it is
    /// promised or accepted here, so the state below it can only gain commits.
    pub fn raise_low_bound(&self, repaired: Ballot) -> Result<(), StoreError> {
        self.store.raise_low_bound(repaired)
    }

    /// Whether the partition's state here (none counts) could be purged at `repaired`.
    pub fn is_purgeable(&self, key: &T::Key, repaired: Ballot) -> Result<bool, StoreError> {
        let _guard = self.lock(key);
        Ok(self
            .store
            .get(key)?
            .is_none_or(|state| state.is_purgeable(repaired)))
    }

    /// Forgets the partition's state if every round of it is committed and at or below
    /// `repaired`, a ballot below which Paxos repair completed every round on a quorum; the
    /// store's low bound is raised to it first, so no older ballot is promised again.
    /// Returns whether the state was purged.
    pub fn purge(&self, key: &T::Key, repaired: Ballot) -> Result<bool, StoreError> {
        let _guard = self.lock(key);
        let Some(state) = self.store.get(key)? else {
            return Ok(false);
        };
        if !state.is_purgeable(repaired) {
            return Ok(false);
        }
        self.store.raise_low_bound(repaired)?;
        self.store.remove(key)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;
    use crate::testing::{ballot, set, MemoryData, Reg};
    use std::sync::Arc;

    type TestReplica = Replica<Reg, Arc<MemoryStore<Reg>>, Arc<MemoryData>>;

    fn replica() -> TestReplica {
        Replica::new(Arc::default(), Arc::default())
    }

    fn prepare(micros: u64, is_write: bool) -> Prepare<Reg> {
        Prepare {
            key: 1,
            ballot: ballot(micros),
            is_write,
            read: Some(()),
            commit: None,
        }
    }

    fn permitted(answer: PrepareAnswer<Reg>) -> Permitted<Reg> {
        match answer {
            PrepareAnswer::Permitted(p) => p,
            other => panic!("expected a permission, got {other:?}"),
        }
    }

    #[test]
    fn a_promise_is_persisted_before_it_is_answered_and_returns_the_data() {
        let replica = replica();
        replica.data().set(1, set(5, 3));
        let answer = permitted(replica.prepare(&prepare(10, true)).unwrap());
        assert!(answer.promised && answer.stable);
        assert_eq!(answer.read, Some(set(5, 3)));
        // The store (what survives a crash) holds the promise.
        let stored = replica.store().get(&1).unwrap().unwrap();
        assert_eq!(stored.promised, ballot(10));
        // A replica rebuilt from the same store refuses an older ballot.
        let again = Replica::new(replica.store().clone(), replica.data().clone());
        assert_eq!(
            again.prepare(&prepare(9, true)).unwrap(),
            PrepareAnswer::Rejected { by: ballot(10) }
        );
    }

    #[test]
    fn a_prepare_reports_the_accepted_proposal_and_the_latest_commit() {
        let replica = replica();
        replica.prepare(&prepare(10, true)).unwrap();
        replica
            .propose(&1, &Proposal::new(ballot(10), set(1, 10)))
            .unwrap();
        replica
            .commit(&1, &Proposal::new(ballot(10), set(1, 10)))
            .unwrap();
        replica.prepare(&prepare(20, true)).unwrap();
        let accepted = Proposal::new(ballot(20), set(2, 20));
        assert_eq!(
            replica.propose(&1, &accepted).unwrap(),
            ProposeAnswer::Accepted
        );
        let answer = permitted(replica.prepare(&prepare(30, true)).unwrap());
        assert_eq!(answer.accepted, Some(accepted));
        assert_eq!(
            answer.committed,
            Some(Proposal::new(ballot(10), set(1, 10)))
        );
        assert_eq!(
            answer.read,
            Some(set(1, 10)),
            "only the commit reached the data"
        );
        assert!(!answer.stable, "a write is in flight");
    }

    #[test]
    fn a_proposal_under_an_older_ballot_is_refused_and_changes_nothing() {
        let replica = replica();
        replica.prepare(&prepare(10, true)).unwrap();
        let answer = replica
            .propose(&1, &Proposal::new(ballot(9), set(1, 9)))
            .unwrap();
        assert_eq!(answer, ProposeAnswer::Rejected { by: ballot(10) });
        assert_eq!(replica.store().get(&1).unwrap().unwrap().accepted, None);
    }

    #[test]
    fn a_commit_is_applied_to_the_data_and_an_empty_one_is_not() {
        let replica = replica();
        replica
            .commit(&1, &Proposal::new(ballot(10), set(7, 10)))
            .unwrap();
        assert_eq!(replica.data().get(1), set(7, 10));
        replica
            .commit(&1, &Proposal::new(ballot(20), None))
            .unwrap();
        assert_eq!(replica.data().get(1), set(7, 10));
        assert_eq!(
            replica.store().get(&1).unwrap().unwrap().committed,
            Some(Proposal::new(ballot(20), None))
        );
    }

    #[test]
    fn a_commit_carried_by_a_prepare_is_applied_before_the_read() {
        let replica = replica();
        let mut request = prepare(30, true);
        request.commit = Some(Proposal::new(ballot(20), set(4, 20)));
        let answer = permitted(replica.prepare(&request).unwrap());
        assert_eq!(answer.read, Some(set(4, 20)));
        assert_eq!(answer.committed.map(|c| c.ballot), Some(ballot(20)));
    }

    #[test]
    fn a_read_only_permission_is_not_persisted() {
        let replica = replica();
        replica.prepare(&prepare(20, false)).unwrap();
        let answer = permitted(replica.prepare(&prepare(15, false)).unwrap());
        assert!(!answer.promised);
        assert_eq!(answer.superseded_by, Some(ballot(20)));
        assert_eq!(
            replica.store().get(&1).unwrap().unwrap().promised,
            ballot(20)
        );
    }

    #[test]
    fn purging_a_committed_partition_keeps_older_ballots_refused() {
        let replica = replica();
        replica.prepare(&prepare(10, true)).unwrap();
        replica
            .propose(&1, &Proposal::new(ballot(10), set(1, 10)))
            .unwrap();
        assert!(!replica.purge(&1, ballot(50)).unwrap(), "not committed yet");
        replica
            .commit(&1, &Proposal::new(ballot(10), set(1, 10)))
            .unwrap();
        assert!(
            !replica.purge(&1, ballot(5)).unwrap(),
            "newer than the repair"
        );
        assert!(replica.purge(&1, ballot(10)).unwrap());
        assert!(replica.store().is_empty());
        assert_eq!(replica.data().get(1), set(1, 10), "the data stays");
        assert_eq!(
            replica.prepare(&prepare(10, true)).unwrap(),
            PrepareAnswer::Rejected { by: ballot(10) }
        );
        assert!(permitted(replica.prepare(&prepare(11, true)).unwrap()).promised);
    }

    #[test]
    fn a_raised_low_bound_refuses_a_late_proposal_at_or_below_it() {
        let replica = replica();
        replica.prepare(&prepare(10, true)).unwrap();
        assert!(
            replica.is_purgeable(&1, ballot(50)).unwrap(),
            "only a promise"
        );
        replica.raise_low_bound(ballot(50)).unwrap();
        // The proposal of the promised ballot arrives after the bound was raised: refused,
        // so what the purge judged (nothing accepted) still holds.
        let late = Proposal::new(ballot(10), set(1, 10));
        assert_eq!(
            replica.propose(&1, &late).unwrap(),
            ProposeAnswer::Rejected { by: ballot(50) }
        );
        assert!(replica.is_purgeable(&1, ballot(50)).unwrap());
        assert!(replica.is_purgeable(&2, ballot(50)).unwrap(), "no state");
        assert!(
            !replica.is_purgeable(&1, ballot(9)).unwrap(),
            "promised later"
        );
    }
}
