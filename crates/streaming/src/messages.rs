//! The payloads of the stream verbs. All integers big-endian; a string is a `u32` length and
//! UTF-8 bytes. A receiver pulls: `StreamPrepare` (the tables and ranges wanted) is answered
//! with a [`Manifest`]; each `StreamChunk` ([`ChunkRequest`]) with a [`Chunk`], its bytes under
//! a CRC32 computed where they were read; `StreamComplete` ends the session either way.
//! `StreamPull` ([`Pull`]) asks a node to run such a session from a given source.

use std::fmt;
use std::net::SocketAddr;

use bytes::{BufMut, Bytes, BytesMut};
use mutation::{TableId, TokenRange};
use uuid::Uuid;

/// A payload that does not decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed stream message: {}", self.0)
    }
}

impl std::error::Error for DecodeError {}

/// What the receiver asks a source for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prepare {
    pub session: Uuid,
    /// What the stream is for ("Rebuild", "Bootstrap"), shown in the progress.
    pub description: String,
    pub tables: Vec<(TableId, Vec<TokenRange>)>,
}

/// One SSTable the source will send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEntry {
    pub table: TableId,
    /// Sent as it is on disk, rather than rewritten with the partitions in the ranges.
    pub whole: bool,
    pub partitions: u64,
    /// Each component's stream name and length, in the order they are asked for.
    pub components: Vec<(String, u64)>,
}

impl FileEntry {
    pub fn bytes(&self) -> u64 {
        self.components.iter().map(|(_, len)| len).sum()
    }
}

/// The source's answer to [`Prepare`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub files: Vec<FileEntry>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkRequest {
    pub session: Uuid,
    pub file: u32,
    pub component: u32,
    pub offset: u64,
    pub len: u32,
}

/// Bytes of a component and the CRC32 the source computed over them as it read them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub crc: u32,
    pub bytes: Bytes,
}

/// The end of a session: done, or given up (`failure` says why).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Complete {
    pub session: Uuid,
    pub failure: Option<String>,
}

/// Asks the receiving node to pull `tables` from `source` (answered once it holds them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pull {
    pub description: String,
    /// The internode address of the node to pull from.
    pub source: SocketAddr,
    pub tables: Vec<(TableId, Vec<TokenRange>)>,
}

/// `StreamEstimate`: the ranges of tables whose size the asker wants; answered with the
/// bytes as a big-endian u64.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub tables: Vec<(TableId, Vec<TokenRange>)>,
}

impl Estimate {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::new();
        put_tables(&mut out, &self.tables);
        out.freeze()
    }

    pub fn decode(bytes: &[u8]) -> Result<Estimate, DecodeError> {
        let mut r = Reader(bytes);
        let tables = r.tables()?;
        r.end()?;
        Ok(Estimate { tables })
    }
}

impl Pull {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::new();
        put_str(&mut out, &self.description);
        put_str(&mut out, &self.source.to_string());
        put_tables(&mut out, &self.tables);
        out.freeze()
    }

    pub fn decode(bytes: &[u8]) -> Result<Pull, DecodeError> {
        let mut r = Reader(bytes);
        let description = r.string()?;
        let source = r.string()?;
        let source = source
            .parse()
            .map_err(|_| DecodeError(format!("{source:?} is not an address")))?;
        let tables = r.tables()?;
        r.end()?;
        Ok(Pull {
            description,
            source,
            tables,
        })
    }
}

impl Prepare {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::new();
        out.put_slice(self.session.as_bytes());
        put_str(&mut out, &self.description);
        put_tables(&mut out, &self.tables);
        out.freeze()
    }

    pub fn decode(bytes: &[u8]) -> Result<Prepare, DecodeError> {
        let mut r = Reader(bytes);
        let session = r.uuid()?;
        let description = r.string()?;
        let tables = r.tables()?;
        r.end()?;
        Ok(Prepare {
            session,
            description,
            tables,
        })
    }
}

impl Manifest {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::new();
        out.put_u32(self.files.len() as u32);
        for file in &self.files {
            out.put_slice(file.table.0.as_bytes());
            out.put_u8(u8::from(file.whole));
            out.put_u64(file.partitions);
            out.put_u32(file.components.len() as u32);
            for (name, len) in &file.components {
                put_str(&mut out, name);
                out.put_u64(*len);
            }
        }
        out.freeze()
    }

    pub fn decode(bytes: &[u8]) -> Result<Manifest, DecodeError> {
        let mut r = Reader(bytes);
        let mut files = Vec::new();
        for _ in 0..r.count(29)? {
            let table = TableId(r.uuid()?);
            let whole = r.u8()? != 0;
            let partitions = r.u64()?;
            let mut components = Vec::new();
            for _ in 0..r.count(12)? {
                components.push((r.string()?, r.u64()?));
            }
            files.push(FileEntry {
                table,
                whole,
                partitions,
                components,
            });
        }
        r.end()?;
        Ok(Manifest { files })
    }
}

impl ChunkRequest {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(36);
        out.put_slice(self.session.as_bytes());
        out.put_u32(self.file);
        out.put_u32(self.component);
        out.put_u64(self.offset);
        out.put_u32(self.len);
        out.freeze()
    }

    pub fn decode(bytes: &[u8]) -> Result<ChunkRequest, DecodeError> {
        let mut r = Reader(bytes);
        let request = ChunkRequest {
            session: r.uuid()?,
            file: r.u32()?,
            component: r.u32()?,
            offset: r.u64()?,
            len: r.u32()?,
        };
        r.end()?;
        Ok(request)
    }
}

impl Chunk {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(4 + self.bytes.len());
        out.put_u32(self.crc);
        out.put_slice(&self.bytes);
        out.freeze()
    }

    pub fn decode(bytes: Bytes) -> Result<Chunk, DecodeError> {
        let crc = Reader(&bytes).u32()?;
        Ok(Chunk {
            crc,
            bytes: bytes.slice(4..),
        })
    }
}

