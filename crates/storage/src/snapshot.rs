//! Snapshots on disk: `<table dir>/snapshots/<tag>/` holds hard links to every component of the
//! table's live SSTables (so taking one copies nothing, and the files outlive their deletion by
//! compaction, TRUNCATE or DROP), a `manifest.json` listing them as Cassandra writes it, and the
//! table's `schema.cql` when known. Listing reports each snapshot's size on disk and its true
//! size (the bytes only snapshots still hold); clearing removes the directories. A table spread
//! over several data directories has a part of each snapshot in each of its directories (hard
//! links cannot cross file systems); listing and clearing treat the parts as one snapshot.

use std::fs;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{Result, StorageError};
use crate::sstable::{Component, Descriptor};

/// Sub-directory of a table directory that holds its snapshots.
pub const SNAPSHOTS_DIR: &str = "snapshots";
const MANIFEST: &str = "manifest.json";
const SCHEMA: &str = "schema.cql";

/// One snapshot of one table, as `nodetool listsnapshots` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotInfo {
    pub tag: String,
    pub keyspace: String,
    pub table: String,
    /// Bytes no live SSTable shares: what clearing the snapshot would free.
    pub true_size: u64,
    /// Bytes of all its files.
    pub size_on_disk: u64,
    /// Where its manifest is (the part in the first data directory holding it).
    pub directory: PathBuf,
    /// Every part, one per data directory holding one, `directory` first.
    pub directories: Vec<PathBuf>,
}

/// Checks that `tag` can name a directory, as Cassandra does.
pub fn validate_tag(tag: &str) -> Result<()> {
    if tag.is_empty() || tag == "." || tag == ".." || tag.contains(std::path::MAIN_SEPARATOR) {
        return Err(StorageError::Invalid(format!(
            "Snapshot name must not be empty, '.', '..' or contain {}: {tag:?}",
            std::path::MAIN_SEPARATOR
        )));
    }
    Ok(())
}

/// The directory of snapshot `tag` of the table in `table_dir`.
pub fn directory(table_dir: &Path, tag: &str) -> PathBuf {
    table_dir.join(SNAPSHOTS_DIR).join(tag)
}

/// Hard-links every component of `sstables` into snapshot `tag` of `table_dir` and writes its
/// manifest and schema. Fails with `NotFound` when an SSTable was deleted meanwhile (the
/// caller retries with the current SSTables); the partial snapshot is removed on failure.
pub fn create(
    table_dir: &Path,
    tag: &str,
    sstables: &[Descriptor],
    schema: Option<&str>,
) -> Result<()> {
    let dir = directory(table_dir, tag);
    if dir.exists() {
        return Err(StorageError::Invalid(format!(
            "Snapshot {tag} already exists."
        )));
    }
    fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
    let written = link_and_describe(&dir, sstables, schema);
    if written.is_err() {
        let _ = fs::remove_dir_all(&dir);
    }
    written
}

fn link_and_describe(dir: &Path, sstables: &[Descriptor], schema: Option<&str>) -> Result<()> {
    let mut files = Vec::new();
    for desc in sstables {
        for component in Component::ALL {
            let source = desc.path(component);
            let Some(name) = source.file_name() else {
                continue;
            };
            let target = dir.join(name);
            fs::hard_link(&source, &target).map_err(|e| StorageError::io(&source, e))?;
            files.push(name.to_string_lossy().into_owned());
        }
    }
    write_file(
        &dir.join(MANIFEST),
        manifest(&files, SystemTime::now()).as_bytes(),
    )?;
    if let Some(schema) = schema {
        write_file(&dir.join(SCHEMA), schema.as_bytes())?;
    }
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StorageError::io(dir, e))
}

fn write_file(path: &Path, content: &[u8]) -> Result<()> {
    let write = || -> std::io::Result<()> {
        let mut file = fs::File::create(path)?;
        file.write_all(content)?;
        file.sync_all()
    };
    write().map_err(|e| StorageError::io(path, e))
}

