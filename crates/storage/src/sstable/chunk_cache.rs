//! [`ChunkCache`]: Cassandra's chunk cache (`file_cache_size`) — a bounded LRU of decompressed,
//! checksum-verified Data chunks and Index blocks shared by every SSTable of a node, so that
//! repeated reads of a hot partition, or of its Index block after a key-cache miss, skip the
//! `pread`, the CRC32 and the decompression. Entries are keyed by the SSTable's unique id and
//! the chunk's index or the block's offset; ids are never reused, so the entries of deleted
//! SSTables are never asked for again and age out.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;

use crate::sstable::lru::{CacheStats, IntHashBuilder, ShardedLru};

/// Bytes counted per chunk beside its data and the map's own (the header of its shared
/// buffer).
const BUFFER_HEADER: u64 = 32;
/// Marks an Index block's key (its offset) apart from a Data chunk's (its index).
const INDEX_BLOCK: u64 = 1 << 63;

/// Size and effectiveness of the chunk cache.
pub type ChunkCacheStats = CacheStats;

/// The node's chunk cache.
pub struct ChunkCache {
    lru: ShardedLru<(u64, u64), Bytes, IntHashBuilder>,
    miss_nanos: AtomicU64,
}

impl ChunkCache {
    /// A cache holding at most about `capacity_bytes` of chunks; 0 disables it.
    pub fn new(capacity_bytes: u64) -> ChunkCache {
        ChunkCache {
            lru: ShardedLru::new(capacity_bytes),
            miss_nanos: AtomicU64::new(0),
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.lru.is_enabled()
    }

    /// The cached chunk `chunk` of SSTable `sstable`, counting a hit or a miss.
    pub(crate) fn get(&self, sstable: u64, chunk: usize) -> Option<Bytes> {
        self.lru.get(&(sstable, chunk as u64))
    }

    /// Caches chunk `chunk` of SSTable `sstable` (decompressed and verified).
    pub(crate) fn insert(&self, sstable: u64, chunk: usize, data: Bytes) {
        let weight = data.len() as u64 + BUFFER_HEADER;
        self.lru.insert((sstable, chunk as u64), data, weight);
    }

    /// The cached Index block at `offset` of SSTable `sstable` (verified, checksum stripped).
    pub(crate) fn index_block(&self, sstable: u64, offset: u64) -> Option<Bytes> {
        self.lru.get(&(sstable, INDEX_BLOCK | offset))
    }

    /// Caches the Index block at `offset` of SSTable `sstable`.
    pub(crate) fn insert_index_block(&self, sstable: u64, offset: u64, block: Bytes) {
        let weight = block.len() as u64 + BUFFER_HEADER;
        self.lru
            .insert((sstable, INDEX_BLOCK | offset), block, weight);
    }

    /// Counts the time a missed chunk took to read, verify and decompress.
    pub(crate) fn record_miss(&self, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.miss_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    pub fn stats(&self) -> ChunkCacheStats {
        ChunkCacheStats {
            miss_nanos: self.miss_nanos.load(Ordering::Relaxed),
            ..self.lru.stats()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(fill: u8) -> Bytes {
        Bytes::from(vec![fill; 4096])
    }

    #[test]
    fn a_cached_chunk_is_a_hit() {
        let cache = ChunkCache::new(1 << 20);
        assert!(cache.is_enabled());
        assert_eq!(cache.get(1, 0), None);
        cache.insert(1, 0, chunk(7));
        assert_eq!(cache.get(1, 0), Some(chunk(7)));
        assert_eq!(cache.get(2, 0), None, "another SSTable");
        assert_eq!(cache.get(1, 1), None, "another chunk");
        let stats = cache.stats();
        assert_eq!((stats.hits, stats.misses, stats.entries), (1, 3, 1));
        let map_entry = ShardedLru::<(u64, u64), Bytes, IntHashBuilder>::ENTRY_COST;
        assert_eq!(stats.size_bytes, 4096 + BUFFER_HEADER + map_entry);
        cache.record_miss(Duration::from_micros(3));
        assert_eq!(cache.stats().miss_nanos, 3_000);
    }

    #[test]
    fn the_cache_stays_within_its_capacity() {
        let cache = ChunkCache::new(256 * 1024);
        for i in 0..1_000 {
            cache.insert(1, i, chunk(i as u8));
        }
        let stats = cache.stats();
        assert!(stats.size_bytes <= 256 * 1024, "{stats:?}");
        assert!(stats.entries >= 16, "{stats:?}");
        assert_eq!(
            cache.get(1, 999),
            Some(chunk(999u32 as u8)),
            "the newest stays"
        );
    }

    #[test]
    fn a_zero_capacity_cache_is_disabled() {
        let cache = ChunkCache::new(0);
        assert!(!cache.is_enabled());
        cache.insert(1, 0, chunk(1));
        assert_eq!(cache.get(1, 0), None);
        assert_eq!(cache.stats().entries, 0);
    }
}
