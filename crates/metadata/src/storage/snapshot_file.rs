//! The current snapshot (`<metadata_directory>/snapshot`): its Raft metadata and the encoded
//! state, in one checked record. It is replaced whole (write a temporary file, fsync, rename),
//! so it is never torn: any failed check is corruption.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::codec::{decode, encode};
use crate::raft_types::SnapshotMeta;
use crate::storage::record::{frame_into, scan};
use crate::storage::{invalid_data, sync_dir};

const MAGIC: &[u8; 8] = b"HLNSSNP1";
const FILE_NAME: &str = "snapshot";
const TMP_NAME: &str = "snapshot.tmp";

/// A snapshot as stored and as sent to a follower.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StoredSnapshot {
    pub meta: SnapshotMeta,
    /// The encoded `ClusterMetadata`.
    pub data: Vec<u8>,
}

pub(crate) fn write(dir: &Path, snapshot: &StoredSnapshot) -> io::Result<()> {
    let payload = encode(snapshot).map_err(|e| invalid_data(e.to_string()))?;
    let mut buf = MAGIC.to_vec();
    frame_into(&mut buf, &payload);
    let tmp = dir.join(TMP_NAME);
    let mut file = File::create(&tmp)?;
    file.write_all(&buf)?;
    file.sync_all()?;
    fs::rename(&tmp, dir.join(FILE_NAME))?;
    sync_dir(dir)
}

/// The stored snapshot, if there is one.
pub(crate) fn read(dir: &Path) -> io::Result<Option<StoredSnapshot>> {
    let _ = fs::remove_file(dir.join(TMP_NAME));
    let path = dir.join(FILE_NAME);
    let data = match fs::read(&path) {
        Ok(data) => data,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let corrupt =
        |why: String| invalid_data(format!("metadata snapshot {}: {why}", path.display()));
    if data.len() < MAGIC.len() || &data[..MAGIC.len()] != MAGIC {
        return Err(corrupt("bad magic".to_string()));
    }
    let body = &data[MAGIC.len()..];
    let scanned = scan(body).map_err(|e| corrupt(e.to_string()))?;
    match scanned.records.as_slice() {
        [record] if scanned.valid_len == body.len() => {
            let snapshot = decode(record).map_err(|e| corrupt(e.to_string()))?;
            Ok(Some(snapshot))
        }
        _ => Err(corrupt("damaged or incomplete record".to_string())),
    }
}
