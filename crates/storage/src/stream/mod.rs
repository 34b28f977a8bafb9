//! What streaming needs from storage: [`Outgoing`], the SSTables of a table holding the
//! partitions of some token ranges, ready to send as files (whole SSTables lying inside the
//! ranges, hard-linked; the partitions of the others that lie inside, rewritten into new
//! SSTables), and [`Incoming`], received SSTables written into a staging directory, checked
//! chunk by chunk and then as a whole, and added to the table. Both keep their files under
//! `<table dir>/streaming/`, removed when they are dropped and at start-up.
//!
//! Components travel under their [`stream_name`](crate::sstable::stream_name) (the file
//! name without its generation); nothing here depends on what the files hold.

mod incoming;
pub(crate) mod outgoing;
mod ranges;

pub use incoming::{Incoming, IncomingSstable};
pub use outgoing::{Outgoing, OutgoingComponent, OutgoingSstable};
pub use ranges::TokenRanges;

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Result, StorageError};

/// Sub-directory of a table directory holding the files of streams in progress.
pub const STREAMING_DIR: &str = "streaming";

/// The staging directory of stream `session` (`in` or `out`) under `table_dir`, created.
fn staging_dir(table_dir: &Path, session: &str, direction: &str) -> Result<PathBuf> {
    if session.is_empty() || session.contains(['/', '.']) {
        return Err(StorageError::Invalid(format!(
            "invalid stream session name {session:?}"
        )));
    }
    let dir = staging_path(table_dir, session, direction);
    if dir.exists() {
        fs::remove_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
    }
    fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
    Ok(dir)
}

fn staging_path(table_dir: &Path, session: &str, direction: &str) -> PathBuf {
    table_dir
        .join(STREAMING_DIR)
        .join(format!("{session}-{direction}"))
}

/// Removes a staging directory, and the streaming directory above it once no other stream
/// uses it, logging a failure (nothing else can be done about it).
fn remove_staging(dir: &Path) {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            tracing::warn!("could not remove stream staging {}: {e}", dir.display());
        }
        _ => {
            if let Some(parent) = dir.parent() {
                // Fails, as it should, while another stream's staging is there.
                let _ = fs::remove_dir(parent);
            }
        }
    }
}

/// Removes what streams left in `table_dir` (a crash or a kill in the middle of one).
pub(crate) fn clean_leftovers(table_dir: &Path) -> Result<()> {
    let dir = table_dir.join(STREAMING_DIR);
    match fs::remove_dir_all(&dir) {
        Ok(()) => {
            tracing::info!(
                "removed the files of unfinished streams in {}",
                dir.display()
            );
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StorageError::io(&dir, e)),
    }
}

#[cfg(test)]
mod tests;
