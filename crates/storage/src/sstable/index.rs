//! The Index component: one entry per partition (key → position of its header record in the
//! uncompressed Data stream, plus a row index for partitions larger than one row-index block),
//! grouped into blocks of [`INDEX_BLOCK_ENTRIES`] entries, each block followed by its CRC32.
//! The Summary holds the first key and extent of every block. Format version 2 (written) packs
//! an entry's key length and flags in one varint, leaves out a token the key implies and gives
//! positions as varints from the entry before; version 1 (read) had fixed-width fields.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Bound;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::{BufMut, Bytes};

use crate::error::{Result, StorageError};
use crate::sstable::caches::CachedChunks;
use crate::sstable::format::{
    check_stream_header, corrupt, put_varbytes, put_varint, stream_header, Decoder, INDEX_MAGIC,
    STREAM_HEADER_LEN,
};
use crate::sstable::layout::{after_end, before_start, implied_token};
use crate::sstable::summary::SummaryEntry;
use mutation::PartitionKey;

/// Index entries per block (and so per Summary entry). A lookup scans its block entry by
/// entry: at Cassandra's `min_index_interval` of 128 that scan took about 5% of a warm point
/// read's CPU; at 32 it is a quarter of that, for a Summary (in memory) four times as long —
/// one entry, the block's first key and extent, per 32 partitions. Files written with other
/// block sizes read the same: each block gives its entry count.
pub const INDEX_BLOCK_ENTRIES: usize = 32;

/// A run of consecutive rows of one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RowIndexBlock {
    pub first: Bytes,
    pub last: Bytes,
    /// Offset of the block's first row record from the partition's start.
    pub offset: u64,
}

/// One partition's Index entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    pub key: PartitionKey,
    pub location: Location,
}

/// Where a partition is: what a read needs from its Index entry (and what the key cache keeps).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Location {
    /// Position of the partition's header record in the uncompressed Data stream.
    pub position: u64,
    pub row_index: RowIndex,
}

/// A partition's row index: empty (and without an allocation) for partitions that fit in one
/// block; shared, so a copy of a [`Location`] costs no more than its position.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RowIndex(Option<Arc<[RowIndexBlock]>>);

impl From<Vec<RowIndexBlock>> for RowIndex {
    fn from(blocks: Vec<RowIndexBlock>) -> Self {
        RowIndex((!blocks.is_empty()).then(|| blocks.into()))
    }
}

impl std::ops::Deref for RowIndex {
    type Target = [RowIndexBlock];

    fn deref(&self) -> &[RowIndexBlock] {
        self.0.as_deref().unwrap_or(&[])
    }
}

/// Entry flags (version 2), the low bits of the varint that gives the key's length.
const EXPLICIT_TOKEN: u64 = 1;
const HAS_ROW_INDEX: u64 = 2;
const FLAG_BITS: u32 = 2;

/// An [`IndexEntry`]'s encoding (version 2), from its parts (the writer has no entry to borrow
/// them from); `previous` is the position of the entry before it in the block, if any.
fn encode_entry(
    out: &mut Vec<u8>,
    key: &PartitionKey,
    (position, previous): (u64, Option<u64>),
    row_index: &[RowIndexBlock],
) {
    let explicit = implied_token(&key.key) != key.token;
    let flags = if explicit { EXPLICIT_TOKEN } else { 0 }
        | if row_index.is_empty() {
            0
        } else {
            HAS_ROW_INDEX
        };
    put_varint(out, (key.key.len() as u64) << FLAG_BITS | flags);
    out.put_slice(&key.key);
    if explicit {
        out.put_i64(key.token);
    }
    put_varint(out, position - previous.unwrap_or(0));
    if !row_index.is_empty() {
        put_varint(out, row_index.len() as u64);
    }
    for block in row_index {
        put_varbytes(out, &block.first);
        put_varbytes(out, &block.last);
        put_varint(out, block.offset);
    }
}

/// The start of an entry (version 2): its key bytes, its token if written, its position and
/// whether a row index follows.
struct EntryHead<'a> {
    key: &'a [u8],
    token: Option<i64>,
    position: u64,
    row_index: bool,
}

