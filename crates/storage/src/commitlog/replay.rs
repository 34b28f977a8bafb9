//! Reading segments back for replay: validates every frame, drops a torn tail left by a crash
//! mid-write in the newest segment, and reports (or, if asked, skips) corruption elsewhere.

use std::fs::{self, OpenOptions};
use std::path::Path;

use super::segment::{unframe, FrameError};
use crate::error::{Result, StorageError};

/// One intact record and where it starts.
#[derive(Debug, PartialEq, Eq)]
pub struct Record {
    pub offset: u64,
    pub payload: Vec<u8>,
}

/// What a segment yielded.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SegmentContents {
    pub records: Vec<Record>,
    /// Bytes of torn tail removed from the file.
    pub torn_bytes: u64,
    /// Corruption was found and the rest of the segment skipped.
    pub skipped_corruption: bool,
}

/// Reads `path`. `is_last` marks the newest segment written before the crash, the only one that
/// may end in a partial record; such a tail is truncated away.
pub fn read_segment(
    path: &Path,
    is_last: bool,
    ignore_corruption: bool,
) -> Result<SegmentContents> {
    let buf = fs::read(path).map_err(|e| StorageError::io(path, e))?;
    let mut contents = SegmentContents::default();
    let mut offset = 0;
    while offset < buf.len() {
        let rest = &buf[offset..];
        match unframe(rest) {
            Ok((payload, size)) => {
                contents.records.push(Record {
                    offset: offset as u64,
                    payload: payload.to_vec(),
                });
                offset += size;
            }
            Err(problem) if is_last && is_torn(&problem, rest) => {
                truncate(path, offset as u64)?;
                contents.torn_bytes = rest.len() as u64;
                return Ok(contents);
            }
            Err(problem) => {
                let error = corrupt(path, offset as u64, &problem);
                if !ignore_corruption {
                    return Err(error);
                }
                tracing::warn!("{error}; skipping the rest of the segment");
                contents.skipped_corruption = true;
                return Ok(contents);
            }
        }
    }
    Ok(contents)
}

/// Whether a bad frame looks like an interrupted final write rather than damage.
fn is_torn(problem: &FrameError, rest: &[u8]) -> bool {
    match problem {
        FrameError::Incomplete | FrameError::BadPayload { at_end: true } => true,
        FrameError::BadLength => rest.iter().all(|b| *b == 0),
        FrameError::BadPayload { at_end: false } => false,
    }
}

fn corrupt(path: &Path, offset: u64, problem: &FrameError) -> StorageError {
    let reason = match problem {
        FrameError::Incomplete => "record extends past the end of the segment",
        FrameError::BadLength => "record length checksum mismatch",
        FrameError::BadPayload { .. } => "record payload checksum mismatch",
    };
    StorageError::Corrupt {
        file: path.to_path_buf(),
        offset,
        reason: reason.to_string(),
    }
}

fn truncate(path: &Path, len: u64) -> Result<()> {
    tracing::warn!(
        "truncating torn commit log tail of {} at offset {len}",
        path.display()
    );
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| StorageError::io(path, e))?;
    file.set_len(len).map_err(|e| StorageError::io(path, e))?;
    file.sync_all().map_err(|e| StorageError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commitlog::segment::frame;

    fn write(path: &Path, parts: &[&[u8]]) {
        fs::write(path, parts.concat()).expect("write segment");
    }

    #[test]
    fn torn_tail_of_last_segment_is_truncated() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("seg");
        let (a, b) = (frame(b"first"), frame(b"second"));
        write(&path, &[&a, &b[..b.len() - 2]]);
        let contents = read_segment(&path, true, false).expect("torn tail is fine");
        assert_eq!(contents.records.len(), 1);
        assert_eq!(contents.torn_bytes, (b.len() - 2) as u64);
        assert_eq!(fs::metadata(&path).expect("meta").len(), a.len() as u64);
        write(&path, &[&a, &[0u8; 64]]);
        let contents = read_segment(&path, true, false).expect("zeroed tail is torn");
        assert_eq!(contents.records.len(), 1);
    }

    #[test]
    fn damage_in_the_middle_names_file_and_offset() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("seg");
        let (a, mut b, c) = (frame(b"first"), frame(b"second"), frame(b"third"));
        b[10] ^= 0xff;
        write(&path, &[&a, &b, &c]);
        match read_segment(&path, true, false) {
            Err(StorageError::Corrupt { file, offset, .. }) => {
                assert_eq!(file, path);
                assert_eq!(offset, a.len() as u64);
            }
            other => panic!("expected corruption, got {other:?}"),
        }
        let contents = read_segment(&path, true, true).expect("ignored");
        assert!(contents.skipped_corruption);
        assert_eq!(contents.records.len(), 1);
    }

    #[test]
    fn partial_record_in_older_segment_is_corruption() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("seg");
        let a = frame(b"first");
        write(&path, &[&a, &a[..5]]);
        assert!(matches!(
            read_segment(&path, false, false),
            Err(StorageError::Corrupt { offset, .. }) if offset == a.len() as u64
        ));
    }
}
