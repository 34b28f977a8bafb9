//! A table's directories on disk (one per data directory): opening their SSTables at start-up
//! (interrupted compactions completed or rolled back, crash leftovers cleaned, corrupt ones
//! reported by name or quarantined) and the replay floor, the commit-log position before which
//! everything logged for the table is in SSTables.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use crate::commitlog::Position;
use crate::compaction::SstableInfo;
use crate::error::{Result, StorageError};
use crate::sstable::{self, Component, Descriptor, Sstable};

/// File holding the replay floor: `<segment> <offset>`.
const FLOOR_FILE: &str = "replay_floor.txt";
/// Sub-directory corrupt SSTables are moved to when quarantine is on.
const QUARANTINE_DIR: &str = "quarantine";

/// An open SSTable with what the engine needs beside it.
pub struct LiveSstable {
    pub sstable: Sstable,
    /// Modification time of its Data file, ms since the epoch.
    pub created_ms: i64,
    /// Set when reading it met corrupt data: background compactions leave it alone (they would
    /// fail on it again and again), as Cassandra's suspect SSTables; a scrub replaces it.
    suspect: AtomicBool,
}

impl LiveSstable {
    /// Opens a committed SSTable.
    pub fn open(desc: &Descriptor) -> Result<LiveSstable> {
        let sstable = Sstable::open(desc)?;
        let path = desc.path(Component::Data);
        let modified = fs::metadata(&path)
            .and_then(|m| m.modified())
            .map_err(|e| StorageError::io(&path, e))?;
        let created_ms = modified
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        Ok(LiveSstable {
            sstable,
            created_ms,
            suspect: AtomicBool::new(false),
        })
    }

    pub fn generation(&self) -> u64 {
        self.sstable.generation()
    }

    /// Whether `path` is one of its component files.
    pub fn owns(&self, path: &Path) -> bool {
        let desc = self.sstable.descriptor();
        path.parent() == Some(desc.dir.as_path())
            && Component::ALL.iter().any(|c| desc.path(*c) == path)
    }

    pub fn mark_suspect(&self) {
        self.suspect.store(true, Ordering::Relaxed);
    }

    pub fn is_suspect(&self) -> bool {
        self.suspect.load(Ordering::Relaxed)
    }

    /// What compaction strategies need to know, at `gc_before` (seconds).
    pub fn info(&self, gc_before: i32, being_compacted: bool) -> SstableInfo {
        let stats = self.sstable.stats();
        let repair = self.sstable.repair();
        let max_local_deletion_time = match stats.max_local_deletion_time {
            i32::MAX => i64::MAX,
            t => i64::from(t),
        };
        SstableInfo {
            generation: self.generation(),
            size_bytes: self.sstable.size_on_disk(),
            min_timestamp: stats.min_timestamp,
            max_timestamp: stats.max_timestamp,
            max_local_deletion_time,
            min_token: stats.min_token().unwrap_or(0),
            max_token: stats.max_token().unwrap_or(0),
            level: self.sstable.level(),
            droppable_tombstones: stats.droppable_tombstone_ratio(gc_before),
            created_at_ms: self.created_ms,
            key_count: stats.partitions,
            repaired: repair.is_repaired(),
            pending_repair: repair.pending_repair,
            being_compacted: being_compacted || self.is_suspect(),
        }
    }
}

/// `<data_dir>/<keyspace>/<table>-<id without dashes>`, as Cassandra names table directories.
pub fn table_dir(data_dir: &Path, keyspace: &str, table: &str, id: uuid::Uuid) -> PathBuf {
    data_dir
        .join(keyspace)
        .join(format!("{table}-{}", id.simple()))
}

