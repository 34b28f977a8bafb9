//! [`SstableWriter`]: streams partitions in (token, key) order into temporary component files,
//! then commits them with fsync + rename, the TOC last.

use std::fs;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::error::{Result, StorageError};
use crate::sstable::bloom::{hash_key, BloomFilter, DEFAULT_FP_CHANCE};
use crate::sstable::compression::Compression;
use crate::sstable::data::{DataWriter, MAX_CHUNK_LENGTH};
use crate::sstable::descriptor::{remove_if_exists, sync_dir, Component, Descriptor};
use crate::sstable::index::{IndexWriter, RowIndexBlock};
use crate::sstable::layout::{put_header_record, ColumnNumbers, END_MARKER};
use crate::sstable::records::{PartitionRecords, RowRecord};
use crate::sstable::stats::{RepairMark, StatsCollector};
use crate::sstable::summary::Summary;
use crate::sstable::toc;
use crate::sstable::watch::Watcher;
use mutation::partition::PartitionData;
use mutation::row_map::RowMap;
use mutation::PartitionKey;

/// Cassandra's default `chunk_length_in_kb` (16), in bytes.
pub const DEFAULT_CHUNK_LENGTH: usize = 16 * 1024;
/// Rows of a partition per row-index block (Cassandra's `column_index_size`, 64 KiB).
pub const DEFAULT_ROW_INDEX_BLOCK: usize = 64 * 1024;

/// How to write an SSTable.
#[derive(Clone, Debug, PartialEq)]
pub struct WriteOptions {
    pub compression: Compression,
    /// Uncompressed bytes per Data chunk (`chunk_length_in_kb` × 1024).
    pub chunk_length: usize,
    /// `bloom_filter_fp_chance`; 1.0 disables the filter.
    pub bloom_fp_chance: f64,
    /// Uncompressed row bytes per row-index block of large partitions.
    pub row_index_block: usize,
    /// Leveled-compaction level recorded in Statistics.
    pub level: u32,
    /// Repair state recorded in Statistics.
    pub repair: RepairMark,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compression: Compression::default(),
            chunk_length: DEFAULT_CHUNK_LENGTH,
            bloom_fp_chance: DEFAULT_FP_CHANCE,
            row_index_block: DEFAULT_ROW_INDEX_BLOCK,
            level: 0,
            repair: RepairMark::UNREPAIRED,
        }
    }
}

impl WriteOptions {
    fn validate(&self) -> Result<()> {
        if self.chunk_length == 0 || self.chunk_length > MAX_CHUNK_LENGTH {
            return Err(StorageError::Invalid(format!(
                "chunk length {} outside 1..={MAX_CHUNK_LENGTH}",
                self.chunk_length
            )));
        }
        if self.bloom_fp_chance.is_nan() || self.bloom_fp_chance <= 0.0 || self.row_index_block == 0
        {
            return Err(StorageError::Invalid(
                "bloom_filter_fp_chance must be > 0 and the row-index block non-empty".into(),
            ));
        }
        Ok(())
    }
}

/// Writes one SSTable. Dropping it without [`finish`](Self::finish) removes its files.
pub struct SstableWriter {
    desc: Descriptor,
    options: WriteOptions,
    data: Option<DataWriter>,
    index: Option<IndexWriter>,
    key_hashes: Vec<(u64, u64)>,
    stats: StatsCollector,
    /// The last key appended: its token, and its bytes in a buffer reused for every key (a
    /// clone of each key would share and later release its buffer, which showed in flushes).
    last_token: Option<i64>,
    last_key_bytes: Vec<u8>,
    scratch: Vec<u8>,
    /// The column names the rows number.
    numbers: ColumnNumbers,
    committed: bool,
    /// Reports large partitions (see [`SstableWriter::watched`]).
    watcher: Option<Watcher>,
}

