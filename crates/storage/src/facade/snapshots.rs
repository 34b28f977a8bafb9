//! Snapshots of tables through [`Storage`]: `nodetool snapshot`, `listsnapshots` and
//! `clearsnapshot`, and the automatic snapshots Cassandra takes before DROP and TRUNCATE
//! (`auto_snapshot`). See [`crate::snapshot`] for the layout on disk.

use std::io::ErrorKind;

use super::Storage;
use crate::engine::LsmEngine;
use crate::error::{Result, StorageError};
use crate::snapshot::{self, SnapshotInfo};
use mutation::TableId;

/// Times a snapshot is retried when a compaction deletes an SSTable while it is being linked.
const ATTEMPTS: usize = 5;

/// A table to snapshot, with its `CREATE TABLE` statement when the caller knows it (written
/// to the snapshot as `schema.cql`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotTable {
    pub id: TableId,
    pub schema: Option<String>,
}

impl Storage {
    /// Flushes each table, then hard-links its live SSTables into `<table dir>/snapshots/<tag>/`
    /// of the table directory holding them, each part with a `manifest.json` (and
    /// `schema.cql`). Fails, creating nothing, when the tag is invalid or a table already has a
    /// snapshot of that name. Blocks for the flushes.
    pub fn snapshot(&self, tag: &str, tables: &[SnapshotTable]) -> Result<()> {
        snapshot::validate_tag(tag)?;
        let engines = tables
            .iter()
            .map(|t| self.engine(t.id))
            .collect::<Result<Vec<_>>>()?;
        if engines.iter().any(|e| {
            e.dirs()
                .iter()
                .any(|dir| snapshot::directory(dir, tag).exists())
        }) {
            return Err(StorageError::Invalid(format!(
                "Snapshot {tag} already exists."
            )));
        }
        for (table, engine) in tables.iter().zip(&engines) {
            self.core.flush(engine)?;
            link_live_sstables(engine, tag, table.schema.as_deref())?;
        }
        Ok(())
    }

    /// Every snapshot of every table, including tables dropped since.
    pub fn list_snapshots(&self) -> Result<Vec<SnapshotInfo>> {
        snapshot::list(&self.core.config.data_dirs)
    }

    /// Removes the snapshots named `tag`, or all snapshots with `None`; returns how many table
    /// snapshots were removed.
    pub fn clear_snapshot(&self, tag: Option<&str>) -> Result<usize> {
        snapshot::clear(&self.core.config.data_dirs, tag)
    }

    /// Whether DROP and TRUNCATE should snapshot first (`auto_snapshot`).
    pub fn auto_snapshot(&self) -> bool {
        self.core.config.auto_snapshot
    }
}

/// Links the engine's current SSTables into a part per directory holding some (the primary
/// directory always has one), retrying when a compaction replaced some meanwhile. Runs as a
/// task of the table, so a DROP or TRUNCATE waits for it instead of deleting files under it.
fn link_live_sstables(engine: &LsmEngine, tag: &str, schema: Option<&str>) -> Result<()> {
    let _work = engine.start_task()?;
    let mut attempt = 1;
    loop {
        match link_once(engine, tag, schema) {
            Err(StorageError::Io { source, .. })
                if source.kind() == ErrorKind::NotFound && attempt < ATTEMPTS =>
            {
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// One attempt: every part, or (on failure) none.
fn link_once(engine: &LsmEngine, tag: &str, schema: Option<&str>) -> Result<()> {
    let descriptors = engine.descriptors();
    let mut created: Vec<&std::path::Path> = Vec::new();
    for (index, dir) in engine.dirs().iter().enumerate() {
        let here: Vec<_> = descriptors
            .iter()
            .filter(|d| d.dir == *dir)
            .cloned()
            .collect();
        if here.is_empty() && index > 0 {
            continue;
        }
        if let Err(error) = snapshot::create(dir, tag, &here, schema) {
            for part in &created {
                let _ = std::fs::remove_dir_all(snapshot::directory(part, tag));
            }
            return Err(error);
        }
        created.push(dir);
    }
    Ok(())
}
