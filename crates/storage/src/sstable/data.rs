//! The Data component: the uncompressed partition stream cut into `chunk_length` pieces, each
//! compressed and followed by the CRC32 of its compressed bytes, and the CompressionInfo
//! component holding the algorithm, chunk length and the file offset of every chunk.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use bytes::BufMut;

use crate::error::{Result, StorageError};
use crate::sstable::compression::Compression;
use crate::sstable::format::{
    corrupt, seal, stream_header, unseal, Decoder, COMPRESSION_MAGIC, DATA_MAGIC, STREAM_HEADER_LEN,
};

/// Largest accepted chunk length (Cassandra caps `chunk_length_in_kb` well below this).
pub const MAX_CHUNK_LENGTH: usize = 64 << 20;

/// Where the chunks of a Data file are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CompressionInfo {
    pub compression: Compression,
    pub chunk_length: usize,
    /// Length of the uncompressed partition stream.
    pub uncompressed_len: u64,
    /// Length of the Data file.
    pub data_len: u64,
    /// File offset of each chunk, ascending.
    pub offsets: Vec<u64>,
}

impl CompressionInfo {
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(32 + self.offsets.len() * 8);
        body.put_u8(self.compression.id());
        body.put_u32(self.chunk_length as u32);
        body.put_u64(self.uncompressed_len);
        body.put_u64(self.data_len);
        body.put_u32(self.offsets.len() as u32);
        for offset in &self.offsets {
            body.put_u64(*offset);
        }
        seal(COMPRESSION_MAGIC, &body)
    }

    pub fn decode(bytes: &[u8], file: &Path) -> Result<CompressionInfo> {
        let body = unseal(bytes, COMPRESSION_MAGIC, file)?;
        let mut d = Decoder::new(body, file, 6);
        let id = d.u8()?;
        let compression = Compression::from_id(id)
            .ok_or_else(|| d.corrupt(format!("unknown compression id {id}")))?;
        let chunk_length = d.u32()? as usize;
        let uncompressed_len = d.u64()?;
        let data_len = d.u64()?;
        let count = d.count(8)?;
        let offsets = (0..count).map(|_| d.u64()).collect::<Result<Vec<_>>>()?;
        d.finish()?;
        let info = CompressionInfo {
            compression,
            chunk_length,
            uncompressed_len,
            data_len,
            offsets,
        };
        info.validate().map_err(|reason| corrupt(file, 0, reason))?;
        Ok(info)
    }

    fn validate(&self) -> std::result::Result<(), String> {
        if self.chunk_length == 0 || self.chunk_length > MAX_CHUNK_LENGTH {
            return Err(format!("invalid chunk length {}", self.chunk_length));
        }
        let chunks = self.uncompressed_len.div_ceil(self.chunk_length as u64);
        if chunks != self.offsets.len() as u64 {
            return Err(format!(
                "{} chunk offsets for {chunks} chunks",
                self.offsets.len()
            ));
        }
        let mut previous = STREAM_HEADER_LEN;
        for (i, offset) in self.offsets.iter().enumerate() {
            let min = if i == 0 { previous } else { previous + 4 };
            if *offset < min || *offset >= self.data_len || (i == 0 && *offset != previous) {
                return Err(format!("chunk {i} offset {offset} out of order"));
            }
            previous = *offset;
        }
        Ok(())
    }

    /// File range (start, end) of chunk `i`, its CRC included.
    pub fn chunk_range(&self, i: usize) -> Option<(u64, u64)> {
        let start = *self.offsets.get(i)?;
        let end = self.offsets.get(i + 1).copied().unwrap_or(self.data_len);
        Some((start, end))
    }

    /// Uncompressed length of chunk `i`.
    pub fn chunk_size(&self, i: usize) -> usize {
        let start = i as u64 * self.chunk_length as u64;
        self.uncompressed_len
            .saturating_sub(start)
            .min(self.chunk_length as u64) as usize
    }
}

/// Streams the uncompressed partition bytes into compressed, checksummed chunks.
pub(crate) struct DataWriter {
    out: BufWriter<File>,
    path: PathBuf,
    compression: Compression,
    chunk_length: usize,
    pending: Vec<u8>,
    offsets: Vec<u64>,
    file_len: u64,
    uncompressed_len: u64,
}

impl DataWriter {
    pub fn create(path: PathBuf, compression: Compression, chunk_length: usize) -> Result<Self> {
        let file = File::create(&path).map_err(|e| StorageError::io(&path, e))?;
        let mut writer = DataWriter {
            out: BufWriter::with_capacity(1 << 16, file),
            path,
            compression,
            chunk_length,
            pending: Vec::with_capacity(chunk_length),
            offsets: Vec::new(),
            file_len: 0,
            uncompressed_len: 0,
        };
        writer.write_raw(&stream_header(DATA_MAGIC))?;
        Ok(writer)
    }

    /// Position of the next byte in the uncompressed stream.
    pub fn position(&self) -> u64 {
        self.uncompressed_len
    }

    /// Bytes written to the file so far (compressed chunks and their checksums).
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    pub fn write(&mut self, mut bytes: &[u8]) -> Result<()> {
        self.uncompressed_len += bytes.len() as u64;
        while !bytes.is_empty() {
            let room = self.chunk_length - self.pending.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.pending.extend_from_slice(now);
            bytes = later;
            if self.pending.len() == self.chunk_length {
                self.flush_chunk()?;
            }
        }
        Ok(())
    }

    fn flush_chunk(&mut self) -> Result<()> {
        let compressed = self.compression.compress(&self.pending, &self.path)?;
        self.offsets.push(self.file_len);
        self.write_raw(&compressed)?;
        self.write_raw(&crc32fast::hash(&compressed).to_be_bytes())?;
        self.pending.clear();
        Ok(())
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| StorageError::io(&self.path, e))?;
        self.file_len += bytes.len() as u64;
        Ok(())
    }

    /// Writes the last chunk and fsyncs; returns the chunk table.
    pub fn finish(mut self) -> Result<CompressionInfo> {
        if !self.pending.is_empty() {
            self.flush_chunk()?;
        }
        let file = self
            .out
            .into_inner()
            .map_err(|e| StorageError::io(&self.path, e.into_error()))?;
        file.sync_all()
            .map_err(|e| StorageError::io(&self.path, e))?;
        Ok(CompressionInfo {
            compression: self.compression,
            chunk_length: self.chunk_length,
            uncompressed_len: self.uncompressed_len,
            data_len: self.file_len,
            offsets: self.offsets,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> CompressionInfo {
        CompressionInfo {
            compression: Compression::Lz4,
            chunk_length: 4,
            uncompressed_len: 10,
            data_len: 100,
            offsets: vec![10, 30, 60],
        }
    }

    #[test]
    fn compression_info_round_trips_and_validates() {
        let file = Path::new("ci");
        let i = info();
        assert_eq!(
            CompressionInfo::decode(&i.encode(), file).expect("decode"),
            i
        );
        assert_eq!(i.chunk_size(2), 2);
        assert_eq!(i.chunk_range(2), Some((60, 100)));
        let mut bad = info();
        bad.offsets = vec![10, 9, 60];
        assert!(CompressionInfo::decode(&bad.encode(), file).is_err());
        bad.offsets = vec![10, 30];
        assert!(CompressionInfo::decode(&bad.encode(), file).is_err());
        bad = info();
        bad.chunk_length = 0;
        assert!(CompressionInfo::decode(&bad.encode(), file).is_err());
    }
}
