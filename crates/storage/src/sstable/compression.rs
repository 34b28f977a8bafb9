//! Per-chunk compression of the Data component: LZ4 (default, as Cassandra), zstd, or none.

use std::path::Path;

use crate::error::{Result, StorageError};
use crate::sstable::format::corrupt;

/// How Data chunks are compressed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compression {
    None,
    #[default]
    Lz4,
    /// zstd at the given level (Cassandra's `compression_level`, default 3).
    Zstd {
        level: i32,
    },
}

impl Compression {
    /// Cassandra's `compression = {'class': ...}` names (with or without the package prefix);
    /// `None` for an unknown class.
    pub fn from_class_name(class: &str) -> Option<Compression> {
        let short = class.rsplit('.').next().unwrap_or(class);
        match short {
            "LZ4Compressor" => Some(Compression::Lz4),
            "ZstdCompressor" => Some(Compression::Zstd { level: 3 }),
            "NoopCompressor" | "NoneCompressor" => Some(Compression::None),
            _ => None,
        }
    }

    /// The id stored in CompressionInfo.
    pub(crate) fn id(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Lz4 => 1,
            Compression::Zstd { .. } => 2,
        }
    }

    /// The algorithm named by a stored id (the zstd level only matters when writing).
    pub(crate) fn from_id(id: u8) -> Option<Compression> {
        match id {
            0 => Some(Compression::None),
            1 => Some(Compression::Lz4),
            2 => Some(Compression::Zstd { level: 3 }),
            _ => None,
        }
    }

    /// Compresses one chunk; `file` names the Data file for error reports.
    pub(crate) fn compress(self, input: &[u8], file: &Path) -> Result<Vec<u8>> {
        match self {
            Compression::None => Ok(input.to_vec()),
            Compression::Lz4 => Ok(lz4_flex::block::compress(input)),
            Compression::Zstd { level } => {
                zstd::bulk::compress(input, level).map_err(|e| StorageError::io(file, e))
            }
        }
    }

    /// Decompresses one chunk that must expand to exactly `expected` bytes.
    pub(crate) fn decompress(
        self,
        input: &[u8],
        expected: usize,
        file: &Path,
        offset: u64,
    ) -> Result<Vec<u8>> {
        let output = match self {
            Compression::None => Ok(input.to_vec()),
            Compression::Lz4 => {
                lz4_flex::block::decompress(input, expected).map_err(|e| e.to_string())
            }
            Compression::Zstd { .. } => {
                zstd::bulk::decompress(input, expected).map_err(|e| e.to_string())
            }
        }
        .map_err(|e| corrupt(file, offset, format!("chunk does not decompress: {e}")))?;
        if output.len() != expected {
            return Err(corrupt(
                file,
                offset,
                format!("chunk expands to {} bytes, not {expected}", output.len()),
            ));
        }
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_algorithm_round_trips_and_checks_the_length() {
        let input: Vec<u8> = (0..5000u32).map(|i| (i % 7) as u8).collect();
        let file = Path::new("d");
        for c in [
            Compression::None,
            Compression::Lz4,
            Compression::Zstd { level: 3 },
        ] {
            let packed = c.compress(&input, file).expect("compress");
            assert_eq!(Compression::from_id(c.id()).map(|c| c.id()), Some(c.id()));
            let unpacked = c
                .decompress(&packed, input.len(), file, 0)
                .expect("decompress");
            assert_eq!(unpacked, input);
            assert!(c.decompress(&packed, input.len() + 1, file, 0).is_err());
        }
        assert!(Compression::Lz4
            .decompress(&[0xff, 0xff], 10, file, 0)
            .is_err());
        assert_eq!(
            Compression::from_class_name("org.apache.cassandra.io.compress.ZstdCompressor"),
            Some(Compression::Zstd { level: 3 })
        );
        assert_eq!(Compression::from_class_name("Snappy"), None);
    }
}
