//! Reading the Data component: positioned chunk reads (checksum verified on every read, then
//! decompressed) and a [`DataCursor`] that walks the uncompressed stream across chunks, through
//! the chunk cache when given one.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use bytes::Bytes;

use crate::error::{Result, StorageError};
use crate::sstable::caches::CachedChunks;
use crate::sstable::data::CompressionInfo;
use crate::sstable::format::{
    check_stream_header, corrupt, read_varint, DATA_MAGIC, STREAM_HEADER_LEN,
};
use crate::sstable::stats::RowNumbering;
use mutation::codec::Numbering;

/// An open Data file. Reads are positioned (`pread`), so one instance serves many threads.
pub(crate) struct DataFile {
    file: File,
    path: PathBuf,
    info: CompressionInfo,
    chunk_reads: AtomicU64,
    /// The format version its header names (how records are laid out).
    version: u16,
    /// What its rows are numbered with (format version 2; Statistics holds it).
    numbering: RowNumbering,
}

impl DataFile {
    /// Opens `path` and checks its header and length against `info`; its rows are numbered
    /// with `numbering` (ignored for format version 1, whose rows spell their names).
    pub fn open(path: PathBuf, info: CompressionInfo, numbering: RowNumbering) -> Result<DataFile> {
        let file = File::open(&path).map_err(|e| StorageError::io(&path, e))?;
        let len = file
            .metadata()
            .map_err(|e| StorageError::io(&path, e))?
            .len();
        if len != info.data_len {
            return Err(corrupt(
                &path,
                len.min(info.data_len),
                format!(
                    "file is {len} bytes, CompressionInfo says {}",
                    info.data_len
                ),
            ));
        }
        let mut data = DataFile {
            file,
            path,
            info,
            chunk_reads: AtomicU64::new(0),
            version: 0,
            numbering,
        };
        let header = data.read_at(0, STREAM_HEADER_LEN as usize)?;
        data.version = check_stream_header(&header, DATA_MAGIC, &data.path)?;
        Ok(data)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn uncompressed_len(&self) -> u64 {
        self.info.uncompressed_len
    }

    pub fn chunk_length(&self) -> u64 {
        self.info.chunk_length as u64
    }

    pub fn chunk_count(&self) -> usize {
        self.info.offsets.len()
    }

    /// Uncompressed length of chunk `i`.
    pub fn chunk_size(&self, i: usize) -> usize {
        self.info.chunk_size(i)
    }

    /// Chunks read (and verified) so far.
    pub fn chunk_reads(&self) -> u64 {
        self.chunk_reads.load(Ordering::Relaxed)
    }

    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.file
            .read_exact_at(&mut buf, offset)
            .map_err(|e| StorageError::io(&self.path, e))?;
        Ok(buf)
    }

    /// Reads chunk `i`, verifies its CRC32 and decompresses it.
    pub fn chunk(&self, i: usize) -> Result<Vec<u8>> {
        let Some((start, end)) = self.info.chunk_range(i) else {
            return Err(corrupt(&self.path, 0, format!("no chunk {i}")));
        };
        if end < start + 4 {
            return Err(corrupt(
                &self.path,
                start,
                "chunk shorter than its checksum",
            ));
        }
        self.chunk_reads.fetch_add(1, Ordering::Relaxed);
        let raw = self.read_at(start, (end - start) as usize)?;
        let (payload, crc) = raw.split_at(raw.len() - 4);
        let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
        if crc32fast::hash(payload) != expected {
            return Err(corrupt(
                &self.path,
                start,
                format!("chunk {i} checksum mismatch"),
            ));
        }
        let size = self.info.chunk_size(i);
        self.info
            .compression
            .decompress(payload, size, &self.path, start)
    }

    /// The file offset of the chunk holding stream position `pos`, for error reports.
    pub fn file_offset_of(&self, pos: u64) -> u64 {
        let i = (pos / self.chunk_length()) as usize;
        self.info.chunk_range(i).map_or(0, |(start, _)| start)
    }
}

/// A position in the uncompressed stream with the chunk under it loaded.
pub(crate) struct DataCursor<'a> {
    data: &'a DataFile,
    cached: Option<CachedChunks<'a>>,
    pos: u64,
    chunk: Option<(usize, Bytes)>,
}

impl<'a> DataCursor<'a> {
    /// A cursor reading every chunk from disk.
    pub fn new(data: &'a DataFile) -> Self {
        DataCursor::cached(data, None)
    }

    /// A cursor looking chunks up in `cached` first (and filling it if asked to).
    pub fn cached(data: &'a DataFile, cached: Option<CachedChunks<'a>>) -> Self {
        DataCursor {
            data,
            cached,
            pos: 0,
            chunk: None,
        }
    }

    pub fn position(&self) -> u64 {
        self.pos
    }

    pub fn seek(&mut self, pos: u64) {
        self.pos = pos;
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.data.uncompressed_len()
    }

