//! Format-wide constants and the primitives every component shares: the stream header (magic,
//! version, CRC), sealed whole-file components (header + body + CRC32 trailer) and a
//! bounds-checked [`Decoder`] whose errors are [`StorageError::Corrupt`] naming file and offset.

use std::path::Path;

use bytes::{BufMut, Bytes};

use crate::error::{Result, StorageError};
use mutation::codec::{DecodeError, Reader};

/// The on-disk format version written into every component header.
pub const FORMAT_VERSION: u16 = 2;
/// The version as it appears in file names (`hb-<generation>-<Component>`).
pub const VERSION_TAG: &str = "hb";
/// Every version this build reads, each with its file-name tag: 1 (`ha`, fixed-width lengths,
/// tokens and deletion times in Data and Index) and 2 (`hb`, varint lengths, tokens and
/// partition-header fields only when they are not the usual; see docs/sstable-format.md).
pub const VERSIONS: [(u16, &str); 2] = [(1, "ha"), (FORMAT_VERSION, VERSION_TAG)];

/// The file-name tag of a version this build reads.
pub(crate) fn version_tag(version: u16) -> &'static str {
    VERSIONS
        .iter()
        .find(|(v, _)| *v == version)
        .map_or(VERSION_TAG, |(_, tag)| tag)
}

pub(crate) const DATA_MAGIC: [u8; 4] = *b"HSDA";
pub(crate) const COMPRESSION_MAGIC: [u8; 4] = *b"HSCI";
pub(crate) const INDEX_MAGIC: [u8; 4] = *b"HSIX";
pub(crate) const SUMMARY_MAGIC: [u8; 4] = *b"HSSU";
pub(crate) const FILTER_MAGIC: [u8; 4] = *b"HSBF";
pub(crate) const STATS_MAGIC: [u8; 4] = *b"HSST";

/// Length of a stream header: magic (4), version (2), CRC32 of those six bytes (4).
pub(crate) const STREAM_HEADER_LEN: u64 = 10;

/// The header that opens the streamed components (Data, Index).
pub(crate) fn stream_header(magic: [u8; 4]) -> Vec<u8> {
    let mut out = Vec::with_capacity(STREAM_HEADER_LEN as usize);
    out.put_slice(&magic);
    out.put_u16(FORMAT_VERSION);
    let crc = crc32fast::hash(&out);
    out.put_u32(crc);
    out
}

/// Checks a stream header read from the start of `file`; returns the format version it names.
pub(crate) fn check_stream_header(bytes: &[u8], magic: [u8; 4], file: &Path) -> Result<u16> {
    let mut d = Decoder::new(bytes, file, 0);
    let version = check_magic_version(&mut d, magic)?;
    let crc = d.u32()?;
    if crc != crc32fast::hash(&bytes[..6]) {
        return Err(corrupt(file, 6, "header checksum mismatch"));
    }
    Ok(version)
}

fn check_magic_version(d: &mut Decoder<'_>, magic: [u8; 4]) -> Result<u16> {
    if d.take(4)? != magic {
        return Err(corrupt(d.file, 0, "bad magic number"));
    }
    let version = d.u16()?;
    if !VERSIONS.iter().any(|(v, _)| *v == version) {
        return Err(corrupt(
            d.file,
            4,
            format!("unsupported format version {version}"),
        ));
    }
    Ok(version)
}

/// A whole-file component: magic, version, `body`, then the CRC32 of everything before it.
pub(crate) fn seal(magic: [u8; 4], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 10);
    out.put_slice(&magic);
    out.put_u16(FORMAT_VERSION);
    out.put_slice(body);
    let crc = crc32fast::hash(&out);
    out.put_u32(crc);
    out
}

/// Validates a sealed component and returns its body.
pub(crate) fn unseal<'a>(bytes: &'a [u8], magic: [u8; 4], file: &Path) -> Result<&'a [u8]> {
    if bytes.len() < 10 {
        return Err(corrupt(file, 0, "file too short"));
    }
    let (content, trailer) = bytes.split_at(bytes.len() - 4);
    let expected = u32::from_be_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    if crc32fast::hash(content) != expected {
        return Err(corrupt(
            file,
            content.len() as u64,
            "checksum mismatch over the whole component",
        ));
    }
    check_magic_version(&mut Decoder::new(content, file, 0), magic)?;
    Ok(&content[6..])
}

/// Builds a [`StorageError::Corrupt`].
pub(crate) fn corrupt(file: &Path, offset: u64, reason: impl Into<String>) -> StorageError {
    StorageError::Corrupt {
        file: file.to_path_buf(),
        offset,
        reason: reason.into(),
    }
}

/// A bounds-checked big-endian cursor over bytes that came from `file` at offset `base`.
pub(crate) struct Decoder<'a> {
    bytes: &'a [u8],
    pos: usize,
    file: &'a Path,
    base: u64,
}

impl<'a> Decoder<'a> {
    pub(crate) fn new(bytes: &'a [u8], file: &'a Path, base: u64) -> Self {
        Decoder {
            bytes,
            pos: 0,
            file,
            base,
        }
    }

