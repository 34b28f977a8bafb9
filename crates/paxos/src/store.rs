//! Where a replica keeps what Paxos needs across restarts: its registers per partition
//! ([`PaxosStore`], Cassandra's `system.paxos`) and the data commits apply to ([`Data`], the
//! table itself). Both are durable when a call returns: a replica answers a promise, an
//! accept or a commit only after that, so a `kill -9` never loses what it answered.
use std::collections::HashMap;

use parking_lot::Mutex;

use crate::ballot::Ballot;
use crate::state::PaxosState;
use crate::types::Types;

/// A store that failed to read or write (the replica answers a failure, never a promise).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("paxos store: {0}")]
pub struct StoreError(pub String);

/// A replica's durable Paxos registers, one [`PaxosState`] per partition. Each call is atomic
/// for its partition and durable when it returns.
pub trait PaxosStore<T: Types>: Send + Sync {
    fn get(&self, key: &T::Key) -> Result<Option<PaxosState<T>>, StoreError>;
    fn put(&self, key: &T::Key, state: &PaxosState<T>) -> Result<(), StoreError>;
    fn remove(&self, key: &T::Key) -> Result<(), StoreError>;
    /// The ballot below which every round was completed by Paxos repair and state may have
    /// been purged: no ballot at or below it is promised or accepted any more.
    fn low_bound(&self) -> Result<Ballot, StoreError>;
    /// Raises the low bound (never lowers it).
    fn raise_low_bound(&self, ballot: Ballot) -> Result<(), StoreError>;
}

/// A replica's data for the decided keys: commits are applied to it (durably) and prepares
/// read from it.
pub trait Data<T: Types>: Send + Sync {
    fn read(&self, key: &T::Key, query: &T::Query) -> Result<T::Read, StoreError>;
    /// Applies a committed update; applying one twice changes nothing more.
    fn apply(&self, key: &T::Key, update: &T::Update) -> Result<(), StoreError>;
}

/// A [`PaxosStore`] in memory, for tests: "durable" as long as the value lives, so a
/// simulated crash drops the replica around it and keeps the store.
pub struct MemoryStore<T: Types> {
    states: Mutex<HashMap<T::Key, PaxosState<T>>>,
    low_bound: Mutex<Ballot>,
}

impl<T: Types> Default for MemoryStore<T> {
    fn default() -> Self {
        MemoryStore {
            states: Mutex::new(HashMap::new()),
            low_bound: Mutex::new(Ballot::ZERO),
        }
    }
}

impl<T: Types> MemoryStore<T> {
    /// How many partitions have state here.
    pub fn len(&self) -> usize {
        self.states.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: Types> PaxosStore<T> for MemoryStore<T> {
    fn get(&self, key: &T::Key) -> Result<Option<PaxosState<T>>, StoreError> {
        Ok(self.states.lock().get(key).cloned())
    }

    fn put(&self, key: &T::Key, state: &PaxosState<T>) -> Result<(), StoreError> {
        self.states.lock().insert(key.clone(), state.clone());
        Ok(())
    }

    fn remove(&self, key: &T::Key) -> Result<(), StoreError> {
        self.states.lock().remove(key);
        Ok(())
    }

    fn low_bound(&self) -> Result<Ballot, StoreError> {
        Ok(*self.low_bound.lock())
    }

    fn raise_low_bound(&self, ballot: Ballot) -> Result<(), StoreError> {
        let mut low = self.low_bound.lock();
        *low = (*low).max(ballot);
        Ok(())
    }
}

impl<T: Types, S: PaxosStore<T>> PaxosStore<T> for std::sync::Arc<S> {
    fn get(&self, key: &T::Key) -> Result<Option<PaxosState<T>>, StoreError> {
        (**self).get(key)
    }

    fn put(&self, key: &T::Key, state: &PaxosState<T>) -> Result<(), StoreError> {
        (**self).put(key, state)
    }

    fn remove(&self, key: &T::Key) -> Result<(), StoreError> {
        (**self).remove(key)
    }

    fn low_bound(&self) -> Result<Ballot, StoreError> {
        (**self).low_bound()
    }

    fn raise_low_bound(&self, ballot: Ballot) -> Result<(), StoreError> {
        (**self).raise_low_bound(ballot)
    }
}

impl<T: Types, D: Data<T>> Data<T> for std::sync::Arc<D> {
    fn read(&self, key: &T::Key, query: &T::Query) -> Result<T::Read, StoreError> {
        (**self).read(key, query)
    }

    fn apply(&self, key: &T::Key, update: &T::Update) -> Result<(), StoreError> {
        (**self).apply(key, update)
    }
}
