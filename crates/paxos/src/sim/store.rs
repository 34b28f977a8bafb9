//! A replica's Paxos store in the simulation: durable at every write, or, to show that the
//! checker catches a replica answering before its state is durable, one that keeps writes
//! in memory until a background sync and loses them in a crash.
use std::collections::HashMap;

use parking_lot::Mutex;

use crate::ballot::Ballot;
use crate::state::PaxosState;
use crate::store::{MemoryStore, PaxosStore, StoreError};
use crate::testing::Reg;

#[derive(Default)]
pub(super) struct SimStore {
    durable: MemoryStore<Reg>,
    unsynced: Mutex<HashMap<u8, PaxosState<Reg>>>,
    write_behind: bool,
}

impl SimStore {
    pub(super) fn new(write_behind: bool) -> Self {
        SimStore {
            write_behind,
            ..SimStore::default()
        }
    }

    /// Makes the writes so far durable.
    pub(super) fn sync(&self) {
        for (key, state) in self.unsynced.lock().drain() {
            let _ = self.durable.put(&key, &state);
        }
    }

    /// Loses what was not synced.
    pub(super) fn crash(&self) {
        self.unsynced.lock().clear();
    }
}

impl PaxosStore<Reg> for SimStore {
    fn get(&self, key: &u8) -> Result<Option<PaxosState<Reg>>, StoreError> {
        match self.unsynced.lock().get(key) {
            Some(state) => Ok(Some(state.clone())),
            None => self.durable.get(key),
        }
    }

    fn put(&self, key: &u8, state: &PaxosState<Reg>) -> Result<(), StoreError> {
        if self.write_behind {
            self.unsynced.lock().insert(*key, state.clone());
            return Ok(());
        }
        self.durable.put(key, state)
    }

    fn remove(&self, key: &u8) -> Result<(), StoreError> {
        self.unsynced.lock().remove(key);
        self.durable.remove(key)
    }

    fn low_bound(&self) -> Result<Ballot, StoreError> {
        self.durable.low_bound()
    }

    fn raise_low_bound(&self, ballot: Ballot) -> Result<(), StoreError> {
        self.durable.raise_low_bound(ballot)
    }
}
