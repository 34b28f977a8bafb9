//! [`Sstable`]: an open, immutable SSTable. Opening loads and verifies the small components
//! (TOC, CompressionInfo, Summary, Filter, Statistics) and the headers of Data and Index; point
//! reads go filter → key cache or summary → one Index block → row index → only the Data chunks
//! needed, each from the chunk cache or read from disk.

use std::fs;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use parking_lot::Mutex;

use crate::error::{Result, StorageError};
use crate::filter::{KeyRange, ReadFilter};
use crate::sstable::bloom::BloomFilter;
use crate::sstable::caches::ReadCaches;
use crate::sstable::data::CompressionInfo;
use crate::sstable::data_reader::{DataCursor, DataFile};
use crate::sstable::descriptor::{Component, Descriptor};
use crate::sstable::index::{IndexFile, Location};
use crate::sstable::key_cache::next_sstable_id;
use crate::sstable::layout::{decode_header, decode_row, PartitionHeader};
use crate::sstable::salvage::{Loss, Salvage};
use crate::sstable::scan::{KeyScan, PartitionIter};
use crate::sstable::slice_read::PartitionRead;
use crate::sstable::stats::{RepairMark, SstableStats};
use crate::sstable::summary::Summary;
use crate::sstable::toc;
use mutation::partition::{PartitionData, SourceRows};
use mutation::{PartitionKey, Row};

/// An open SSTable; safe to share between threads.
pub struct Sstable {
    desc: Descriptor,
    /// Unique among the SSTables opened by this process (the key and chunk caches' key).
    id: u64,
    pub(crate) data: DataFile,
    pub(crate) index: IndexFile,
    pub(crate) summary: Summary,
    filter: BloomFilter,
    /// Keys the Bloom filter let through that the Index held (true positives) or did not.
    filter_hits: AtomicU64,
    filter_false_positives: AtomicU64,
    stats: SstableStats,
    level: AtomicU32,
    /// The repair state now (Statistics as written may hold an older one).
    repair: Mutex<RepairMark>,
    size_on_disk: u64,
}

/// What an SSTable's Bloom filter did since the SSTable was opened, and its size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FilterStats {
    pub true_positives: u64,
    pub false_positives: u64,
    pub size_bytes: u64,
}

impl Sstable {
    /// Opens a committed SSTable, verifying every component except the bodies of Data chunks
    /// and Index blocks, which are verified when read.
    pub fn open(desc: &Descriptor) -> Result<Sstable> {
        toc::verify(
            &read_component(desc, Component::Toc)?,
            &desc.path(Component::Toc),
            desc.version,
        )?;
        let info = CompressionInfo::decode(
            &read_component(desc, Component::CompressionInfo)?,
            &desc.path(Component::CompressionInfo),
        )?;
        let summary = Summary::decode(
            &read_component(desc, Component::Summary)?,
            &desc.path(Component::Summary),
        )?;
        let filter = BloomFilter::decode(
            &read_component(desc, Component::Filter)?,
            &desc.path(Component::Filter),
        )?;
        let stats = SstableStats::decode(
            &read_component(desc, Component::Statistics)?,
            &desc.path(Component::Statistics),
        )?;
        let index = IndexFile::open(desc.path(Component::Index), summary.index_len)?;
        let numbering = stats.numbering.clone();
        let data = DataFile::open(desc.path(Component::Data), info, numbering)?;
        let size_on_disk = Component::ALL
            .iter()
            .map(|c| fs::metadata(desc.path(*c)).map_or(0, |m| m.len()))
            .sum();
        Ok(Sstable {
            desc: desc.clone(),
            id: next_sstable_id(),
            data,
            index,
            summary,
            filter,
            filter_hits: AtomicU64::new(0),
            filter_false_positives: AtomicU64::new(0),
            level: AtomicU32::new(stats.level),
            repair: Mutex::new(stats.repair()),
            stats,
            size_on_disk,
        })
    }

    pub fn descriptor(&self) -> &Descriptor {
        &self.desc
    }

    pub fn generation(&self) -> u64 {
        self.desc.generation
    }

    /// Statistics as written (see [`level`](Self::level) and [`repair`](Self::repair) for the
    /// current level and repair state).
    pub fn stats(&self) -> &SstableStats {
        &self.stats
    }

    /// Bytes of all components on disk.
    pub fn size_on_disk(&self) -> u64 {
        self.size_on_disk
    }

    /// The Bloom filter's positives since opening (counted by reads the filter let through).
    pub fn filter_stats(&self) -> FilterStats {
        FilterStats {
            true_positives: self.filter_hits.load(Ordering::Relaxed),
            false_positives: self.filter_false_positives.load(Ordering::Relaxed),
            size_bytes: self.filter.size_bytes() as u64,
        }
    }

    /// Data chunks read so far (each one checksummed and decompressed).
    pub fn chunks_read(&self) -> u64 {
        self.data.chunk_reads()
    }

    /// The leveled-compaction level.
    pub fn level(&self) -> u32 {
        self.level.load(Ordering::Relaxed)
    }

    /// Changes the level, rewriting Statistics.
    pub fn set_level(&self, level: u32) -> Result<()> {
        let repair = self.repair.lock();
        self.rewrite_stats(level, *repair)?;
        self.level.store(level, Ordering::Relaxed);
        Ok(())
    }

    /// The repair state.
    pub fn repair(&self) -> RepairMark {
        *self.repair.lock()
    }

    /// Changes the repair state, rewriting Statistics (Cassandra's `mutateRepairedAt`).
    pub fn set_repair(&self, mark: RepairMark) -> Result<()> {
        let mut repair = self.repair.lock();
        self.rewrite_stats(self.level(), mark)?;
        *repair = mark;
        Ok(())
    }

