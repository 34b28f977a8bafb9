//! [`KeyCache`]: Cassandra's key cache — a bounded LRU of Index entries (partition position and
//! row index) shared by every SSTable of a node, so that a hot partition's lookup skips the
//! Summary search and the Index block read. Entries are keyed by the SSTable's unique id and
//! the partition key; those of deleted SSTables are never asked for again and age out.
//! The map is a [`ShardedLru`], so readers rarely contend.

use std::mem::size_of;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::sstable::index::{IndexEntry, RowIndexBlock};
use crate::sstable::lru::{CacheStats, Equivalent, ShardedLru};
use mutation::PartitionKey;

/// The header a key's `Bytes` allocates when it is first shared (the map keeps a clone).
const SHARED_HEADER: usize = 4 * size_of::<usize>();

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
        self.lru.get(&KeyRef(sstable, key))
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

/// A key-cache key borrowed from the caller: hashes as the owned `(sstable, key)` does (a
/// reference hashes as what it points at).
#[derive(Hash)]
struct KeyRef<'a>(u64, &'a PartitionKey);

impl Equivalent<(u64, PartitionKey)> for KeyRef<'_> {
    fn equivalent(&self, owned: &(u64, PartitionKey)) -> bool {
        self.0 == owned.0 && *self.1 == owned.1
    }
}

/// The memory behind an entry (the map counts its own): the `Arc`'d index entry, its key's
/// buffer and shared header, and its row index. Measured against the process's memory: 600k
/// entries of 10-byte keys took 200 MiB, which these weights and the map's count (about 350
/// bytes an entry); before, 106 bytes an entry were counted.
fn entry_size(entry: &IndexEntry) -> u64 {
    let blocks: usize = entry
        .row_index
        .iter()
        .map(|b| b.first.len() + b.last.len() + size_of::<RowIndexBlock>())
        .sum();
    let arc = 2 * size_of::<usize>() + size_of::<IndexEntry>();
    (arc + SHARED_HEADER + entry.key.key.len() + blocks) as u64
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
