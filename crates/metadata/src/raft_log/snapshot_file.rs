//! The current snapshot (`<metadata_directory>/snapshot`): its Raft metadata and the encoded
//! state, in one checked record. It is replaced whole (write a temporary file, fsync, rename),
//! so it is never torn: any failed check is corruption.

use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::codec::{decode, encode};
use crate::raft_log::invalid_data;
use crate::raft_log::whole_file::WholeFile;
use crate::raft_types::SnapshotMeta;

const FILE: WholeFile = WholeFile {
    name: "snapshot",
    tmp_name: "snapshot.tmp",
    magic: b"HLNSSNP1",
    what: "metadata snapshot",
};

/// A snapshot as stored and as sent to a follower.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StoredSnapshot {
    pub meta: SnapshotMeta,
    /// The encoded `ClusterMetadata`.
    pub data: Vec<u8>,
}

pub(crate) fn write(dir: &Path, snapshot: &StoredSnapshot) -> io::Result<()> {
    let payload = encode(snapshot).map_err(|e| invalid_data(e.to_string()))?;
    FILE.write(dir, &payload)
}

/// The stored snapshot, if there is one.
pub(crate) fn read(dir: &Path) -> io::Result<Option<StoredSnapshot>> {
    let Some(payload) = FILE.read(dir)? else {
        return Ok(None);
    };
    let snapshot =
        decode(&payload).map_err(|e| FILE.corrupt(&dir.join(FILE.name), &e.to_string()))?;
    Ok(Some(snapshot))
}
