//! Where a new SSTable goes when a table has several directories (`data_file_directories`).
//! As Cassandra 5.0 does for each flush and compaction output: among the directories whose file
//! system has room for the expected size, the one with the most free space. Directories on the
//! same file system share their free space, so between those the one holding the fewest bytes of
//! the table's live SSTables wins (then the earlier one), which spreads a table evenly over
//! directories that share a disk. When no directory has room the write fails, as Cassandra's
//! "Insufficient disk space" does.
#![allow(unsafe_code)] // statvfs(2) for a directory's free space

use std::collections::HashMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::table_dir::LiveSstable;
use crate::error::{Result, StorageError};

/// Sizes of a file system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskSpace {
    pub total: u64,
    /// Bytes an unprivileged writer may still use.
    pub available: u64,
}

/// The sizes of the file system holding `path`; `None` when they cannot be read.
#[allow(
    clippy::useless_conversion,
    reason = "statvfs field types differ between platforms"
)]
pub fn disk_space(path: &Path) -> Option<DiskSpace> {
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c_path` is a NUL-terminated string and `stat` is writable memory of the type
    // statvfs fills.
    let status = unsafe { libc::statvfs(c_path.as_ptr(), stat.as_mut_ptr()) };
    if status != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it initialized `stat`.
    let stat = unsafe { stat.assume_init() };
    let block = u64::from(stat.f_frsize);
    Some(DiskSpace {
        total: u64::from(stat.f_blocks).checked_mul(block)?,
        available: u64::from(stat.f_bavail).checked_mul(block)?,
    })
}

/// One candidate directory.
struct Candidate<'a> {
    dir: &'a Path,
    /// Free bytes of its file system (`None`: unknown, then it is assumed to have room).
    available: Option<u64>,
    /// Bytes of the table's live SSTables in it.
    table_bytes: u64,
}

/// The directory a new SSTable of about `expected` bytes goes to; see the module documentation.
pub fn choose<'a>(
    dirs: &'a [PathBuf],
    live: &[Arc<LiveSstable>],
    expected: u64,
) -> Result<&'a Path> {
    match dirs {
        [] => Err(disk_full(
            PathBuf::new(),
            "No data directory is available for writing".to_string(),
        )),
        [only] => Ok(only),
        _ => {
            let candidates = candidates(dirs, live);
            pick(&candidates, expected).ok_or_else(|| {
                disk_full(
                    dirs[0].clone(),
                    format!("Insufficient disk space to write {expected} bytes"),
                )
            })
        }
    }
}

/// The error of a write no data directory can take (Cassandra's `FSDiskFullWriteError` and
/// `FSNoDiskAvailableForWriteError`).
fn disk_full(path: PathBuf, message: String) -> StorageError {
    StorageError::io(
        path,
        std::io::Error::new(std::io::ErrorKind::StorageFull, message),
    )
}

fn candidates<'a>(dirs: &'a [PathBuf], live: &[Arc<LiveSstable>]) -> Vec<Candidate<'a>> {
    let mut per_device: HashMap<u64, Option<u64>> = HashMap::new();
    dirs.iter()
        .map(|dir| {
            let available = match std::fs::metadata(dir) {
                Ok(meta) => *per_device
                    .entry(meta.dev())
                    .or_insert_with(|| disk_space(dir).map(|s| s.available)),
                Err(_) => None,
            };
            let table_bytes = live
                .iter()
                .filter(|s| s.sstable.descriptor().dir == *dir)
                .map(|s| s.sstable.size_on_disk())
                .sum();
            Candidate {
                dir,
                available,
                table_bytes,
            }
        })
        .collect()
}

/// The candidate with room for `expected` and the most free space, then the fewest table bytes,
/// then the earliest.
fn pick<'a>(candidates: &[Candidate<'a>], expected: u64) -> Option<&'a Path> {
    candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.available.is_none_or(|a| a >= expected))
        .max_by_key(|(index, c)| {
            (
                c.available.unwrap_or(0),
                std::cmp::Reverse(c.table_bytes),
                std::cmp::Reverse(*index),
            )
        })
        .map(|(_, c)| c.dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(dir: &Path, available: Option<u64>, table_bytes: u64) -> Candidate<'_> {
        Candidate {
            dir,
            available,
            table_bytes,
        }
    }

    #[test]
    fn most_free_space_wins_then_fewest_table_bytes_then_the_first() {
        let (a, b) = (Path::new("/a"), Path::new("/b"));
        let spaced = [candidate(a, Some(10), 0), candidate(b, Some(20), 99)];
        assert_eq!(pick(&spaced, 5), Some(b));
        assert_eq!(pick(&spaced, 15), Some(b));
        assert_eq!(pick(&spaced, 25), None);
        let shared = [candidate(a, Some(20), 7), candidate(b, Some(20), 3)];
        assert_eq!(pick(&shared, 5), Some(b));
        let even = [candidate(a, Some(20), 3), candidate(b, Some(20), 3)];
        assert_eq!(pick(&even, 5), Some(a));
        let unknown = [candidate(a, None, 0), candidate(b, Some(1), 0)];
        assert_eq!(pick(&unknown, 5), Some(a));
    }

    #[test]
    fn disk_space_reads_the_file_system() {
        let dir = tempfile::tempdir().expect("tempdir");
        let space = disk_space(dir.path()).expect("statvfs");
        assert!(
            space.total >= space.available && space.total > 0,
            "{space:?}"
        );
        assert_eq!(disk_space(&dir.path().join("missing")), None);
        let dirs = vec![dir.path().join("x"), dir.path().join("y")];
        for d in &dirs {
            std::fs::create_dir(d).expect("mkdir");
        }
        assert_eq!(choose(&dirs, &[], 1).expect("room"), dirs[0]);
        assert!(choose(&dirs, &[], u64::MAX).is_err());
        let none = choose(&[], &[], 1).expect_err("no directory");
        assert!(
            matches!(&none, StorageError::Io { source, .. } if source.kind() == std::io::ErrorKind::StorageFull),
            "{none}"
        );
    }
}
