//! Commit-log segment files: naming, listing, and the record frame
//! `length (u32 BE) | CRC32(length) | payload | CRC32(payload)`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Result, StorageError};

/// Version of the record and payload format, part of every segment's file name.
pub const FORMAT_VERSION: u32 = 1;

/// Bytes before the payload: length and its checksum.
pub const HEADER_LEN: usize = 8;
/// Bytes after the payload: its checksum.
pub const TRAILER_LEN: usize = 4;

/// An existing segment file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentFile {
    pub id: u64,
    pub path: PathBuf,
}

/// `CommitLog-<version>-<id>.log`.
pub fn segment_name(id: u64) -> String {
    format!("CommitLog-{FORMAT_VERSION}-{id}.log")
}

/// Parses a segment file name into (version, id).
fn parse_segment_name(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix("CommitLog-")?.strip_suffix(".log")?;
    let (version, id) = rest.split_once('-')?;
    Some((version.parse().ok()?, id.parse().ok()?))
}

/// All segments in `dir`, ascending by id.
pub fn list_segments(dir: &Path) -> Result<Vec<SegmentFile>> {
    let entries = fs::read_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    let mut segments = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| StorageError::io(dir, e))?;
        let name = entry.file_name();
        let Some((version, id)) = name.to_str().and_then(parse_segment_name) else {
            continue;
        };
        if version != FORMAT_VERSION {
            return Err(StorageError::Corrupt {
                file: entry.path(),
                offset: 0,
                reason: format!("unsupported commit log format version {version}"),
            });
        }
        segments.push(SegmentFile {
            id,
            path: entry.path(),
        });
    }
    segments.sort_by_key(|s| s.id);
    Ok(segments)
}

/// Index of the newest segment holding any record: the only one a crash can leave torn (later
/// ones were created empty, all zeros, by restarts that wrote nothing).
pub fn last_written(segments: &[SegmentFile]) -> Result<Option<usize>> {
    for (index, segment) in segments.iter().enumerate().rev() {
        if starts_with_data(&segment.path)? {
            return Ok(Some(index));
        }
    }
    Ok(None)
}

/// Whether the first frame header of `path` has any non-zero byte.
fn starts_with_data(path: &Path) -> Result<bool> {
    use std::io::Read;
    let mut header = Vec::with_capacity(HEADER_LEN);
    fs::File::open(path)
        .and_then(|file| file.take(HEADER_LEN as u64).read_to_end(&mut header))
        .map_err(|e| StorageError::io(path, e))?;
    Ok(header.iter().any(|b| *b != 0))
}

/// The header (length and its CRC32) and trailer (payload CRC32) framing `payload`.
pub fn frame_parts(payload: &[u8]) -> ([u8; HEADER_LEN], [u8; TRAILER_LEN]) {
    let len = u32::try_from(payload.len())
        .unwrap_or(u32::MAX)
        .to_be_bytes();
    let mut header = [0u8; HEADER_LEN];
    header[..4].copy_from_slice(&len);
    header[4..].copy_from_slice(&crc32fast::hash(&len).to_be_bytes());
    (header, crc32fast::hash(payload).to_be_bytes())
}

/// The on-disk frame of one record.
#[cfg(test)]
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let (header, trailer) = frame_parts(payload);
    [&header[..], payload, &trailer[..]].concat()
}

/// Why a frame could not be read at some offset.
#[derive(Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The file ends inside the frame.
    Incomplete,
    /// The length's checksum does not match.
    BadLength,
    /// The payload's checksum does not match; `size` is the frame's length per its header.
    BadPayload { size: usize },
}

/// Reads the frame at the start of `buf`: its payload and total size.
pub fn unframe(buf: &[u8]) -> Result<(&[u8], usize), FrameError> {
    let (header, rest) = buf
        .split_first_chunk::<HEADER_LEN>()
        .ok_or(FrameError::Incomplete)?;
    let (len, len_crc) = header.split_at(4);
    if crc32fast::hash(len).to_be_bytes() != len_crc {
        return Err(FrameError::BadLength);
    }
    let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
    if rest.len() < len + TRAILER_LEN {
        return Err(FrameError::Incomplete);
    }
    let (payload, rest) = rest.split_at(len);
    if crc32fast::hash(payload).to_be_bytes() != rest[..TRAILER_LEN] {
        let size = HEADER_LEN + len + TRAILER_LEN;
        return Err(FrameError::BadPayload { size });
    }
    Ok((payload, HEADER_LEN + len + TRAILER_LEN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_list_sorted() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        for id in [10, 2, 33] {
            assert!(fs::write(dir.join(segment_name(id)), b"").is_ok());
        }
        assert!(fs::write(dir.join("other.txt"), b"").is_ok());
        let segments = list_segments(dir).expect("list");
        let ids: Vec<u64> = segments.iter().map(|s| s.id).collect();
        assert_eq!(ids, vec![2, 10, 33]);
        assert_eq!(
            parse_segment_name(&segment_name(7)),
            Some((FORMAT_VERSION, 7))
        );
        assert_eq!(parse_segment_name("CommitLog-x-1.log"), None);
    }

    #[test]
    fn last_written_skips_trailing_empty_segments() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let segment = |id: u64, content: &[u8]| {
            let path = tmp.path().join(segment_name(id));
            fs::write(&path, content).expect("write");
            SegmentFile { id, path }
        };
        let zeros = [0u8; 1024];
        let segments = vec![
            segment(1, b"x"),
            segment(2, b"y"),
            segment(3, b""),
            segment(4, &zeros),
        ];
        assert_eq!(last_written(&segments).expect("read"), Some(1));
        assert_eq!(last_written(&segments[2..]).expect("read"), None);
    }

    #[test]
    fn unsupported_version_is_reported() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path();
        assert!(fs::write(dir.join("CommitLog-99-1.log"), b"").is_ok());
        assert!(matches!(
            list_segments(dir),
            Err(StorageError::Corrupt { .. })
        ));
    }

    #[test]
    fn frames_round_trip_and_detect_damage() {
        let framed = frame(b"hello");
        assert_eq!(unframe(&framed), Ok((&b"hello"[..], framed.len())));
        assert_eq!(
            unframe(&framed[..framed.len() - 1]),
            Err(FrameError::Incomplete)
        );
        assert_eq!(unframe(&framed[..3]), Err(FrameError::Incomplete));
        let mut bad_len = framed.clone();
        bad_len[0] ^= 1;
        assert_eq!(unframe(&bad_len), Err(FrameError::BadLength));
        let mut bad_payload = framed.clone();
        bad_payload[HEADER_LEN] ^= 1;
        let size = framed.len();
        assert_eq!(unframe(&bad_payload), Err(FrameError::BadPayload { size }));
        bad_payload.extend_from_slice(&framed);
        assert_eq!(unframe(&bad_payload), Err(FrameError::BadPayload { size }));
    }
}