impl<'a> EntryHead<'a> {
    fn decode(d: &mut Decoder<'a>, previous: Option<u64>) -> Result<EntryHead<'a>> {
        let head = d.varint()?;
        let len = usize::try_from(head >> FLAG_BITS).map_err(|_| d.corrupt("key too long"))?;
        let key = d.take(len)?;
        let token = if head & EXPLICIT_TOKEN != 0 {
            Some(d.i64()?)
        } else {
            None
        };
        let delta = d.varint()?;
        let position = match previous {
            None => delta,
            Some(p) if delta > 0 => p.checked_add(delta).ok_or_else(|| d.corrupt("position"))?,
            Some(_) => return Err(d.corrupt("index positions do not ascend")),
        };
        let row_index = head & HAS_ROW_INDEX != 0;
        Ok(EntryHead {
            key,
            token,
            position,
            row_index,
        })
    }

    fn token(&self) -> i64 {
        self.token.unwrap_or_else(|| implied_token(self.key))
    }

    fn partition_key(&self) -> PartitionKey {
        PartitionKey {
            token: self.token(),
            key: Bytes::copy_from_slice(self.key),
        }
    }

    /// The row index after the head (read when the head says one follows).
    fn row_index(&self, d: &mut Decoder<'_>) -> Result<RowIndex> {
        if !self.row_index {
            return Ok(RowIndex::default());
        }
        let count = d.varcount()?;
        let mut blocks = Vec::with_capacity(count);
        for _ in 0..count {
            blocks.push(RowIndexBlock {
                first: Bytes::copy_from_slice(d.varslice()?),
                last: Bytes::copy_from_slice(d.varslice()?),
                offset: d.varint()?,
            });
        }
        if blocks.is_empty() {
            return Err(d.corrupt("empty row index flagged"));
        }
        Ok(blocks.into())
    }

    fn location(&self, d: &mut Decoder<'_>) -> Result<Location> {
        Ok(Location {
            position: self.position,
            row_index: self.row_index(d)?,
        })
    }
}

impl Location {
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

    /// The stretches of the Data stream holding the rows between `start` and `end`, ascending:
    /// the row-index blocks meeting the slice, each as its start position and the next block's
    /// (`None`: the block runs to the end of the partition). Without a row index, all the rows.
    pub fn blocks_meeting(
        &self,
        start: &Bound<Bytes>,
        end: &Bound<Bytes>,
        rows_start: u64,
    ) -> impl DoubleEndedIterator<Item = (u64, Option<u64>)> + '_ {
        let blocks = &self.row_index;
        let (first, past) = if blocks.is_empty() {
            (0, 0)
        } else {
            let first = blocks.partition_point(|block| before_start(&block.last, start));
            let past = blocks.partition_point(|block| !after_end(&block.first, end));
            (first, past.max(first))
        };
        let whole = blocks.is_empty().then_some((rows_start, None));
        let position = self.position;
        let stretches = (first..past).map(move |i| {
            let next = blocks.get(i + 1).map(|b| position + b.offset);
            (position + blocks[i].offset, next)
        });
        whole.into_iter().chain(stretches)
    }

    /// What follows the key in an entry of format version 1: the position and the row index.
    fn decode_v1(d: &mut Decoder<'_>) -> Result<Location> {
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
        Ok(Location {
            position,
            row_index: row_index.into(),
        })
    }
}

