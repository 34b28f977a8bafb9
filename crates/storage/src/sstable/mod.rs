//! Immutable sorted string tables: the versioned on-disk format (see `docs/sstable-format.md`),
//! the [`SstableWriter`] and the [`Sstable`] reader.
//!
//! An SSTable generation in a table directory is a set of components — Data (compressed,
//! checksummed chunks of the partition stream), CompressionInfo (chunk offsets), Index (key →
//! position, with row indexes of large partitions), Summary (sparse in-memory index), Filter
//! (Bloom filter), Statistics and TOC (the commit point). [`list`] finds the complete ones.

mod bloom;
mod caches;
mod chunk_cache;
mod compression;
mod data;
mod data_reader;
mod descriptor;
mod format;
mod histogram;
mod index;
mod key_cache;
mod layout;
mod lru;
mod reader;
pub(crate) mod records;
mod salvage;
mod scan;
mod slice_read;
mod source;
mod stats;
mod summary;
mod toc;
mod verify;
mod watch;
mod writer;

#[cfg(test)]
mod tests;

pub use bloom::{BloomFilter, DEFAULT_FP_CHANCE};
pub use caches::Caches;
pub(crate) use caches::ReadCaches;
pub use chunk_cache::{ChunkCache, ChunkCacheStats};
pub use compression::Compression;
pub use data::MAX_CHUNK_LENGTH;
pub(crate) use descriptor::sync_dir;
pub use descriptor::{list, parse_stream_name, stream_name, Component, Descriptor};
pub use format::{FORMAT_VERSION, VERSION_TAG};
pub use histogram::{EstimatedHistogram, StreamingHistogram};
pub use index::INDEX_BLOCK_ENTRIES;
pub use key_cache::{KeyCache, KeyCacheStats};
pub use lru::CacheStats;
pub use reader::{FilterStats, Sstable};
pub use salvage::{Loss, Salvage};
pub use scan::{KeyScan, PartitionIter, PartitionStream};
pub use stats::{ClusteringRange, RepairMark, RowNumbering, SstableStats};
pub(crate) use watch::Watcher;
pub use watch::{PartitionWatch, WatchSlot, WatchThresholds, WrittenCollection, WrittenPartition};
pub use writer::{SstableWriter, WriteOptions, DEFAULT_CHUNK_LENGTH, DEFAULT_ROW_INDEX_BLOCK};
