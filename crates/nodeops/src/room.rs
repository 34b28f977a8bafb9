//! Whether this node has the disk space for the ranges a join would take: the sources tell
//! how many bytes they hold in those ranges (`RangeMover::estimate`), and the free bytes are
//! those of the file systems of the data directories. Cassandra makes no such check before a
//! bootstrap (it checks the disk only for the streams of incremental repair); Helenus refuses
//! before the join changes anything.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// The free bytes of the file systems holding `dirs` (each file system counted once); `None`
/// when none can be read.
pub fn free_bytes(dirs: &[PathBuf]) -> Option<u64> {
    let mut seen = BTreeSet::new();
    let mut free = None;
    for dir in dirs {
        let Ok(meta) = std::fs::metadata(dir) else {
            continue;
        };
        if !seen.insert(meta.dev()) {
            continue;
        }
        if let Some(space) = storage::disk_space(dir) {
            free = Some(free.unwrap_or(0) + space.available);
        }
    }
    free
}

/// Refuses a `doing` (bootstrap, replace) that would bring more bytes than are free.
pub fn check_room(doing: &str, needed: u64, free: u64) -> Result<(), String> {
    if needed <= free {
        return Ok(());
    }
    Err(format!(
        "Not enough disk space to {doing}: the ranges this node would take hold about \
         {needed} bytes on their sources and its data directories have {free} bytes free"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_join_is_refused_when_the_estimate_exceeds_the_free_bytes() {
        assert!(check_room("bootstrap", 10, 10).is_ok());
        let refused = check_room("bootstrap", 11, 10).unwrap_err();
        assert!(refused.contains("about 11 bytes"), "{refused}");
        assert!(refused.contains("10 bytes free"), "{refused}");
        let dir = tempfile::tempdir().unwrap();
        let one = free_bytes(&[dir.path().to_path_buf()]).expect("a readable directory");
        assert!(one > 0);
        // the same file system twice counts once (give or take what others write meanwhile)
        let twice = free_bytes(&[dir.path().to_path_buf(), dir.path().join(".")]).unwrap();
        assert!(twice < one + one / 2, "{one} {twice}");
        assert!(free_bytes(&[dir.path().join("missing")]).is_none());
    }
}