    /// A corruption error at the current position.
    pub(crate) fn corrupt(&self, reason: impl Into<String>) -> StorageError {
        corrupt(self.file, self.base + self.pos as u64, reason)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// Fails unless every byte was consumed.
    pub(crate) fn finish(&self) -> Result<()> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.corrupt("trailing bytes"))
        }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.corrupt("unexpected end of data"));
        };
        let slice = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(slice)
    }

    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub(crate) fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub(crate) fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    pub(crate) fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    pub(crate) fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    pub(crate) fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// A `u32` count of items that each take at least `min_item` bytes (guards allocations).
    pub(crate) fn count(&mut self, min_item: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_item.max(1)) > self.bytes.len() - self.pos {
            return Err(self.corrupt(format!("count {n} exceeds the remaining bytes")));
        }
        Ok(n)
    }

    /// `u32` length-prefixed bytes, borrowed.
    pub(crate) fn slice(&mut self) -> Result<&'a [u8]> {
        let len = self.u32()? as usize;
        self.take(len)
    }

    /// A varint as [`put_varint`] writes it (at most ten bytes, minimal).
    pub(crate) fn varint(&mut self) -> Result<u64> {
        let rest = &self.bytes[self.pos..];
        match read_varint(rest) {
            Some((value, used)) => {
                self.pos += used;
                Ok(value)
            }
            None => Err(self.corrupt("invalid varint")),
        }
    }

    /// A varint count of items that each take at least one byte (guards allocations).
    pub(crate) fn varcount(&mut self) -> Result<usize> {
        let n = self.varint()?;
        if n > (self.bytes.len() - self.pos) as u64 {
            return Err(self.corrupt(format!("count {n} exceeds the remaining bytes")));
        }
        Ok(n as usize)
    }

    /// Varint length-prefixed bytes, borrowed.
    pub(crate) fn varslice(&mut self) -> Result<&'a [u8]> {
        let len = self.varcount()?;
        self.take(len)
    }

    /// `u32` length-prefixed bytes.
    pub(crate) fn bytes(&mut self) -> Result<Bytes> {
        Ok(Bytes::copy_from_slice(self.slice()?))
    }

    /// Runs one of the mutation codec's decoders over the remaining bytes.
    pub(crate) fn codec<T>(
        &mut self,
        f: impl FnOnce(&mut Reader<'a>) -> Result<T, DecodeError>,
    ) -> Result<T> {
        let rest = &self.bytes[self.pos..];
        let mut reader = Reader { bytes: rest };
        let value = f(&mut reader).map_err(|e| self.corrupt(e.0))?;
        self.pos += rest.len() - reader.bytes.len();
        Ok(value)
    }
}

/// Appends `u32` length-prefixed bytes.
pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    mutation::codec::put_bytes(out, bytes);
}

/// Appends `value` as LEB128: seven bits a byte, low bits first (format version 2).
pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.put_u8(value as u8 | 0x80);
        value >>= 7;
    }
    out.put_u8(value as u8);
}

/// Appends varint length-prefixed bytes.
pub(crate) fn put_varbytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.put_slice(bytes);
}

/// The varint at the start of `bytes` and the bytes it takes; `None` if it is cut short,
/// longer than ten bytes, overflows 64 bits or is not minimal.
pub(crate) fn read_varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &byte) in bytes.iter().enumerate().take(10) {
        let bits = u64::from(byte & 0x7f);
        if i == 9 && bits > 1 {
            return None;
        }
        value |= bits << (7 * i);
        if byte & 0x80 == 0 {
            return (byte != 0 || i == 0).then_some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_components_round_trip_and_detect_every_flipped_byte() {
        let file = Path::new("x-Statistics.db");
        let sealed = seal(STATS_MAGIC, b"hello body");
        assert_eq!(
            unseal(&sealed, STATS_MAGIC, file).ok(),
            Some(&b"hello body"[..])
        );
        assert!(unseal(&sealed, FILTER_MAGIC, file).is_err());
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 0x40;
            assert!(matches!(
                unseal(&bad, STATS_MAGIC, file),
                Err(StorageError::Corrupt { .. })
            ));
        }
    }

    #[test]
    fn stream_headers_check_magic_version_and_crc() {
        let file = Path::new("x-Data.db");
        let header = stream_header(DATA_MAGIC);
        assert_eq!(header.len() as u64, STREAM_HEADER_LEN);
        assert!(check_stream_header(&header, DATA_MAGIC, file).is_ok());
        assert!(check_stream_header(&header, INDEX_MAGIC, file).is_err());
        assert!(check_stream_header(&header[..5], DATA_MAGIC, file).is_err());
    }

    #[test]
    fn varints_round_trip_and_refuse_what_put_varint_never_writes() {
        for value in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, value);
            assert_eq!(read_varint(&out), Some((value, out.len())));
            assert_eq!(read_varint(&out[..out.len() - 1]), None, "cut short");
            let mut d = Decoder::new(&out, Path::new("f"), 0);
            assert_eq!(d.varint().ok(), Some(value));
        }
        assert_eq!(read_varint(&[0x80, 0x00]), None, "not minimal");
        assert_eq!(read_varint(&[0xff; 10]), None, "over 64 bits");
        let mut d = Decoder::new(&[5, 1, 2], Path::new("f"), 0);
        assert!(d.varslice().is_err(), "length past the end");
    }

    #[test]
    fn decoder_reports_offsets_and_rejects_huge_counts() {
        let file = Path::new("f");
        let mut d = Decoder::new(&[0, 0, 0, 9, 1], file, 100);
        match d.count(1) {
            Err(StorageError::Corrupt { offset, .. }) => assert_eq!(offset, 104),
            other => panic!("expected corrupt, got {other:?}"),
        }
        let mut d = Decoder::new(&[0, 0, 0, 5, 1, 2], file, 0);
        assert!(d.bytes().is_err());
    }
}
