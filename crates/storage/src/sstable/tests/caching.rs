//! Reads through the node's caches: a repeated point read takes its Data chunks from the chunk
//! cache (no chunk read from disk), a key-cache miss takes its Index block from it, a scan
//! looks chunks up without adding any, and a full iteration (compaction) reads around the
//! cache.

use std::sync::Arc;

use super::{flush, key, open, sample_memtable};
use crate::filter::ReadFilter;
use crate::sstable::{Caches, ChunkCache, KeyCache, Sstable, WriteOptions};

fn caches() -> Caches {
    Caches {
        keys: Some(Arc::new(KeyCache::new(1 << 20))),
        chunks: Some(Arc::new(ChunkCache::new(1 << 20))),
    }
}

fn sample_sstable(dir: &std::path::Path) -> Sstable {
    open(&flush(&sample_memtable(), dir, 1, WriteOptions::default()))
}

#[test]
fn a_repeated_point_read_reads_no_chunk_from_disk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sstable = sample_sstable(dir.path());
    let caches = caches();
    let (k, filter) = (key(7, "k3"), ReadFilter::all());
    let first = sstable
        .read_cached(&k, &filter, usize::MAX, caches.point_read())
        .expect("read");
    let after_first = sstable.chunks_read();
    assert!(after_first > 0);
    let second = sstable
        .read_cached(&k, &filter, usize::MAX, caches.point_read())
        .expect("read");
    assert_eq!(first, second);
    assert_eq!(sstable.chunks_read(), after_first, "served from the cache");
    let stats = caches.chunks.as_ref().expect("chunk cache").stats();
    assert_eq!(
        stats.misses,
        after_first + 1,
        "the Data chunks and the Index block"
    );
    assert_eq!(stats.entries, after_first + 1);
    assert!(stats.hits >= after_first);
}

#[test]
fn a_key_cache_miss_takes_its_index_block_from_the_chunk_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sstable = sample_sstable(dir.path());
    let caches = caches();
    let chunks = caches.chunks.as_ref().expect("chunk cache");
    let filter = ReadFilter::all();
    let first = sstable.read_cached(&key(7, "k3"), &filter, usize::MAX, caches.point_read());
    assert!(first.expect("read").is_some());
    let before = chunks.stats();
    // Another key of the same (one-block) Index: not in the key cache.
    let other = sstable.read_cached(&key(-50, "k0"), &filter, usize::MAX, caches.point_read());
    assert!(other.expect("read").is_some());
    let after = chunks.stats();
    assert_eq!(
        after.entries, before.entries,
        "nothing new was read: {after:?}"
    );
    assert_eq!(after.misses, before.misses, "{after:?}");
    let keys = caches.keys.as_ref().expect("key cache").stats();
    assert_eq!((keys.misses, keys.entries), (2, 2));
}

#[test]
fn scans_and_iteration_do_not_fill_the_chunk_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sstable = sample_sstable(dir.path());
    let caches = caches();
    let found = sstable
        .read_cached(&key(7, "k3"), &ReadFilter::all(), usize::MAX, caches.scan())
        .expect("read");
    assert!(found.is_some());
    assert_eq!(sstable.iter().count(), 6, "every partition");
    let stats = caches.chunks.as_ref().expect("chunk cache").stats();
    assert!(stats.misses > 0, "the scan looked chunks up: {stats:?}");
    assert_eq!(stats.entries, 0, "{stats:?}");
}