/// Opens a table spread over `dirs` (created if needed; the first, primary one holds the
/// compaction transaction logs): recovers interrupted compactions, then opens the SSTables of
/// every directory, newest generation first.
pub fn open_table_dirs(dirs: &[PathBuf], quarantine: bool) -> Result<Vec<Arc<LiveSstable>>> {
    let Some(primary) = dirs.first() else {
        return Err(StorageError::Invalid(
            "a table needs at least one data directory".to_string(),
        ));
    };
    for dir in dirs {
        fs::create_dir_all(dir).map_err(|e| StorageError::io(dir, e))?;
        crate::stream::clean_leftovers(dir)?;
    }
    crate::compaction::exec::recover(primary, dirs)?;
    let mut sstables = Vec::new();
    for dir in dirs {
        sstables.extend(open_sstables(dir, quarantine)?);
    }
    sstables.sort_by_key(|s| std::cmp::Reverse(s.generation()));
    Ok(sstables)
}

/// Opens every complete SSTable of `dir`, removing leftovers of interrupted writes. A corrupt
/// one fails the open with an error naming its file, or with `quarantine` is moved to
/// `dir/quarantine/` and skipped.
fn open_sstables(dir: &Path, quarantine: bool) -> Result<Vec<Arc<LiveSstable>>> {
    let mut open = Vec::new();
    for desc in sstable::list(dir)?.into_iter().rev() {
        match LiveSstable::open(&desc) {
            Ok(live) => open.push(Arc::new(live)),
            Err(error) if quarantine => quarantine_sstable(&desc, &error)?,
            Err(error) => return Err(error),
        }
    }
    Ok(open)
}

/// Moves every component of `desc` to the quarantine directory.
fn quarantine_sstable(desc: &Descriptor, error: &StorageError) -> Result<()> {
    let target = desc.dir.join(QUARANTINE_DIR);
    fs::create_dir_all(&target).map_err(|e| StorageError::io(&target, e))?;
    tracing::error!(
        "quarantining SSTable {} to {}: {error}",
        desc.path(Component::Data).display(),
        target.display()
    );
    for component in Component::ALL {
        let from = desc.path(component);
        if !from.exists() {
            continue;
        }
        let Some(name) = from.file_name() else {
            continue;
        };
        fs::rename(&from, target.join(name)).map_err(|e| StorageError::io(&from, e))?;
    }
    Ok(())
}

/// The replay floor recorded in `dir` ([`Position::ZERO`] when none was recorded).
pub fn read_floor(dir: &Path) -> Result<Position> {
    let path = dir.join(FLOOR_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Position::ZERO),
        Err(e) => return Err(StorageError::io(&path, e)),
    };
    let parsed = text
        .trim()
        .split_once(' ')
        .and_then(|(s, o)| Some(Position::new(s.parse().ok()?, o.parse().ok()?)));
    parsed.ok_or_else(|| StorageError::Corrupt {
        file: path,
        offset: 0,
        reason: format!("expected '<segment> <offset>', found {:?}", text.trim()),
    })
}

/// Records the replay floor durably (temporary file, fsync, rename, directory fsync).
pub fn write_floor(dir: &Path, floor: Position) -> Result<()> {
    use std::io::Write;
    let (tmp, path) = (dir.join(format!("tmp-{FLOOR_FILE}")), dir.join(FLOOR_FILE));
    let write = || -> std::io::Result<()> {
        let mut file = fs::File::create(&tmp)?;
        writeln!(file, "{} {}", floor.segment, floor.offset)?;
        file.sync_all()?;
        fs::rename(&tmp, &path)?;
        fs::File::open(dir)?.sync_all()
    };
    write().map_err(|e| StorageError::io(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_round_trips_and_garbage_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(read_floor(dir.path()).expect("absent"), Position::ZERO);
        write_floor(dir.path(), Position::new(7, 1234)).expect("write");
        assert_eq!(
            read_floor(dir.path()).expect("read"),
            Position::new(7, 1234)
        );
        fs::write(dir.path().join(FLOOR_FILE), "junk").expect("write");
        let error = read_floor(dir.path()).expect_err("corrupt").to_string();
        assert!(error.contains(FLOOR_FILE), "{error}");
    }

    #[test]
    fn table_dirs_follow_cassandra_naming() {
        let id = uuid::Uuid::from_u128(0xabc);
        let dir = table_dir(Path::new("/d"), "ks", "t", id);
        assert_eq!(dir, Path::new("/d/ks/t-00000000000000000000000000000abc"));
    }
}