impl Complete {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::new();
        out.put_slice(self.session.as_bytes());
        match &self.failure {
            None => out.put_u8(0),
            Some(reason) => {
                out.put_u8(1);
                put_str(&mut out, reason);
            }
        }
        out.freeze()
    }

    pub fn decode(bytes: &[u8]) -> Result<Complete, DecodeError> {
        let mut r = Reader(bytes);
        let session = r.uuid()?;
        let failure = match r.u8()? {
            0 => None,
            _ => Some(r.string()?),
        };
        r.end()?;
        Ok(Complete { session, failure })
    }
}

fn put_tables(out: &mut BytesMut, tables: &[(TableId, Vec<TokenRange>)]) {
    out.put_u32(tables.len() as u32);
    for (table, ranges) in tables {
        out.put_slice(table.0.as_bytes());
        out.put_u32(ranges.len() as u32);
        for (left, right) in ranges {
            out.put_i64(*left);
            out.put_i64(*right);
        }
    }
}

fn put_str(out: &mut BytesMut, s: &str) {
    out.put_u32(s.len() as u32);
    out.put_slice(s.as_bytes());
}

/// Reads big-endian fields off the front of a payload, failing on a short one (repair's
/// messages use it too).
pub struct Reader<'a>(pub &'a [u8]);

impl Reader<'_> {
    pub fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError(format!(
                "{n} bytes wanted, {} left",
                self.0.len()
            )));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        self.array().map(u16::from_be_bytes)
    }

    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        self.array().map(i32::from_be_bytes)
    }

    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_be_bytes)
    }

    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        self.array().map(u64::from_be_bytes)
    }

    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        self.array().map(i64::from_be_bytes)
    }

    pub fn uuid(&mut self) -> Result<Uuid, DecodeError> {
        self.array().map(Uuid::from_bytes)
    }

    /// A count of items of at least `item_bytes` each: refused when the payload cannot hold
    /// them (so a bad count allocates nothing).
    pub fn count(&mut self, item_bytes: usize) -> Result<usize, DecodeError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(item_bytes) > self.0.len() {
            return Err(DecodeError(format!("{n} items in {} bytes", self.0.len())));
        }
        Ok(n)
    }

    /// A token range: its left and right tokens.
    pub fn range(&mut self) -> Result<TokenRange, DecodeError> {
        Ok((self.i64()?, self.i64()?))
    }

    fn tables(&mut self) -> Result<Vec<(TableId, Vec<TokenRange>)>, DecodeError> {
        let mut tables = Vec::new();
        for _ in 0..self.count(20)? {
            let table = TableId(self.uuid()?);
            let mut ranges = Vec::new();
            for _ in 0..self.count(16)? {
                ranges.push(self.range()?);
            }
            tables.push((table, ranges));
        }
        Ok(tables)
    }

    pub fn string(&mut self) -> Result<String, DecodeError> {
        let len = self.u32()? as usize;
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError("a string is not UTF-8".into()))
    }

    pub fn end(&self) -> Result<(), DecodeError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(DecodeError(format!("{} trailing bytes", self.0.len())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_truncations_are_refused() {
        let session = Uuid::from_u128(7);
        let table = TableId(Uuid::from_u128(9));
        let prepare = Prepare {
            session,
            description: "Rebuild".into(),
            tables: vec![(table, vec![(1, 5), (9, i64::MIN)])],
        };
        let manifest = Manifest {
            files: vec![FileEntry {
                table,
                whole: true,
                partitions: 3,
                components: vec![("ha-Data.db".into(), 100), ("ha-TOC.txt".into(), 20)],
            }],
        };
        let request = ChunkRequest {
            session,
            file: 1,
            component: 2,
            offset: 3,
            len: 4,
        };
        let complete = Complete {
            session,
            failure: Some("disk full".into()),
        };
        let pull = Pull {
            description: "Unbootstrap".into(),
            source: "127.0.0.3:7000".parse().unwrap(),
            tables: prepare.tables.clone(),
        };
        assert_eq!(Pull::decode(&pull.encode()), Ok(pull.clone()));
        let estimate = Estimate {
            tables: prepare.tables.clone(),
        };
        assert_eq!(Estimate::decode(&estimate.encode()), Ok(estimate.clone()));
        assert_eq!(Prepare::decode(&prepare.encode()), Ok(prepare.clone()));
        assert_eq!(Manifest::decode(&manifest.encode()), Ok(manifest.clone()));
        assert_eq!(ChunkRequest::decode(&request.encode()), Ok(request));
        assert_eq!(Complete::decode(&complete.encode()), Ok(complete.clone()));
        let chunk = Chunk {
            crc: 5,
            bytes: Bytes::from_static(b"abc"),
        };
        assert_eq!(Chunk::decode(chunk.encode()), Ok(chunk));
        let truncations = |bytes: Bytes| (0..bytes.len()).map(move |cut| bytes.slice(..cut));
        assert!(truncations(prepare.encode()).all(|b| Prepare::decode(&b).is_err()));
        assert!(truncations(manifest.encode()).all(|b| Manifest::decode(&b).is_err()));
        assert!(truncations(request.encode()).all(|b| ChunkRequest::decode(&b).is_err()));
        assert!(truncations(complete.encode()).all(|b| Complete::decode(&b).is_err()));
        assert!(truncations(pull.encode()).all(|b| Pull::decode(&b).is_err()));
        assert!(truncations(estimate.encode()).all(|b| Estimate::decode(&b).is_err()));
        let huge_count = [0xff; 8];
        assert!(Manifest::decode(&huge_count).is_err());
    }
}
