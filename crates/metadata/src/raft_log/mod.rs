//! Durable storage of the metadata group under `metadata_directory`:
//! - `raft-log`: the Raft log, vote and committed index (`log_store`);
//! - `snapshot`: the last snapshot of the state machine (`snapshot_file`);
//! - `founding`: what this node promised and accepted while the group was being founded
//!   (`crate::founding`).
//!
//! All are checked records (`record`): a torn tail of the log is cut off, corruption is an
//! error. The snapshot and founding files are replaced whole (`whole_file`).

pub(crate) mod log_store;
pub(crate) mod record;
pub(crate) mod snapshot_file;
pub(crate) mod whole_file;

use std::fs::File;
use std::io;
use std::path::Path;

pub(crate) fn invalid_data(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Makes a rename or a new file in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}
