//! `HintsDescriptor`: the host a hints file is for, when the file was started, its format
//! version and compression. The file's name carries the first three
//! (`<host_id>-<timestamp>-<version>.hints`, as Cassandra names them) and its header all four,
//! under a CRC32.
use std::path::{Path, PathBuf};

use net::HostId;

use crate::config::Compression;

/// The format of the files this code writes.
pub const VERSION: u32 = 1;

/// version (4), timestamp (8), host id (16), compression (1), CRC32 of those (4).
pub const HEADER_LEN: usize = 33;

const SUFFIX: &str = ".hints";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HintsDescriptor {
    pub host_id: HostId,
    /// Milliseconds since the epoch when the file was started; unique per host.
    pub timestamp: i64,
    pub version: u32,
    pub compression: Compression,
}

impl HintsDescriptor {
    pub fn new(host_id: HostId, timestamp: i64, compression: Compression) -> HintsDescriptor {
        HintsDescriptor {
            host_id,
            timestamp,
            version: VERSION,
            compression,
        }
    }

    pub fn file_name(&self) -> String {
        format!(
            "{}-{}-{}{SUFFIX}",
            self.host_id, self.timestamp, self.version
        )
    }

    pub fn path(&self, dir: &Path) -> PathBuf {
        dir.join(self.file_name())
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0..4].copy_from_slice(&self.version.to_be_bytes());
        out[4..12].copy_from_slice(&self.timestamp.to_be_bytes());
        out[12..28].copy_from_slice(self.host_id.as_bytes());
        out[28] = match self.compression {
            Compression::None => 0,
            Compression::Lz4 => 1,
        };
        let crc = crc32fast::hash(&out[..29]);
        out[29..].copy_from_slice(&crc.to_be_bytes());
        out
    }

    /// Reads a header; fails on a bad CRC, an unknown version or compression.
    pub fn decode(header: &[u8; HEADER_LEN]) -> Result<HintsDescriptor, &'static str> {
        let (body, crc) = header.split_at(29);
        if crc32fast::hash(body).to_be_bytes() != crc {
            return Err("header CRC mismatch");
        }
        let version = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
        if version != VERSION {
            return Err("unsupported hints file version");
        }
        let mut timestamp = [0u8; 8];
        timestamp.copy_from_slice(&body[4..12]);
        let mut host_id = [0u8; 16];
        host_id.copy_from_slice(&body[12..28]);
        let compression = match body[28] {
            0 => Compression::None,
            1 => Compression::Lz4,
            _ => return Err("unknown compression"),
        };
        Ok(HintsDescriptor {
            host_id: HostId::from_bytes(host_id),
            timestamp: i64::from_be_bytes(timestamp),
            version,
            compression,
        })
    }
}

/// Host id, timestamp and version from a hints file's name; `None` for any other file.
pub fn parse_file_name(name: &str) -> Option<(HostId, i64, u32)> {
    let stem = name.strip_suffix(SUFFIX)?;
    let host_id = HostId::try_parse(stem.get(..36)?).ok()?;
    let (timestamp, version) = stem.get(36..)?.strip_prefix('-')?.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(timestamp) || !digits(version) {
        return None;
    }
    Some((host_id, timestamp.parse().ok()?, version.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> HintsDescriptor {
        HintsDescriptor::new(HostId::from_u128(7), 1_700_000_000_123, Compression::Lz4)
    }

    #[test]
    fn names_round_trip_and_other_files_are_not_hints() {
        let d = sample();
        assert_eq!(
            d.file_name(),
            "00000000-0000-0000-0000-000000000007-1700000000123-1.hints"
        );
        assert_eq!(
            parse_file_name(&d.file_name()),
            Some((d.host_id, d.timestamp, 1))
        );
        for other in [
            "00000000-0000-0000-0000-000000000007-1700000000123-1.crc32",
            "00000000-0000-0000-0000-000000000007--1-1.hints",
            "00000000-0000-0000-0000-000000000007-12.hints",
            "not-a-uuid-at-all-000000000000000000-1-1.hints",
            ".hints",
        ] {
            assert_eq!(parse_file_name(other), None, "{other}");
        }
    }

    #[test]
    fn headers_round_trip_and_every_flipped_bit_is_detected() {
        let d = sample();
        let header = d.encode();
        assert_eq!(HintsDescriptor::decode(&header), Ok(d));
        for byte in 0..HEADER_LEN {
            for bit in 0..8 {
                let mut bad = header;
                bad[byte] ^= 1 << bit;
                assert!(HintsDescriptor::decode(&bad).is_err(), "{byte}/{bit}");
            }
        }
    }
}
