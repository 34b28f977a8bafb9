//! The Index component: one entry per partition (key → position of its header record in the
//! uncompressed Data stream, plus a row index for partitions larger than one row-index block),
//! grouped into blocks of [`INDEX_BLOCK_ENTRIES`] entries, each block followed by its CRC32.
//! The Summary holds the first key and extent of every block.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Bound;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use bytes::{BufMut, Bytes};

use crate::error::{Result, StorageError};
use crate::model::PartitionKey;
use crate::sstable::format::{
    check_stream_header, corrupt, put_bytes, stream_header, Decoder, INDEX_MAGIC, STREAM_HEADER_LEN,
};
use crate::sstable::layout::before_start;
use crate::sstable::summary::SummaryEntry;

/// Index entries per block (and so per Summary entry), as Cassandra's default
/// `min_index_interval`.
pub const INDEX_BLOCK_ENTRIES: usize = 128;

/// A run of consecutive rows of one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RowIndexBlock {
    pub first: Bytes,
    pub last: Bytes,
    /// Offset of the block's first row record from the partition's start.
    pub offset: u64,
}

/// Where one partition is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    pub key: PartitionKey,
    /// Position of the partition's header record in the uncompressed Data stream.
    pub position: u64,
    /// Empty for partitions that fit in one block.
    pub row_index: Vec<RowIndexBlock>,
}

impl IndexEntry {
    /// Stream position to start decoding rows at for a slice starting at `start`, or `None`
    /// when every row of the partition precedes the slice. `None` is never returned without a
    /// row index: then decoding starts after the header (`rows_start`).
    pub fn seek_rows(&self, start: &Bound<Bytes>, rows_start: u64) -> Option<u64> {
        if self.row_index.is_empty() {
            return Some(rows_start);
        }
        let first = self
            .row_index
            .partition_point(|block| before_start(&block.last, start));
        let block = self.row_index.get(first)?;
        Some(self.position + block.offset)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.put_i64(self.key.token);
        put_bytes(out, &self.key.key);
        out.put_u64(self.position);
        out.put_u32(self.row_index.len() as u32);
        for block in &self.row_index {
            put_bytes(out, &block.first);
            put_bytes(out, &block.last);
            out.put_u64(block.offset);
        }
    }

    fn decode(d: &mut Decoder<'_>) -> Result<IndexEntry> {
        let key = PartitionKey {
            token: d.i64()?,
            key: d.bytes()?,
        };
        let position = d.u64()?;
        let count = d.count(16)?;
        let mut row_index = Vec::with_capacity(count);
        for _ in 0..count {
            row_index.push(RowIndexBlock {
                first: d.bytes()?,
                last: d.bytes()?,
                offset: d.u64()?,
            });
        }
        Ok(IndexEntry {
            key,
            position,
            row_index,
        })
    }
}

/// Writes index entries in blocks and collects the summary.
pub(crate) struct IndexWriter {
    out: BufWriter<File>,
    path: PathBuf,
    len: u64,
    block: Vec<u8>,
    block_entries: u32,
    block_first: Option<PartitionKey>,
    summary: Vec<SummaryEntry>,
}

impl IndexWriter {
    pub fn create(path: PathBuf) -> Result<Self> {
        let file = File::create(&path).map_err(|e| StorageError::io(&path, e))?;
        let mut writer = IndexWriter {
            out: BufWriter::with_capacity(1 << 16, file),
            path,
            len: 0,
            block: Vec::new(),
            block_entries: 0,
            block_first: None,
            summary: Vec::new(),
        };
        writer.write_raw(&stream_header(INDEX_MAGIC))?;
        Ok(writer)
    }

    /// Bytes written so far (the current block included).
    pub fn bytes_written(&self) -> u64 {
        self.len + self.block.len() as u64
    }

    pub fn add(&mut self, entry: &IndexEntry) -> Result<()> {
        if self.block_first.is_none() {
            self.block_first = Some(entry.key.clone());
        }
        entry.encode(&mut self.block);
        self.block_entries += 1;
        if self.block_entries as usize == INDEX_BLOCK_ENTRIES {
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> Result<()> {
        let Some(first_key) = self.block_first.take() else {
            return Ok(());
        };
        let mut block = Vec::with_capacity(self.block.len() + 8);
        block.put_u32(self.block_entries);
        block.extend_from_slice(&self.block);
        let crc = crc32fast::hash(&block);
        block.put_u32(crc);
        self.summary.push(SummaryEntry {
            first_key,
            offset: self.len,
            len: block.len() as u64,
        });
        self.write_raw(&block)?;
        self.block.clear();
        self.block_entries = 0;
        Ok(())
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| StorageError::io(&self.path, e))?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// Writes the last block and fsyncs; returns the summary entries and the file length.
    pub fn finish(mut self) -> Result<(Vec<SummaryEntry>, u64)> {
        self.flush_block()?;
        let file = self
            .out
            .into_inner()
            .map_err(|e| StorageError::io(&self.path, e.into_error()))?;
        file.sync_all()
            .map_err(|e| StorageError::io(&self.path, e))?;
        Ok((self.summary, self.len))
    }
}

/// An open Index file.
pub(crate) struct IndexFile {
    file: File,
    path: PathBuf,
}

impl IndexFile {
    /// Opens `path`, checking its header and that it is `expected_len` bytes long.
    pub fn open(path: PathBuf, expected_len: u64) -> Result<IndexFile> {
        let file = File::open(&path).map_err(|e| StorageError::io(&path, e))?;
        let len = file
            .metadata()
            .map_err(|e| StorageError::io(&path, e))?
            .len();
        if len != expected_len {
            let reason = format!("file is {len} bytes, the Summary says {expected_len}");
            return Err(corrupt(&path, len.min(expected_len), reason));
        }
        let mut header = vec![0u8; STREAM_HEADER_LEN as usize];
        file.read_exact_at(&mut header, 0)
            .map_err(|e| StorageError::io(&path, e))?;
        check_stream_header(&header, INDEX_MAGIC, &path)?;
        Ok(IndexFile { file, path })
    }

    /// Reads and verifies one block.
    pub fn block(&self, at: &SummaryEntry) -> Result<Vec<IndexEntry>> {
        let len = usize::try_from(at.len)
            .map_err(|_| corrupt(&self.path, at.offset, "block too large"))?;
        let mut buf = vec![0u8; len];
        self.file
            .read_exact_at(&mut buf, at.offset)
            .map_err(|e| StorageError::io(&self.path, e))?;
        if buf.len() < 8 {
            return Err(corrupt(&self.path, at.offset, "index block too short"));
        }
        let (content, crc) = buf.split_at(buf.len() - 4);
        if crc32fast::hash(content) != u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]) {
            return Err(corrupt(
                &self.path,
                at.offset,
                "index block checksum mismatch",
            ));
        }
        let mut d = Decoder::new(content, &self.path, at.offset);
        let count = d.count(24)?;
        let entries = (0..count)
            .map(|_| IndexEntry::decode(&mut d))
            .collect::<Result<Vec<_>>>()?;
        d.finish()?;
        if entries.first().map(|e| &e.key) != Some(&at.first_key) {
            return Err(corrupt(
                &self.path,
                at.offset,
                "block does not start with its Summary key",
            ));
        }
        Ok(entries)
    }
}
