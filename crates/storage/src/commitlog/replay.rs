//! Reading segments back for replay: validates every frame, drops a torn tail left by a crash
//! mid-write in the newest segment, and reports (or, if asked, skips) corruption elsewhere.

use std::fs::{self, OpenOptions};
use std::path::Path;

use super::segment::{unframe, FrameError, HEADER_LEN, TRAILER_LEN};
use crate::error::{Result, StorageError};

/// One intact record and where it starts.
#[derive(Debug, PartialEq, Eq)]
pub struct Record {
    pub offset: u64,
    pub payload: Vec<u8>,
}

impl Record {
    /// Where the record's frame ends in its segment.
    pub fn end(&self) -> u64 {
        self.offset + (HEADER_LEN + self.payload.len() + TRAILER_LEN) as u64
    }
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
            // A preallocated segment ends in zeros; so does one a crash left unfinished.
            Err(_) if rest.iter().all(|b| *b == 0) => return Ok(contents),
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

/// Whether a bad frame looks like an interrupted final write rather than damage: nothing but
/// zeros follows the part of the frame that can have been written. Records are copied header
/// first, so a torn header leaves zeros after it and a torn payload zeros after the frame.
fn is_torn(problem: &FrameError, rest: &[u8]) -> bool {
    let written = match problem {
        FrameError::Incomplete => return true,
        FrameError::BadLength => HEADER_LEN,
        FrameError::BadPayload { size } => *size,
    };
    rest.get(written..)
        .is_none_or(|after| after.iter().all(|b| *b == 0))
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

    /// A crash while copying a record into a preallocated segment leaves part of the frame,
    /// header first, then zeros: a torn tail, cut off.
    #[test]
    fn torn_frame_before_a_zero_tail_is_truncated() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("seg");
        let (a, b) = (frame(b"first"), frame(b"second record"));
        let zeros = [0u8; 256];
        for torn in [&b[..6], &b[..HEADER_LEN + 4]] {
            write(&path, &[&a, torn, &zeros]);
            let contents = read_segment(&path, true, false).expect("torn tail is fine");
            assert_eq!(contents.records.len(), 1);
            assert_eq!(fs::metadata(&path).expect("meta").len(), a.len() as u64);
        }
        // Not the newest segment: the same bytes are damage.
        write(&path, &[&a, &b[..HEADER_LEN + 4], &zeros]);
        assert!(matches!(
            read_segment(&path, false, false),
            Err(StorageError::Corrupt { .. })
        ));
    }

    /// Any segment may end in zeros: the unwritten rest of a preallocated file.
    #[test]
    fn zero_tail_ends_any_segment() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("seg");
        let (a, b) = (frame(b"first"), frame(b"second"));
        write(&path, &[&a, &b, &[0u8; 1000]]);
        let contents = read_segment(&path, false, false).expect("clean end");
        assert_eq!(contents.records.len(), 2);
        assert_eq!(contents.torn_bytes, 0);
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
