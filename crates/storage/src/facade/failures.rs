//! How storage reacts to failed disks and corrupt SSTables, per the policies of
//! [`Health`](crate::health::Health): every failed flush, compaction and read of a data
//! directory goes through [`Core::disk_failure`]; a corrupt SSTable is marked suspect (background
//! compactions leave it alone) and counted in its table's metrics. Work a DROP or TRUNCATE
//! cancelled ([`StorageError::Cancelled`]) is no failure: the policies never see it.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::core::Core;
use super::Storage;
use crate::engine::LsmEngine;
use crate::error::{Result, StorageError};
use crate::health::{FailureListener, Operation};

impl Core {
    /// Applies the disk failure policy to a failure of `operation` on the data directories.
    /// A corrupt SSTable is marked suspect; a data directory `best_effort` made unreadable
    /// loses its SSTables from every table's view.
    pub fn disk_failure(&self, operation: Operation, error: &StorageError) {
        match error {
            StorageError::Corrupt { file, .. } => {
                for engine in self.engines() {
                    if let Some(sstable) = engine.sstable_owning(file) {
                        sstable.mark_suspect();
                    }
                }
                self.health.corrupt_sstable(error);
            }
            StorageError::Io { .. } => {
                if let Some(root) = self.health.fs_error(operation, error) {
                    for engine in self.engines() {
                        engine.forget_sstables_under(&root);
                    }
                }
            }
            // Work cancelled by a DROP or TRUNCATE, a closed storage, an unknown table: no
            // disk failed.
            _ => {}
        }
    }

    /// A failed flush: counted, then the disk failure policy (a flush of a table dropped
    /// meanwhile did not fail).
    pub fn flush_failed(&self, error: &StorageError) {
        if matches!(error, StorageError::Cancelled(_)) {
            return;
        }
        self.flush_failures.fetch_add(1, Ordering::Relaxed);
        self.disk_failure(Operation::Write, error);
    }

    /// A failed read of `engine`'s table: counted when corrupt data failed it, then the policy.
    pub fn read_failed(&self, engine: &LsmEngine, error: &StorageError) {
        if matches!(error, StorageError::Corrupt { .. }) {
            engine.metrics().count_corrupt_read();
        }
        self.disk_failure(Operation::Read, error);
    }

    /// A failed compaction of `inputs`: an I/O error on one of their files was a read, any
    /// other a write.
    pub fn compaction_failed(&self, engine: &LsmEngine, inputs: &[u64], error: &StorageError) {
        let operation = match error {
            StorageError::Io { path, .. }
                if engine
                    .sstable_owning(path)
                    .is_some_and(|s| inputs.contains(&s.generation())) =>
            {
                Operation::Read
            }
            _ => Operation::Write,
        };
        self.disk_failure(operation, error);
    }
}

impl Storage {
    /// Installs the node's reaction to the actions the failure policies take (stop serving
    /// clients, exit).
    pub fn on_failure(&self, listener: FailureListener) {
        self.core.health.set_listener(listener);
    }

    /// Flushes that failed since the node started.
    pub fn flush_failures(&self) -> u64 {
        self.core.flush_failures.load(Ordering::Relaxed)
    }

    /// Data directories `best_effort` took out of use for new SSTables.
    pub fn unwritable_dirs(&self) -> Vec<PathBuf> {
        self.core.health.unwritable_dirs()
    }

    /// `result` of a read of `engine`'s table, its failure reported to the policies.
    pub(super) fn checked_read<T>(&self, engine: &LsmEngine, result: Result<T>) -> Result<T> {
        result.inspect_err(|error| self.core.read_failed(engine, error))
    }
}