impl IndexEntry {
    fn decode_v1(d: &mut Decoder<'_>) -> Result<IndexEntry> {
        let key = PartitionKey {
            token: d.i64()?,
            key: d.bytes()?,
        };
        let location = Location::decode_v1(d)?;
        Ok(IndexEntry { key, location })
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
    /// The position of the block's last entry (the next one's is written from it).
    previous: Option<u64>,
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
            previous: None,
            summary: Vec::new(),
        };
        writer.write_raw(&stream_header(INDEX_MAGIC))?;
        Ok(writer)
    }

    /// Bytes written so far (the current block included).
    pub fn bytes_written(&self) -> u64 {
        self.len + self.block.len() as u64
    }

    /// Adds the entry of partition `key`, at `position` with `row_index` (see [`IndexEntry`]).
    pub fn add(
        &mut self,
        key: &PartitionKey,
        position: u64,
        row_index: &[RowIndexBlock],
    ) -> Result<()> {
        if self.block_first.is_none() {
            self.block_first = Some(key.clone());
        }
        encode_entry(&mut self.block, key, (position, self.previous), row_index);
        self.previous = Some(position);
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
        self.previous = None;
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
    /// The format version its header names.
    version: u16,
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
        let version = check_stream_header(&header, INDEX_MAGIC, &path)?;
        Ok(IndexFile {
            file,
            path,
            version,
        })
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Reads and verifies one block.
    pub fn block(&self, at: &SummaryEntry) -> Result<Vec<IndexEntry>> {
        let buf = self.read_block(at)?;
        let mut d = Decoder::new(&buf, &self.path, at.offset);
        let entries = if self.version == 1 {
            let count = d.count(24)?;
            (0..count)
                .map(|_| IndexEntry::decode_v1(&mut d))
                .collect::<Result<Vec<_>>>()?
        } else {
            decode_entries(&mut d)?
        };
        d.finish()?;
        if entries.first().map(|e| &e.key) != Some(&at.first_key) {
            return Err(block_start_mismatch(&self.path, at));
        }
        Ok(entries)
    }

    /// Where the entry of `key` in block `at` says its partition is, if there is one, the block
    /// taken from (and, if asked to, put in) the chunk cache when one is given. Entries are
    /// compared where they lie and skipped without being decoded, so a lookup allocates only
    /// the row index it returns (if the partition has one).
    pub fn find(
        &self,
        at: &SummaryEntry,
        key: &PartitionKey,
        cached: Option<CachedChunks<'_>>,
    ) -> Result<Option<Location>> {
        let buf = self.cached_block(at, cached)?;
        let mut d = Decoder::new(&buf, &self.path, at.offset);
        if self.version != 1 {
            return self.find_v2(&mut d, at, key);
        }
        let count = d.count(24)?;
        for i in 0..count {
            let (token, bytes) = (d.i64()?, d.slice()?);
            if i == 0 && (token, bytes) != (at.first_key.token, &at.first_key.key[..]) {
                return Err(block_start_mismatch(&self.path, at));
            }
            match (token, bytes).cmp(&(key.token, &key.key[..])) {
                std::cmp::Ordering::Less => skip_entry_tail(&mut d)?,
                std::cmp::Ordering::Equal => {
                    return Location::decode_v1(&mut d).map(Some);
                }
                std::cmp::Ordering::Greater => return Ok(None),
            }
        }
        Ok(None)
    }

    /// [`find`](Self::find) in a block of format version 2. Entries do not hold the tokens
    /// their keys imply, so they are compared by key bytes (a token is computed only for a key
    /// that matches, and for the block's first key) and the whole block may be scanned.
    fn find_v2(
        &self,
        d: &mut Decoder<'_>,
        at: &SummaryEntry,
        key: &PartitionKey,
    ) -> Result<Option<Location>> {
        let count = d.count(3)?;
        let mut previous = None;
        for i in 0..count {
            let head = EntryHead::decode(d, previous)?;
            previous = Some(head.position);
            let first = &at.first_key;
            if i == 0 && (head.key != &first.key[..] || head.token() != first.token) {
                return Err(block_start_mismatch(&self.path, at));
            }
            if head.key == &key.key[..] && head.token() == key.token {
                return head.location(d).map(Some);
            }
            head.row_index(d)?;
        }
        Ok(None)
    }

    /// Block `at` from the chunk cache, or else read from disk (and cached if asked to).
    fn cached_block(&self, at: &SummaryEntry, cached: Option<CachedChunks<'_>>) -> Result<Bytes> {
        let Some(cached) = cached else {
            return self.read_block(at).map(Bytes::from);
        };
        if let Some(block) = cached.cache.index_block(cached.sstable, at.offset) {
            return Ok(block);
        }
        let block = Bytes::from(self.read_block(at)?);
        if cached.fill {
            let copy = block.clone();
            cached
                .cache
                .insert_index_block(cached.sstable, at.offset, copy);
        }
        Ok(block)
    }

    /// Block `at` read from disk, its CRC32 verified; the content ends before the checksum.
    fn read_block(&self, at: &SummaryEntry) -> Result<Vec<u8>> {
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
        buf.truncate(buf.len() - 4);
        Ok(buf)
    }
}