impl SstableWriter {
    /// Starts SSTable `generation` in `dir`; fails if that generation already exists.
    pub fn create(dir: &Path, generation: u64, options: WriteOptions) -> Result<SstableWriter> {
        options.validate()?;
        let desc = Descriptor::new(dir, generation);
        let taken = |d: Descriptor| Component::ALL.iter().any(|c| d.path(*c).exists());
        if desc.every_version().any(taken) {
            return Err(StorageError::Invalid(format!(
                "SSTable generation {generation} already exists in {}",
                dir.display()
            )));
        }
        let data = DataWriter::create(
            desc.tmp_path(Component::Data),
            options.compression,
            options.chunk_length,
        );
        let mut writer = SstableWriter {
            desc,
            options,
            data: None,
            index: None,
            key_hashes: Vec::new(),
            stats: StatsCollector::default(),
            last_token: None,
            last_key_bytes: Vec::new(),
            scratch: Vec::new(),
            numbers: ColumnNumbers::default(),
            committed: false,
            watcher: None,
        };
        writer.data = Some(data?);
        writer.index = Some(IndexWriter::create(writer.desc.tmp_path(Component::Index))?);
        Ok(writer)
    }

    /// The writer reporting the partitions it writes past `watcher`'s thresholds.
    pub(crate) fn watched(mut self, watcher: Option<Watcher>) -> SstableWriter {
        self.watcher = watcher;
        self
    }

    pub fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    /// Bytes written to disk so far (Data and Index), for progress reporting.
    pub fn bytes_written(&self) -> u64 {
        let data = self.data.as_ref().map_or(0, |d| d.file_len());
        data + self.index.as_ref().map_or(0, |i| i.bytes_written())
    }

    /// Uncompressed partition bytes appended so far.
    pub fn uncompressed_bytes(&self) -> u64 {
        self.data.as_ref().map_or(0, |d| d.position())
    }

    /// Partitions appended so far.
    pub fn partitions(&self) -> u64 {
        self.key_hashes.len() as u64
    }

    /// Appends a partition; keys must be strictly ascending in (token, key) order.
    pub fn append(&mut self, key: &PartitionKey, partition: &PartitionData) -> Result<()> {
        self.append_records(key, partition)
    }

    /// Appends a partition in any form [`PartitionRecords`] covers (a memtable's, whose rows
    /// are copied in their encoding).
    pub(crate) fn append_records<P: PartitionRecords>(
        &mut self,
        key: &PartitionKey,
        partition: &P,
    ) -> Result<()> {
        if let Some(last) = self.last_key() {
            if (key.token, &key.key[..]) <= last {
                return Err(StorageError::Invalid(format!(
                    "partition keys out of order: token {} after {}",
                    key.token, last.0
                )));
            }
        }
        let (Some(data), Some(index)) = (self.data.as_mut(), self.index.as_mut()) else {
            return Err(StorageError::Invalid("writer already finished".into()));
        };
        let start = data.position();
        self.scratch.clear();
        put_header_record(&mut self.scratch, key, partition.head());
        data.write(&self.scratch)?;
        let row_index = write_rows(
            data,
            partition.rows(),
            (start, self.options.row_index_block),
            &mut self.scratch,
            &mut self.numbers,
        )?;
        index.add(key, start, &row_index)?;
        let size = data.position() - start;
        if let Some(watcher) = &self.watcher {
            let decoded = partition.decoded()?;
            watcher.check(key, &decoded, size, || self.desc.path(Component::Data));
        }
        self.stats
            .add_partition(key, partition.head(), partition.rows(), size)?;
        self.key_hashes.push(hash_key(&key.key));
        self.last_key_bytes.clear();
        self.last_key_bytes.extend_from_slice(&key.key);
        self.last_token = Some(key.token);
        Ok(())
    }

    fn last_key(&self) -> Option<(i64, &[u8])> {
        Some((self.last_token?, &self.last_key_bytes))
    }

