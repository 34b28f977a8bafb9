//! `HintsReader`: reads a hints file's records in pages, checking every CRC.
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use bytes::Bytes;

use crate::descriptor::{HintsDescriptor, HEADER_LEN};
use crate::record::{self, Next};

/// A hint read from a file: its payload (decompressed) and where its record lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawHint {
    pub start: u64,
    pub end: u64,
    pub payload: Bytes,
}

/// How a file ended, once read to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// On a record boundary.
    Clean,
    /// Inside a record or in zeros: a write cut short.
    Torn,
    /// At a record that cannot be framed; the rest of the file is skipped.
    Corrupt(&'static str),
}

#[derive(Debug, Default)]
pub struct Page {
    pub hints: Vec<RawHint>,
    /// Records skipped because their payload failed its CRC or did not decompress.
    pub bad_records: u64,
    /// Set when the file has been read to its end.
    pub ending: Option<Ending>,
}

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("unreadable header: {0}")]
    Corrupt(&'static str),
}

pub struct HintsReader {
    descriptor: HintsDescriptor,
    input: BufReader<File>,
    len: u64,
    position: u64,
}

impl HintsReader {
    pub fn open(path: &Path) -> Result<HintsReader, OpenError> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        if len < HEADER_LEN as u64 {
            return Err(OpenError::Corrupt("file shorter than its header"));
        }
        let mut input = BufReader::with_capacity(256 * 1024, file);
        let mut header = [0u8; HEADER_LEN];
        input.read_exact(&mut header)?;
        let descriptor = HintsDescriptor::decode(&header).map_err(OpenError::Corrupt)?;
        Ok(HintsReader {
            descriptor,
            input,
            len,
            position: HEADER_LEN as u64,
        })
    }

    pub fn descriptor(&self) -> HintsDescriptor {
        self.descriptor
    }

    /// Continues from `position`, the start of a record returned earlier.
    pub fn seek(&mut self, position: u64) -> io::Result<()> {
        let position = position.clamp(HEADER_LEN as u64, self.len);
        self.input.seek(SeekFrom::Start(position))?;
        self.position = position;
        Ok(())
    }

    /// Reads records until their payloads reach `max_bytes` or the file ends.
    pub fn read_page(&mut self, max_bytes: u64) -> io::Result<Page> {
        let mut page = Page::default();
        let mut bytes = 0;
        while bytes < max_bytes {
            let start = self.position;
            match record::read_next(&mut self.input, self.len - start)? {
                Next::Record(stored) => {
                    self.position += record::OVERHEAD + stored.len() as u64;
                    match self.descriptor.compression.unpack(stored) {
                        Some(payload) => {
                            bytes += payload.len() as u64;
                            page.hints.push(RawHint {
                                start,
                                end: self.position,
                                payload: Bytes::from(payload),
                            });
                        }
                        None => page.bad_records += 1,
                    }
                }
                Next::BadPayload { len } => {
                    self.position += len;
                    page.bad_records += 1;
                }
                Next::End => return Ok(self.end(page, Ending::Clean)),
                Next::Torn => return Ok(self.end(page, Ending::Torn)),
                Next::Corrupt(why) => return Ok(self.end(page, Ending::Corrupt(why))),
            }
        }
        Ok(page)
    }

    fn end(&mut self, mut page: Page, ending: Ending) -> Page {
        self.position = self.len;
        page.ending = Some(ending);
        page
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use net::HostId;

    use super::*;
    use crate::config::Compression;
    use crate::writer::HintsWriter;

    fn write_file(dir: &Path, compression: Compression, payloads: &[&[u8]]) -> HintsDescriptor {
        let descriptor = HintsDescriptor::new(HostId::from_u128(1), 5, compression);
        let mut writer = HintsWriter::create(dir, descriptor).unwrap();
        for payload in payloads {
            let stored = compression.pack(payload.to_vec());
            writer.append(&record::encode(&stored)).unwrap();
        }
        writer.sync().unwrap();
        descriptor
    }

    fn read_all(path: &Path) -> (Vec<Bytes>, u64, Ending) {
        let mut reader = HintsReader::open(path).unwrap();
        let (mut hints, mut bad) = (Vec::new(), 0);
        loop {
            let page = reader.read_page(10).unwrap();
            hints.extend(page.hints.into_iter().map(|h| h.payload));
            bad += page.bad_records;
            if let Some(ending) = page.ending {
                return (hints, bad, ending);
            }
        }
    }

    const PAYLOADS: [&[u8]; 3] = [b"first hint", b"second hint", b"third hint"];

    #[test]
    fn files_round_trip_with_and_without_compression() {
        for compression in [Compression::None, Compression::Lz4] {
            let dir = tempfile::tempdir().unwrap();
            let d = write_file(dir.path(), compression, &PAYLOADS);
            let (hints, bad, ending) = read_all(&d.path(dir.path()));
            assert_eq!(hints, PAYLOADS.map(Bytes::from_static));
            assert_eq!((bad, ending), (0, Ending::Clean));
            assert_eq!(
                HintsReader::open(&d.path(dir.path())).unwrap().descriptor(),
                d
            );
        }
    }

    #[test]
    fn every_truncation_keeps_the_whole_records_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(dir.path(), Compression::None, &PAYLOADS).path(dir.path());
        let full = std::fs::read(&path).unwrap();
        let ends = record_ends(&full);
        for len in HEADER_LEN..full.len() {
            std::fs::write(&path, &full[..len]).unwrap();
            let (hints, bad, ending) = read_all(&path);
            let whole = ends.iter().filter(|end| **end <= len).count();
            assert_eq!(hints.len(), whole, "{len} bytes");
            let expected = if ends.contains(&len) || len == HEADER_LEN {
                Ending::Clean
            } else {
                Ending::Torn
            };
            assert_eq!((bad, ending), (0, expected), "{len} bytes");
        }
        for len in 0..HEADER_LEN {
            std::fs::write(&path, &full[..len]).unwrap();
            assert!(matches!(
                HintsReader::open(&path),
                Err(OpenError::Corrupt(_))
            ));
        }
    }

    fn record_ends(file: &[u8]) -> Vec<usize> {
        let mut ends = Vec::new();
        let mut at = HEADER_LEN;
        while at < file.len() {
            let size = u32::from_be_bytes(file[at..at + 4].try_into().unwrap()) as usize;
            at += 12 + size;
            ends.push(at);
        }
        ends
    }

    #[test]
    fn every_corruption_is_detected_and_skips_only_what_cannot_be_framed() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(dir.path(), Compression::None, &PAYLOADS).path(dir.path());
        let full = std::fs::read(&path).unwrap();
        let ends = record_ends(&full);
        for byte in HEADER_LEN..full.len() {
            let mut bad = full.clone();
            bad[byte] ^= 0x10;
            std::fs::write(&path, &bad).unwrap();
            let (hints, bad_records, ending) = read_all(&path);
            let record = ends.iter().position(|end| byte < *end).unwrap();
            let record_start = if record == 0 {
                HEADER_LEN
            } else {
                ends[record - 1]
            };
            if byte < record_start + 8 {
                assert_eq!(
                    hints.len(),
                    record,
                    "byte {byte}: records before it survive"
                );
                assert!(matches!(ending, Ending::Corrupt(_)), "byte {byte}");
            } else {
                assert_eq!(bad_records, 1, "byte {byte}");
                assert_eq!(hints.len(), PAYLOADS.len() - 1, "byte {byte}");
                assert_eq!(ending, Ending::Clean, "byte {byte}");
            }
        }
    }

    #[test]
    fn a_zero_tail_is_torn_and_seek_resumes_at_a_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(dir.path(), Compression::None, &PAYLOADS).path(dir.path());
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(&[0; 100])
            .unwrap();
        let (hints, _, ending) = read_all(&path);
        assert_eq!((hints.len(), ending), (3, Ending::Torn));
        let mut reader = HintsReader::open(&path).unwrap();
        let first = reader.read_page(1).unwrap().hints.remove(0);
        let mut again = HintsReader::open(&path).unwrap();
        again.seek(first.end).unwrap();
        let next = again.read_page(1).unwrap().hints.remove(0);
        assert_eq!(next.payload, Bytes::from_static(PAYLOADS[1]));
        assert_eq!(next.start, first.end);
    }

    #[test]
    fn a_corrupt_header_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_file(dir.path(), Compression::None, &PAYLOADS).path(dir.path());
        let mut full = std::fs::read(&path).unwrap();
        full[3] ^= 1;
        std::fs::write(&path, &full).unwrap();
        assert!(matches!(
            HintsReader::open(&path),
            Err(OpenError::Corrupt(_))
        ));
    }
}