    /// Rewrites Statistics with `level` and `repair` atomically (temporary file, fsync,
    /// rename); the caller holds the repair lock, so two rewrites never interleave.
    fn rewrite_stats(&self, level: u32, repair: RepairMark) -> Result<()> {
        let mut stats = self.stats.clone();
        stats.level = level;
        stats.set_repair(repair);
        write_statistics(&self.desc, &stats)
    }

    /// `false` when `key` is certainly not in this SSTable (outside its key range or rejected
    /// by the Bloom filter).
    pub fn may_contain(&self, key: &PartitionKey) -> bool {
        let in_range = match (&self.stats.first_key, &self.stats.last_key) {
            (Some(first), Some(last)) => first <= key && key <= last,
            _ => false,
        };
        in_range && self.filter.may_contain(&key.key)
    }

    /// The index entry of `key`, if the SSTable holds it; the Index block is looked up in (and,
    /// for point reads, added to) the chunk cache.
    pub(crate) fn find(
        &self,
        key: &PartitionKey,
        caches: ReadCaches<'_>,
    ) -> Result<Option<Location>> {
        let Some(block) = self.summary.block_for(key) else {
            return Ok(None);
        };
        self.index.find(block, key, caches.chunks_of(self.id))
    }

    /// This SSTable's version of partition `key` restricted to `filter`: the partition
    /// deletion, the static row if asked for, the rows of the requested slices and the range
    /// tombstones overlapping them. Tombstones and shadowed data are not resolved.
    pub fn read(&self, key: &PartitionKey, filter: &ReadFilter) -> Result<Option<PartitionData>> {
        if !self.may_contain(key) {
            return Ok(None);
        }
        let found = self.read_cached(key, filter, usize::MAX, ReadCaches::default())?;
        Ok(found.map(|r| r.data))
    }

    /// [`read`](Self::read) of at most `cap` rows (the first in the filter's read order) for a
    /// key [`may_contain`](Self::may_contain) accepted, looking the Index entry up in the key
    /// cache first (and caching it when read from the Index) and the Data chunks in the chunk
    /// cache.
    pub(crate) fn read_cached(
        &self,
        key: &PartitionKey,
        filter: &ReadFilter,
        cap: usize,
        caches: ReadCaches<'_>,
    ) -> Result<Option<SourceRows>> {
        let entry = self.find_cached(key, caches)?;
        let counter = match entry {
            Some(_) => &self.filter_hits,
            None => &self.filter_false_positives,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        match entry {
            Some(location) => {
                let mut cursor = DataCursor::cached(&self.data, caches.chunks_of(self.id));
                PartitionRead::new(&location, filter, cap)
                    .run(&mut cursor, key)
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    /// [`find`](Self::find) through the key cache, when there is one.
    fn find_cached(&self, key: &PartitionKey, caches: ReadCaches<'_>) -> Result<Option<Location>> {
        let Some(cache) = caches.keys else {
            return self.find(key, caches);
        };
        if let Some(location) = cache.get(self.id, key) {
            return Ok(Some(location));
        }
        let found = self.find(key, caches)?;
        if let Some(location) = &found {
            cache.insert(self.id, key, location.clone());
        }
        Ok(found)
    }

    /// Keys in `range`, ascending, read block by block from the Index.
    pub fn scan_keys(&self, range: &KeyRange) -> KeyScan<'_> {
        KeyScan::new(self, range.clone())
    }

    /// Every partition in order, decoded one at a time from the Data stream (for compaction).
    pub fn iter(&self) -> PartitionIter<'_> {
        PartitionIter::new(&self.data)
    }

    /// Every partition that can still be read, in order, what could not recorded in `loss`
    /// (for a scrub).
    pub fn salvage<'a>(&'a self, loss: &'a parking_lot::Mutex<Loss>) -> Salvage<'a> {
        Salvage::new(self, loss)
    }
}

fn read_component(desc: &Descriptor, component: Component) -> Result<Vec<u8>> {
    let path = desc.path(component);
    fs::read(&path).map_err(|e| StorageError::io(&path, e))
}

/// Reads the header record at `position`.
pub(crate) fn read_header(
    cursor: &mut DataCursor<'_>,
    buf: &mut Vec<u8>,
    position: u64,
) -> Result<PartitionHeader> {
    cursor.seek(position);
    let Some(record) = cursor.shared_record(buf)? else {
        return Err(cursor.corrupt("empty partition header"));
    };
    decode_header(&record, cursor.file(), 0, cursor.version())
        .map_err(|e| cursor.relocate(e, position))
}

/// Decodes the next row, or `None` at the end of the partition.
pub(crate) fn next_row(cursor: &mut DataCursor<'_>, buf: &mut Vec<u8>) -> Result<Option<Row>> {
    let position = cursor.position();
    let Some(record) = cursor.shared_record(buf)? else {
        return Ok(None);
    };
    let row = decode_row(&record, cursor.file(), 0, cursor.numbering())
        .map_err(|e| cursor.relocate(e, position))?;
    Ok(Some(row))
}

/// Replaces the Statistics component of `desc` atomically (temporary file, fsync, rename).
pub(crate) fn write_statistics(desc: &Descriptor, stats: &SstableStats) -> Result<()> {
    let (tmp, path) = (
        desc.tmp_path(Component::Statistics),
        desc.path(Component::Statistics),
    );
    let write = || -> std::io::Result<()> {
        use std::io::Write;
        let mut file = fs::File::create(&tmp)?;
        file.write_all(&stats.encode())?;
        file.sync_all()?;
        fs::rename(&tmp, &path)
    };
    write().map_err(|e| StorageError::io(&path, e))?;
    crate::sstable::descriptor::sync_dir(&desc.dir)
}
