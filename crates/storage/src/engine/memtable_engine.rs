//! A table engine backed only by a memtable (durability comes from the commit log).

use std::sync::Arc;

use parking_lot::RwLock;

use super::{read_sources, scan_sources, PartitionSource, TableEngine};
use crate::error::Result;
use crate::filter::{KeyRange, ReadFilter};
use crate::memtable::Memtable;
use crate::metrics::ReadStats;
use mutation::{Partition, PartitionKey, PartitionUpdate};

/// Memtable-only engine; truncation swaps in a fresh memtable.
#[derive(Default)]
pub struct MemtableEngine {
    current: RwLock<Arc<Memtable>>,
}

impl MemtableEngine {
    pub fn new() -> Self {
        MemtableEngine::default()
    }

    fn memtable(&self) -> Arc<Memtable> {
        self.current.read().clone()
    }
}

impl TableEngine for MemtableEngine {
    fn apply(&self, key: &PartitionKey, update: &PartitionUpdate) -> Result<()> {
        self.memtable().apply(key, update.clone());
        Ok(())
    }

    fn read(&self, key: &PartitionKey, filter: &ReadFilter, now: i32) -> Result<Option<Partition>> {
        let memtable = self.memtable();
        let sources: [&dyn PartitionSource; 1] = [memtable.as_ref()];
        read_sources(&sources, key, filter, now, &mut ReadStats::default())
    }

    fn scan(
        &self,
        range: &KeyRange,
        filter: &ReadFilter,
        now: i32,
        limit: usize,
    ) -> Result<Vec<Partition>> {
        let memtable = self.memtable();
        let sources: [&dyn PartitionSource; 1] = [memtable.as_ref()];
        scan_sources(
            &sources,
            range,
            filter,
            now,
            limit,
            &mut ReadStats::default(),
        )
    }

    fn truncate(&self) -> Result<()> {
        *self.current.write() = Arc::new(Memtable::new());
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        self.memtable().allocated_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtable_engine_passes_conformance() {
        crate::engine::conformance::run_all(MemtableEngine::new);
    }
}
