//! The node-wide caches an SSTable read goes through: [`Caches`] is what an engine holds,
//! [`ReadCaches`] what one read borrows — point reads fill the chunk cache, scans only look
//! chunks up so that a long scan does not flush it.

use std::sync::Arc;

use crate::sstable::chunk_cache::ChunkCache;
use crate::sstable::key_cache::KeyCache;

/// The caches shared by every table of a node (`None`: not cached).
#[derive(Clone, Default)]
pub struct Caches {
    pub keys: Option<Arc<KeyCache>>,
    pub chunks: Option<Arc<ChunkCache>>,
}

impl Caches {
    /// For point reads: Index entries and Data chunks read from disk are cached.
    pub(crate) fn point_read(&self) -> ReadCaches<'_> {
        ReadCaches {
            keys: self.keys.as_deref().filter(|c| c.is_enabled()),
            chunks: self.chunks.as_deref().filter(|c| c.is_enabled()),
            fill_chunks: true,
        }
    }

    /// For scans: like [`point_read`](Self::point_read), but Data chunks are only looked up.
    pub(crate) fn scan(&self) -> ReadCaches<'_> {
        ReadCaches {
            fill_chunks: false,
            ..self.point_read()
        }
    }
}

/// The caches one read uses; `Default` uses none.
#[derive(Clone, Copy, Default)]
pub(crate) struct ReadCaches<'a> {
    pub keys: Option<&'a KeyCache>,
    pub chunks: Option<&'a ChunkCache>,
    /// Whether Data chunks read from disk are added to the chunk cache.
    pub fill_chunks: bool,
}

impl<'a> ReadCaches<'a> {
    /// The chunk cache as seen by the reader of SSTable `sstable`.
    pub fn chunks_of(&self, sstable: u64) -> Option<CachedChunks<'a>> {
        self.chunks.map(|cache| CachedChunks {
            cache,
            sstable,
            fill: self.fill_chunks,
        })
    }
}

/// One SSTable's chunks in the chunk cache, as a Data cursor uses them.
#[derive(Clone, Copy)]
pub(crate) struct CachedChunks<'a> {
    pub cache: &'a ChunkCache,
    pub sstable: u64,
    /// Whether chunks read from disk are added.
    pub fill: bool,
}
