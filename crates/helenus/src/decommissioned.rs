//! A decommissioned node leaves a mark in its metadata directory and refuses to start with it
//! again, as Cassandra refuses (it keeps the mark in `system.local`'s `bootstrapped` column):
//! its ranges have moved to others, and rejoining with its old data would serve stale rows.

use std::io;
use std::path::{Path, PathBuf};

/// Cassandra's refusal, without its `cassandra.override_decommission` (Helenus has none).
pub const REFUSAL: &str = "This node was decommissioned and will not rejoin the ring unless all \
                           existing data is removed and the node is bootstrapped again";

fn mark_path(metadata_dir: &Path) -> PathBuf {
    metadata_dir.join("decommissioned")
}

/// Records that this node has left the ring.
pub fn mark(metadata_dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(metadata_dir)?;
    std::fs::write(mark_path(metadata_dir), "DECOMMISSIONED\n")
}

/// Refuses a node that was decommissioned.
pub fn refuse_if_marked(metadata_dir: &Path) -> Result<(), String> {
    if mark_path(metadata_dir).exists() {
        return Err(REFUSAL.to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_node_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let metadata = dir.path().join("metadata");
        assert_eq!(refuse_if_marked(&metadata), Ok(()));
        mark(&metadata).unwrap();
        assert_eq!(refuse_if_marked(&metadata), Err(REFUSAL.to_string()));
    }
}
