//! [`KeyCache`]: Cassandra's key cache — a bounded LRU of Index entries (partition position and
//! row index) shared by every SSTable of a node, so that a hot partition's lookup skips the
//! Summary search and the Index block read. Entries are keyed by the SSTable's unique id and
//! the partition key; those of deleted SSTables are never asked for again and age out.
//! The map is a [`ShardedLru`], so readers rarely contend.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::sstable::index::IndexEntry;
use crate::sstable::lru::{CacheStats, ShardedLru};
use mutation::PartitionKey;

/// Bytes counted per entry beside its key and row index (map slot, links, `Arc`).
const ENTRY_OVERHEAD: u64 = 96;
/// Bytes counted per row-index block beside its clustering bounds.
const BLOCK_OVERHEAD: u64 = 48;

/// Size and effectiveness of the key cache.
pub type KeyCacheStats = CacheStats;

/// The node's key cache. Keys hash with foldhash (seeded per process, so clients cannot
/// choose colliding keys): SipHash, the standard map's, cost more than the rest of a hit.
pub struct KeyCache {
    lru: ShardedLru<(u64, PartitionKey), Arc<IndexEntry>, foldhash::fast::RandomState>,
}

impl KeyCache {
    /// A cache holding at most about `capacity_bytes`; 0 disables it.
    pub fn new(capacity_bytes: u64) -> KeyCache {
        KeyCache {
            lru: ShardedLru::new(capacity_bytes),
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.lru.is_enabled()
    }

    /// The cached entry of `key` in SSTable `sstable`, counting a hit or a miss.
    pub(crate) fn get(&self, sstable: u64, key: &PartitionKey) -> Option<Arc<IndexEntry>> {
        self.lru.get(&(sstable, key.clone()))
    }

    /// Caches the entry of its key in SSTable `sstable`.
    pub(crate) fn insert(&self, sstable: u64, entry: Arc<IndexEntry>) {
        let size = entry_size(&entry);
        self.lru.insert((sstable, entry.key.clone()), entry, size);
    }

    pub fn stats(&self) -> KeyCacheStats {
        self.lru.stats()
    }
}

fn entry_size(entry: &IndexEntry) -> u64 {
    let blocks: u64 = entry
        .row_index
        .iter()
        .map(|b| (b.first.len() + b.last.len()) as u64 + BLOCK_OVERHEAD)
        .sum();
    ENTRY_OVERHEAD + entry.key.key.len() as u64 + blocks
}

/// Unique ids for open SSTables, the first half of key-cache and chunk-cache keys; never reused,
/// so the entries of deleted SSTables simply age out.
pub(crate) fn next_sstable_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn entry(token: i64) -> Arc<IndexEntry> {
        Arc::new(IndexEntry {
            key: PartitionKey {
                token,
                key: Bytes::from(token.to_be_bytes().to_vec()),
            },
            position: token as u64,
            row_index: Vec::new(),
        })
    }

    #[test]
    fn cache_counts_hits_and_misses_and_stays_bounded() {
        let cache = KeyCache::new(64 * 1024);
        let key = entry(7).key.clone();
        assert!(cache.get(1, &key).is_none());
        cache.insert(1, entry(7));
        assert_eq!(cache.get(1, &key).map(|e| e.position), Some(7));
        assert!(cache.get(2, &key).is_none(), "another SSTable");
        for t in 0..100_000 {
            cache.insert(1, entry(t));
        }
        let stats = cache.stats();
        assert_eq!((stats.hits, stats.misses), (1, 2));
        assert!(stats.size_bytes <= 64 * 1024, "{stats:?}");
        assert!(stats.entries > 100, "{stats:?}");
    }

    #[test]
    fn a_zero_capacity_cache_is_disabled() {
        let cache = KeyCache::new(0);
        assert!(!cache.is_enabled());
        cache.insert(1, entry(1));
        assert_eq!(cache.stats().entries, 0);
    }
}
