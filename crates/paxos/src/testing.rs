//! A register per key, the data model of the tests: an update sets the value with its write
//! timestamp, a replica keeps the newest, a read resolves to the newest of the replicas'.
use std::collections::HashMap;

use parking_lot::Mutex;

use crate::ballot::Ballot;
use crate::store::{Data, StoreError};
use crate::types::Types;

/// A register's value with its write timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    pub value: i64,
    pub micros: u64,
}

/// Registers keyed by a byte; `None` is the empty update. An unwritten register reads 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Reg;

impl Types for Reg {
    type Key = u8;
    type Update = Option<Write>;
    type Query = ();
    type Read = Option<Write>;
    type Value = i64;

    fn empty_update(_key: &u8) -> Option<Write> {
        None
    }

    fn is_empty(update: &Option<Write>) -> bool {
        update.is_none()
    }

    fn resolve(_query: &(), reads: Vec<Option<Write>>) -> i64 {
        newest(reads.into_iter().flatten()).map_or(0, |w| w.value)
    }
}

fn newest(writes: impl Iterator<Item = Write>) -> Option<Write> {
    writes.max_by_key(|w| (w.micros, w.value))
}

/// The update setting `value` at `micros`.
pub fn set(value: i64, micros: u64) -> Option<Write> {
    Some(Write { value, micros })
}

/// A ballot of node 1 at `micros`.
pub fn ballot(micros: u64) -> Ballot {
    Ballot {
        micros,
        counter: 0,
        node: 1,
    }
}

/// A replica's registers, newest write wins.
#[derive(Default)]
pub struct MemoryData(Mutex<HashMap<u8, Write>>);

impl MemoryData {
    pub fn get(&self, key: u8) -> Option<Write> {
        self.0.lock().get(&key).copied()
    }

    pub fn set(&self, key: u8, write: Option<Write>) {
        if let Some(write) = write {
            self.0.lock().insert(key, write);
        }
    }
}

impl Data<Reg> for MemoryData {
    fn read(&self, key: &u8, _query: &()) -> Result<Option<Write>, StoreError> {
        Ok(self.get(*key))
    }

    fn apply(&self, key: &u8, update: &Option<Write>) -> Result<(), StoreError> {
        let mut registers = self.0.lock();
        let current = registers.get(key).copied();
        if let Some(write) = newest(current.into_iter().chain(*update)) {
            registers.insert(*key, write);
        }
        Ok(())
    }
}