/// Cassandra's `manifest.json`: the files and the creation time.
fn manifest(files: &[String], created: SystemTime) -> String {
    let quoted: Vec<String> = files.iter().map(|f| format!("{f:?}")).collect();
    format!(
        "{{\"files\":[{}],\"created_at\":\"{}\",\"expires_at\":null,\"ephemeral\":false}}\n",
        quoted.join(","),
        iso8601(created)
    )
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC.
fn iso8601(time: SystemTime) -> String {
    let millis = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let (days, ms_of_day) = ((millis / 86_400_000) as i64, (millis % 86_400_000) as u64);
    let (year, month, day) = civil_from_days(days);
    let secs = ms_of_day / 1000;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        ms_of_day % 1000
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Every snapshot under `data_dirs` (`<keyspace>/<table>-<id>/snapshots/<tag>`), its parts in
/// several data directories merged, sorted by tag, keyspace and table.
pub fn list(data_dirs: &[PathBuf]) -> Result<Vec<SnapshotInfo>> {
    let mut found: Vec<SnapshotInfo> = Vec::new();
    for data_dir in data_dirs {
        for part in list_one(data_dir)? {
            match found.iter_mut().find(|s| same_snapshot(s, &part)) {
                Some(known) => {
                    known.true_size += part.true_size;
                    known.size_on_disk += part.size_on_disk;
                    known.directories.extend(part.directories);
                }
                None => found.push(part),
            }
        }
    }
    found.sort_by(|a, b| (&a.tag, &a.keyspace, &a.table).cmp(&(&b.tag, &b.keyspace, &b.table)));
    Ok(found)
}

/// Whether two parts belong to one snapshot: same tag and same table directory name.
fn same_snapshot(a: &SnapshotInfo, b: &SnapshotInfo) -> bool {
    let table_dir = |s: &SnapshotInfo| {
        s.directory
            .parent()
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .map(|n| n.to_owned())
    };
    a.tag == b.tag && a.keyspace == b.keyspace && table_dir(a) == table_dir(b)
}

/// Every snapshot part under one data directory.
fn list_one(data_dir: &Path) -> Result<Vec<SnapshotInfo>> {
    let mut found = Vec::new();
    for keyspace in subdirectories(data_dir)? {
        for table_dir in subdirectories(&keyspace)? {
            for snapshot in subdirectories(&table_dir.join(SNAPSHOTS_DIR))? {
                found.push(describe(&keyspace, &table_dir, &snapshot)?);
            }
        }
    }
    Ok(found)
}

fn describe(keyspace: &Path, table_dir: &Path, snapshot: &Path) -> Result<SnapshotInfo> {
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let dir_name = name(table_dir);
    let table = dir_name
        .rsplit_once('-')
        .map_or(dir_name.as_str(), |(t, _)| t);
    let (true_size, size_on_disk) = sizes(table_dir, snapshot)?;
    Ok(SnapshotInfo {
        tag: name(snapshot),
        keyspace: name(keyspace),
        table: table.to_string(),
        true_size,
        size_on_disk,
        directory: snapshot.to_path_buf(),
        directories: vec![snapshot.to_path_buf()],
    })
}

/// (true size, size on disk) of the files of `snapshot`: a file counts towards the true size
/// unless the table directory holds the same file (same inode) as a live component.
fn sizes(table_dir: &Path, snapshot: &Path) -> Result<(u64, u64)> {
    let (mut true_size, mut on_disk) = (0, 0);
    let entries = fs::read_dir(snapshot).map_err(|e| StorageError::io(snapshot, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| StorageError::io(snapshot, e))?;
        let meta = entry
            .metadata()
            .map_err(|e| StorageError::io(entry.path(), e))?;
        if !meta.is_file() {
            continue;
        }
        on_disk += meta.len();
        let live = fs::metadata(table_dir.join(entry.file_name()))
            .is_ok_and(|l| l.ino() == meta.ino() && l.dev() == meta.dev());
        if !live {
            true_size += meta.len();
        }
    }
    Ok((true_size, on_disk))
}

/// Removes snapshot `tag` (every snapshot when `None`) of every table under `data_dirs`;
/// returns how many table snapshots were removed.
pub fn clear(data_dirs: &[PathBuf], tag: Option<&str>) -> Result<usize> {
    let mut removed = 0;
    for snapshot in list(data_dirs)? {
        if tag.is_none_or(|t| t == snapshot.tag) {
            remove(&snapshot)?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Removes every part of `snapshot`.
pub fn remove(snapshot: &SnapshotInfo) -> Result<()> {
    for dir in &snapshot.directories {
        fs::remove_dir_all(dir).map_err(|e| StorageError::io(dir, e))?;
    }
    Ok(())
}

/// Deletes a dropped table's files but keeps its snapshots; the directory goes too when no
/// snapshot is left in it.
pub fn remove_table_data(table_dir: &Path) -> Result<()> {
    let entries = match fs::read_dir(table_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(StorageError::io(table_dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| StorageError::io(table_dir, e))?;
        let path = entry.path();
        let removed = if entry.file_name() == SNAPSHOTS_DIR {
            remove_if_empty(&path)
        } else if path.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        removed.map_err(|e| StorageError::io(&path, e))?;
    }
    remove_if_empty(table_dir).map_err(|e| StorageError::io(table_dir, e))
}

/// Removes `dir` if it is empty; keeps it (without error) otherwise.
fn remove_if_empty(dir: &Path) -> std::io::Result<()> {
    match fs::remove_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty => Ok(()),
        other => other,
    }
}

/// Sub-directories of `dir` (none when it does not exist).
fn subdirectories(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StorageError::io(dir, e)),
    };
    let mut dirs = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| StorageError::io(dir, e))?.path();
        if path.is_dir() {
            dirs.push(path);
        }
    }
    Ok(dirs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn manifest_lists_files_with_a_utc_time() {
        let created = UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        assert_eq!(
            manifest(&["ha-1-Data.db".into()], created),
            "{\"files\":[\"ha-1-Data.db\"],\"created_at\":\"2023-11-14T22:13:20.123Z\",\"expires_at\":null,\"ephemeral\":false}\n"
        );
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }

    #[test]
    fn tags_must_name_a_directory() {
        assert!(validate_tag("nightly-1").is_ok());
        for bad in ["", ".", "..", "a/b"] {
            assert!(validate_tag(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn dropped_table_data_goes_but_snapshots_stay() {
        let dir = tempfile::tempdir().expect("tempdir");
        let table = dir.path().join("ks").join("t-0123");
        fs::create_dir_all(directory(&table, "keep")).expect("mkdir");
        fs::write(table.join("ha-1-Data.db"), b"x").expect("write");
        fs::write(directory(&table, "keep").join("ha-1-Data.db"), b"xy").expect("write");
        remove_table_data(&table).expect("remove");
        assert!(!table.join("ha-1-Data.db").exists());
        let data_dirs = [dir.path().to_path_buf()];
        let listed = list(&data_dirs).expect("list");
        assert_eq!(listed.len(), 1);
        assert_eq!(
            (listed[0].keyspace.as_str(), listed[0].table.as_str()),
            ("ks", "t")
        );
        assert_eq!((listed[0].true_size, listed[0].size_on_disk), (2, 2));
        assert_eq!(clear(&data_dirs, Some("other")).expect("clear"), 0);
        assert_eq!(clear(&data_dirs, None).expect("clear"), 1);
        remove_table_data(&table).expect("remove");
        assert!(!table.exists());
    }
}