    /// A corruption error at the current position (file offset of its chunk).
    pub fn corrupt(&self, reason: impl Into<String>) -> StorageError {
        let reason = format!("{} (stream position {})", reason.into(), self.pos);
        corrupt(self.data.path(), self.data.file_offset_of(self.pos), reason)
    }

    pub fn file(&self) -> &'a Path {
        self.data.path()
    }

    /// Re-addresses a decoding error of the record at stream `position` to its Data chunk.
    pub fn relocate(&self, error: StorageError, position: u64) -> StorageError {
        match error {
            StorageError::Corrupt { reason, .. } => corrupt(
                self.data.path(),
                self.data.file_offset_of(position),
                format!("{reason} (record at stream position {position})"),
            ),
            other => other,
        }
    }

    /// Appends the next `n` bytes to `out`.
    pub fn read_into(&mut self, mut n: usize, out: &mut Vec<u8>) -> Result<()> {
        if self.pos + n as u64 > self.data.uncompressed_len() {
            return Err(self.corrupt(format!("{n} bytes run past the end of the data")));
        }
        while n > 0 {
            let chunk_length = self.data.chunk_length();
            let index = (self.pos / chunk_length) as usize;
            let within = (self.pos % chunk_length) as usize;
            let chunk = self.load(index)?;
            let take = n.min(chunk.len().saturating_sub(within));
            if take == 0 {
                return Err(self.corrupt("chunk shorter than expected"));
            }
            out.extend_from_slice(&chunk[within..within + take]);
            self.pos += take as u64;
            n -= take;
        }
        Ok(())
    }

    fn load(&mut self, index: usize) -> Result<&[u8]> {
        if self.chunk.as_ref().is_none_or(|(i, _)| *i != index) {
            self.chunk = Some((index, self.fetch(index)?));
        }
        Ok(self.chunk.as_ref().map_or(&[][..], |(_, c)| &c[..]))
    }

    /// Chunk `index` from the chunk cache, or read from disk (and cached if filling).
    fn fetch(&self, index: usize) -> Result<Bytes> {
        let Some(cached) = self.cached else {
            return self.data.chunk(index).map(Bytes::from);
        };
        if let Some(chunk) = cached.cache.get(cached.sstable, index) {
            return Ok(chunk);
        }
        let started = Instant::now();
        let chunk = Bytes::from(self.data.chunk(index)?);
        cached.cache.record_miss(started.elapsed());
        if cached.fill {
            cached.cache.insert(cached.sstable, index, chunk.clone());
        }
        Ok(chunk)
    }

    pub fn version(&self) -> u16 {
        self.data.version
    }

    /// How rows are numbered, if they are (format version 2).
    pub fn numbering(&self) -> Option<Numbering<'a>> {
        let data = self.data;
        (data.version != 1).then(|| data.numbering.as_codec())
    }

    /// Reads one length-prefixed record; `None` for an empty record (the end-of-partition
    /// marker). A record within one chunk is a slice of it, sharing its buffer (the rows
    /// decoded from it then slice their names and values out of it too, instead of copying
    /// each); one spanning chunks is copied through `scratch`.
    pub fn shared_record(&mut self, scratch: &mut Vec<u8>) -> Result<Option<Bytes>> {
        let len = self.record_len(scratch)?;
        if len == 0 {
            return Ok(None);
        }
        if let Some(record) = self.slice_of_chunk(len)? {
            return Ok(Some(record));
        }
        scratch.clear();
        self.read_into(len, scratch)?;
        Ok(Some(Bytes::copy_from_slice(scratch)))
    }

    /// A record's length: a `u32` in format version 1, a varint since.
    fn record_len(&mut self, scratch: &mut Vec<u8>) -> Result<usize> {
        scratch.clear();
        if self.data.version == 1 {
            self.read_into(4, scratch)?;
            let len = [scratch[0], scratch[1], scratch[2], scratch[3]];
            return Ok(u32::from_be_bytes(len) as usize);
        }
        loop {
            self.read_into(1, scratch)?;
            if scratch[scratch.len() - 1] & 0x80 == 0 || scratch.len() == 10 {
                break;
            }
        }
        match read_varint(scratch) {
            Some((len, _)) if len <= self.data.uncompressed_len() => Ok(len as usize),
            _ => Err(self.corrupt("invalid record length")),
        }
    }

    /// The next `len` bytes as a slice of the chunk holding them, when one chunk does.
    fn slice_of_chunk(&mut self, len: usize) -> Result<Option<Bytes>> {
        if self.pos + len as u64 > self.data.uncompressed_len() {
            return Ok(None);
        }
        let chunk_length = self.data.chunk_length();
        let within = (self.pos % chunk_length) as usize;
        let chunk = self.load((self.pos / chunk_length) as usize)?;
        if within + len > chunk.len() {
            return Ok(None);
        }
        let record = self
            .chunk
            .as_ref()
            .map(|(_, chunk)| chunk.slice(within..within + len));
        self.pos += len as u64;
        Ok(record)
    }
}