    /// Completes the SSTable: writes the remaining components, fsyncs, renames them into
    /// place, then commits by renaming the TOC.
    pub fn finish(mut self) -> Result<Descriptor> {
        let (Some(data), Some(index)) = (self.data.take(), self.index.take()) else {
            return Err(StorageError::Invalid("writer already finished".into()));
        };
        let info = data.finish()?;
        let (blocks, index_len) = index.finish()?;
        let last_key = self.last_key().map(|(token, key)| PartitionKey {
            token,
            key: Bytes::copy_from_slice(key),
        });
        self.stats.set_last_key(last_key.clone());
        let summary = Summary {
            blocks,
            last_key,
            index_len,
        };
        let filter = BloomFilter::from_hashes(&self.key_hashes, self.options.bloom_fp_chance);
        let mut stats = std::mem::take(&mut self.stats).finish(
            info.uncompressed_len,
            info.data_len,
            self.options.level,
            self.options.repair,
        );
        stats.numbering = std::mem::take(&mut self.numbers).into_numbering();
        self.write_component(Component::CompressionInfo, &info.encode())?;
        self.write_component(Component::Summary, &summary.encode())?;
        self.write_component(Component::Filter, &filter.encode())?;
        self.write_component(Component::Statistics, &stats.encode())?;
        self.write_component(Component::Toc, toc::encode(self.desc.version).as_bytes())?;
        self.commit()?;
        Ok(self.desc.clone())
    }

    fn write_component(&self, component: Component, bytes: &[u8]) -> Result<()> {
        write_synced(&self.desc.tmp_path(component), bytes)
    }

    /// Renames every component into place, the TOC last, and syncs the directory.
    fn commit(&mut self) -> Result<()> {
        for component in Component::ALL {
            let (from, to) = (self.desc.tmp_path(component), self.desc.path(component));
            if component == Component::Toc {
                sync_dir(&self.desc.dir)?;
            }
            fs::rename(&from, &to).map_err(|e| StorageError::io(&from, e))?;
        }
        self.committed = true;
        sync_dir(&self.desc.dir)
    }

    /// Abandons the SSTable, removing its temporary files.
    pub fn abort(mut self) {
        self.remove_tmp_files();
    }

    fn remove_tmp_files(&mut self) {
        self.data = None;
        self.index = None;
        for component in Component::ALL {
            let path = self.desc.tmp_path(component);
            if let Err(e) = remove_if_exists(&path) {
                tracing::warn!("could not remove {}: {e}", path.display());
            }
        }
    }
}

impl Drop for SstableWriter {
    fn drop(&mut self) {
        if !self.committed {
            self.remove_tmp_files();
        }
    }
}

/// Writes the row records of `partition` and the end marker; returns its row index (empty when
/// the rows fit in one block).
fn write_rows<R: RowRecord>(
    data: &mut DataWriter,
    rows: &RowMap<R>,
    (start, block_size): (u64, usize),
    scratch: &mut Vec<u8>,
    numbers: &mut ColumnNumbers,
) -> Result<Vec<RowIndexBlock>> {
    let mut blocks = Vec::new();
    // The block being written: its first row's clustering and position (borrowed: cloned
    // only when the block closes).
    let mut open: Option<(&Bytes, u64)> = None;
    let mut last = &Bytes::new();
    for (clustering, row) in rows.iter() {
        let position = data.position();
        let (_, block_start) = open.get_or_insert((clustering, position));
        let block_start = *block_start;
        scratch.clear();
        row.put_record(scratch, numbers)?;
        data.write(scratch)?;
        last = clustering;
        if data.position() - block_start >= block_size as u64 {
            close_block(&mut blocks, open.take(), last, start);
        }
    }
    if !blocks.is_empty() {
        // A partition in one block has no row index: its block is not built.
        close_block(&mut blocks, open.take(), last, start);
    }
    data.write(&END_MARKER)?;
    if blocks.len() <= 1 {
        blocks.clear();
    }
    Ok(blocks)
}

fn close_block(
    blocks: &mut Vec<RowIndexBlock>,
    open: Option<(&Bytes, u64)>,
    last: &Bytes,
    start: u64,
) {
    if let Some((first, position)) = open {
        blocks.push(RowIndexBlock {
            first: first.clone(),
            last: last.clone(),
            offset: position - start,
        });
    }
}

fn write_synced(path: &PathBuf, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut file = fs::File::create(path).map_err(|e| StorageError::io(path, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| StorageError::io(path, e))
}