fn block_start_mismatch(path: &std::path::Path, at: &SummaryEntry) -> StorageError {
    corrupt(path, at.offset, "block does not start with its Summary key")
}

/// Every entry of a block of format version 2.
fn decode_entries(d: &mut Decoder<'_>) -> Result<Vec<IndexEntry>> {
    let count = d.count(3)?;
    let mut entries = Vec::with_capacity(count);
    let mut previous = None;
    for _ in 0..count {
        let head = EntryHead::decode(d, previous)?;
        previous = Some(head.position);
        let location = head.location(d)?;
        entries.push(IndexEntry {
            key: head.partition_key(),
            location,
        });
    }
    Ok(entries)
}

/// Steps over an entry's position and row index (format version 1).
fn skip_entry_tail(d: &mut Decoder<'_>) -> Result<()> {
    d.u64()?;
    let count = d.count(16)?;
    for _ in 0..count {
        d.slice()?;
        d.slice()?;
        d.u64()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(token: i64, name: &str) -> PartitionKey {
        PartitionKey {
            token,
            key: Bytes::copy_from_slice(name.as_bytes()),
        }
    }

    fn entry(token: i64, name: &str, rows: usize) -> IndexEntry {
        let row_index: Vec<_> = (0..rows)
            .map(|i| RowIndexBlock {
                first: Bytes::from(vec![i as u8]),
                last: Bytes::from(vec![i as u8, 9]),
                offset: 100 * i as u64,
            })
            .collect();
        IndexEntry {
            key: key(token, name),
            location: Location {
                position: (token + 10_000) as u64 * 7, // ascending, as partitions are written
                row_index: row_index.into(),
            },
        }
    }

    /// Three blocks' worth of entries (every third with a row index), written and reopened.
    fn sample(dir: &std::path::Path) -> (Vec<IndexEntry>, Vec<SummaryEntry>, IndexFile) {
        let entries: Vec<_> = (0..300)
            .map(|i| entry(i * 10 - 1500, &format!("k{i}"), (i % 3) as usize))
            .collect();
        let path = dir.join("Index.db");
        let mut writer = IndexWriter::create(path.clone()).unwrap();
        entries.iter().for_each(|e| {
            writer
                .add(&e.key, e.location.position, &e.location.row_index)
                .unwrap()
        });
        let (summary, len) = writer.finish().unwrap();
        (entries, summary, IndexFile::open(path, len).unwrap())
    }

    fn block_for<'a>(summary: &'a [SummaryEntry], key: &PartitionKey) -> &'a SummaryEntry {
        let i = summary.partition_point(|s| s.first_key <= *key);
        &summary[i.saturating_sub(1)]
    }

    #[test]
    fn find_returns_what_the_whole_block_holds() {
        let dir = tempfile::tempdir().unwrap();
        let (entries, summary, index) = sample(dir.path());
        assert_eq!(summary.len(), 300usize.div_ceil(INDEX_BLOCK_ENTRIES));
        for e in &entries {
            let at = block_for(&summary, &e.key);
            assert_eq!(
                index.find(at, &e.key, None).unwrap(),
                Some(e.location.clone())
            );
            assert!(index.block(at).unwrap().contains(e));
        }
    }

    #[test]
    fn find_answers_none_for_absent_keys() {
        let dir = tempfile::tempdir().unwrap();
        let (_, summary, index) = sample(dir.path());
        // Same token as an entry but another key, a token between entries, one past the end.
        for absent in [key(-1500, "zz"), key(-1495, "k0"), key(10_000, "k")] {
            let at = block_for(&summary, &absent);
            assert_eq!(index.find(at, &absent, None).unwrap(), None);
        }
    }

    #[test]
    fn find_rejects_a_block_that_does_not_start_with_its_summary_key() {
        let dir = tempfile::tempdir().unwrap();
        let (entries, summary, index) = sample(dir.path());
        let mut wrong = summary[1].clone();
        wrong.first_key = key(-1, "elsewhere");
        let err = index.find(&wrong, &entries[200].key, None).unwrap_err();
        assert!(err.to_string().contains("does not start"), "{err}");
    }
}
