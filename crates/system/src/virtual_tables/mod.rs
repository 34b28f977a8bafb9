//! The virtual tables computed from the node's storage: `system_views.caches`,
//! `sstable_tasks`, `thread_pools` and the per-table figures (`rows_per_read`,
//! `tombstones_per_read`, `disk_usage`, `max_partition_size`), and the in-memory engine every
//! virtual table's rows are read from (`snapshot`). Their definitions, and the tables computed
//! from what the query layer sees, are in `query::virtual_tables`.
mod caches;
mod snapshot;
mod sstable_tasks;
mod table_stats;
mod thread_pools;

use std::sync::Arc;

use query::virtual_tables::VirtualTable;
use storage::Storage;

pub use snapshot::Snapshot;

/// The virtual tables read from `storage`.
pub fn tables(storage: &Arc<Storage>) -> Vec<Box<dyn VirtualTable>> {
    let mut tables: Vec<Box<dyn VirtualTable>> = vec![
        Box::new(caches::Caches(storage.clone())),
        Box::new(sstable_tasks::SstableTasks(storage.clone())),
        Box::new(thread_pools::ThreadPools(storage.clone())),
    ];
    tables.extend(table_stats::tables(storage));
    tables
}

#[cfg(test)]
mod tests {
    use super::*;
    use query::virtual_tables::{catalog, VirtualTables};
    use storage::StorageConfig;

    #[test]
    fn every_defined_table_has_a_producer_and_back() {
        let dir = tempfile::tempdir().expect("a directory");
        let config = StorageConfig::new(dir.path().join("data"), dir.path().join("log"));
        let storage = Arc::new(Storage::open(config).expect("storage opens"));
        let registry = VirtualTables::new().with(tables(&storage));
        let produced: Vec<(&str, &str)> = registry.names().collect();
        let defined: Vec<(&str, &str)> = catalog()
            .iter()
            .flat_map(|k| {
                k.tables
                    .values()
                    .map(|t| (k.name.as_str(), t.name.as_str()))
            })
            .collect();
        for name in &defined {
            assert!(produced.contains(name), "{name:?} has no producer");
        }
        assert_eq!(produced.len(), defined.len());
    }
}
