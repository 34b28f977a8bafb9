//! Small files replaced whole: an 8-byte magic and one checked record. A new version is
//! written to a temporary file, fsync'd and renamed over the old one, so the file is never
//! torn: any failed check is corruption.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;

use crate::raft_log::record::{frame_into, scan};
use crate::raft_log::{invalid_data, sync_dir};

/// One kind of whole file: its name in the directory and its magic.
pub(crate) struct WholeFile {
    pub name: &'static str,
    pub tmp_name: &'static str,
    pub magic: &'static [u8; 8],
    /// What the file holds, for error messages.
    pub what: &'static str,
}

impl WholeFile {
    /// Replaces the file in `dir` with `payload`, durably.
    pub(crate) fn write(&self, dir: &Path, payload: &[u8]) -> io::Result<()> {
        let mut buf = self.magic.to_vec();
        frame_into(&mut buf, payload);
        let tmp = dir.join(self.tmp_name);
        let mut file = File::create(&tmp)?;
        file.write_all(&buf)?;
        file.sync_all()?;
        fs::rename(&tmp, dir.join(self.name))?;
        sync_dir(dir)
    }

    /// The payload of the file in `dir`, None if there is no file.
    pub(crate) fn read(&self, dir: &Path) -> io::Result<Option<Vec<u8>>> {
        let _ = fs::remove_file(dir.join(self.tmp_name));
        let path = dir.join(self.name);
        let data = match fs::read(&path) {
            Ok(data) => data,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if data.len() < self.magic.len() || &data[..self.magic.len()] != self.magic {
            return Err(self.corrupt(&path, "bad magic"));
        }
        let body = &data[self.magic.len()..];
        let scanned = scan(body).map_err(|e| self.corrupt(&path, &e.to_string()))?;
        match scanned.records.as_slice() {
            [record] if scanned.valid_len == body.len() => Ok(Some(record.to_vec())),
            _ => Err(self.corrupt(&path, "damaged or incomplete record")),
        }
    }

    pub(crate) fn corrupt(&self, path: &Path, why: &str) -> io::Error {
        invalid_data(format!("{} {}: {why}", self.what, path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: WholeFile = WholeFile {
        name: "thing",
        tmp_name: "thing.tmp",
        magic: b"HLNSTST1",
        what: "test file",
    };

    #[test]
    fn round_trip_replace_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(FILE.read(dir.path()).unwrap(), None);
        FILE.write(dir.path(), b"first").unwrap();
        FILE.write(dir.path(), b"second").unwrap();
        assert_eq!(FILE.read(dir.path()).unwrap(), Some(b"second".to_vec()));

        let path = dir.path().join("thing");
        let mut data = fs::read(&path).unwrap();
        let last = data.len() - 1;
        data[last] ^= 1;
        fs::write(&path, &data).unwrap();
        let error = FILE.read(dir.path()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("test file"), "{error}");

        fs::write(&path, b"HLNSXXX1").unwrap();
        assert!(FILE
            .read(dir.path())
            .unwrap_err()
            .to_string()
            .contains("bad magic"));
    }
}
