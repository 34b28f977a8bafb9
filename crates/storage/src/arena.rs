//! The memory a memtable keeps its encoded rows in: bump allocation in regions that start at
//! 8 KiB and double up to 1 MiB (as Cassandra's NativeAllocator), all given up at once when the
//! memtable goes. Full-size regions return to a process-wide pool that the next memtables take
//! from, so steady writes neither fault fresh pages in (and have the kernel zero them) nor free
//! their rows one by one on the flush thread. A row that is overwritten keeps its old space
//! until the memtable goes, which the memtable's size counts. Each thread bumps in a shard of
//! its own (`stripes`), and copies its row out of the lock.
//!
//! Written here rather than taken from a crate: rows are allocated from many threads at once,
//! live exactly as long as their memtable, and their regions are recycled across memtables,
//! which is what the bump arenas on crates.io (single-threaded, freed on drop) do not offer.
#![allow(unsafe_code)] // regions are raw allocations that rows are bump-copied into

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

use parking_lot::Mutex;

use crate::stripes::thread_stripe;

const MIN_REGION: usize = 8 * 1024;
const MAX_REGION: usize = 1024 * 1024;
/// Rows larger than this get an allocation of their own rather than waste a region's tail.
const LARGEST_IN_REGION: usize = MAX_REGION / 8;
/// Idle full-size regions kept for the next memtables (64 MiB).
const POOL_REGIONS: usize = 64;

static POOL: Mutex<Vec<Region>> = Mutex::new(Vec::new());

/// Bump allocators per memtable: each thread copies into the shard its id picks, so writers
/// on different cores neither wait for one another nor bounce one lock's cache line.
const SHARDS: usize = 8;

/// A memtable's row memory.
pub(crate) struct Arena {
    shards: [Shard; SHARDS],
}

/// One bump allocator, on a cache line of its own.
#[derive(Default)]
#[repr(align(64))]
struct Shard(Mutex<Bump>);

#[derive(Default)]
struct Bump {
    current: Option<Region>,
    used: usize,
    /// Regions filled, and the allocations of large rows.
    full: Vec<Region>,
}

impl Default for Arena {
    fn default() -> Self {
        Arena {
            shards: std::array::from_fn(|_| Shard::default()),
        }
    }
}

impl Arena {
    /// A copy of `bytes` that lives as long as this arena.
    pub fn copy(&self, bytes: &[u8]) -> ArenaBytes {
        let at = {
            let mut bump = self.shards[thread_stripe(SHARDS)].0.lock();
            if bytes.len() > LARGEST_IN_REGION {
                let own = Region::new(bytes.len());
                let at = own.ptr;
                bump.full.push(own);
                at
            } else {
                bump.reserve(bytes.len())
            }
        };
        // SAFETY: `at` starts `bytes.len()` bytes of a region this arena owns that nothing else
        // was given (the copy needs no lock), and regions never overlap the caller's bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), at.as_ptr(), bytes.len()) };
        ArenaBytes {
            ptr: at,
            len: bytes.len(),
        }
    }
}

impl Bump {
    /// The start of `len` free bytes (at most [`LARGEST_IN_REGION`]) in the current region,
    /// taking a new one, large enough, when it is full.
    #[expect(
        clippy::expect_used,
        reason = "the branch above installs a region when there is none"
    )]
    fn reserve(&mut self, len: usize) -> NonNull<u8> {
        let room = self.current.as_ref().map(|r| r.size - self.used);
        if room.is_none_or(|room| room < len) {
            let doubled = self
                .current
                .as_ref()
                .map_or(MIN_REGION, |r| (r.size * 2).min(MAX_REGION));
            let size = doubled.max(len.next_power_of_two());
            self.full.extend(self.current.replace(Region::take(size)));
            self.used = 0;
        }
        let region = self.current.as_ref().expect("a region was just installed");
        assert!(
            self.used + len <= region.size,
            "a region holds what it is given"
        );
        // SAFETY: `used + len <= size` (just checked), within the region's allocation.
        let at = unsafe { region.ptr.add(self.used) };
        self.used += len;
        at
    }
}

/// One allocation of `size` bytes (at least one).
struct Region {
    ptr: NonNull<u8>,
    size: usize,
}

// SAFETY: a region is plain memory owned by one arena (or the pool) at a time.
unsafe impl Send for Region {}

impl Region {
    /// A region of `size` bytes, from the pool when full-size.
    fn take(size: usize) -> Region {
        let pooled = (size == MAX_REGION).then(|| POOL.lock().pop()).flatten();
        pooled.unwrap_or_else(|| Region::new(size))
    }

    fn new(size: usize) -> Region {
        let layout = Region::layout(size);
        // SAFETY: the layout's size is at least one byte.
        let ptr =
            NonNull::new(unsafe { alloc(layout) }).unwrap_or_else(|| handle_alloc_error(layout));
        Region { ptr, size }
    }

    #[expect(
        clippy::expect_used,
        reason = "a region is at most MAX_REGION bytes, far below isize::MAX"
    )]
    fn layout(size: usize) -> Layout {
        Layout::from_size_align(size.max(1), 1).expect("a region's size fits a layout")
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if self.size == MAX_REGION {
            let mut pool = POOL.lock();
            if pool.len() < POOL_REGIONS {
                pool.push(Region {
                    ptr: self.ptr,
                    size: self.size,
                });
                self.size = 0;
                return;
            }
        }
        if self.size > 0 {
            // SAFETY: allocated in `Region::new` with this layout, and not handed to the pool.
            unsafe { dealloc(self.ptr.as_ptr(), Region::layout(self.size)) };
        }
    }
}

/// Bytes copied into an [`Arena`]. They are read-only and valid as long as the arena is: the
/// memtable that owns the arena keeps them only in its own partitions, which go with it.
pub(crate) struct ArenaBytes {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the bytes are never written after the copy, so sharing them between threads is safe.
unsafe impl Send for ArenaBytes {}
unsafe impl Sync for ArenaBytes {}

impl std::ops::Deref for ArenaBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `len` initialized bytes at `ptr`, in a region the arena holds until it goes,
        // and nothing outlives the arena (see the type's documentation).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_keep_their_bytes_across_regions_and_large_rows() {
        let arena = Arena::default();
        // The first row larger than the first region, rows larger than the next ones, then
        // many small ones, one too large for any region and an empty one.
        let sizes = [MIN_REGION + 1, 5 * MIN_REGION, LARGEST_IN_REGION]
            .into_iter()
            .chain((0..3000).map(|n| (n * 37) % 700))
            .chain([LARGEST_IN_REGION + 1, 0]);
        let copies: Vec<(Vec<u8>, ArenaBytes)> = sizes
            .enumerate()
            .map(|(n, size)| {
                let bytes: Vec<u8> = (0..size).map(|i| (i + n) as u8).collect();
                let copy = arena.copy(&bytes);
                (bytes, copy)
            })
            .collect();
        for (bytes, copy) in &copies {
            assert_eq!(&bytes[..], &copy[..]);
        }
        let bump = arena.shards[thread_stripe(SHARDS)].0.lock();
        assert!(bump.full.len() > 2, "several regions were filled");
        assert!(bump
            .full
            .iter()
            .all(|r| r.size <= MAX_REGION || r.size == LARGEST_IN_REGION + 1));
    }

    #[test]
    fn threads_copy_into_their_own_shards() {
        let arena = Arena::default();
        let copies: Vec<Vec<(u8, ArenaBytes)>> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..4u8)
                .map(|t| {
                    let arena = &arena;
                    scope.spawn(move || {
                        (0..2000)
                            .map(|n| (t, arena.copy(&[t; 100][..n % 100])))
                            .collect()
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        for (t, copy) in copies.iter().flatten() {
            assert!(copy.iter().all(|b| b == t));
        }
        let used = arena
            .shards
            .iter()
            .filter(|s| s.0.lock().current.is_some())
            .count();
        assert!(used >= 2, "threads spread over shards ({used} used)");
    }

    #[test]
    fn full_size_regions_go_back_to_the_pool_for_the_next_arena() {
        let fill = |arena: &Arena| {
            for _ in 0..(3 * MAX_REGION / 1000) {
                arena.copy(&[1; 1000]);
            }
        };
        let arena = Arena::default();
        fill(&arena);
        let ptrs: Vec<usize> = {
            let bump = arena.shards[thread_stripe(SHARDS)].0.lock();
            let full = bump.full.iter().chain(&bump.current);
            full.filter(|r| r.size == MAX_REGION)
                .map(|r| r.ptr.as_ptr() as usize)
                .collect()
        };
        assert!(!ptrs.is_empty());
        drop(arena);
        let next = Arena::default();
        fill(&next);
        let bump = next.shards[thread_stripe(SHARDS)].0.lock();
        let reused = bump.full.iter().chain(&bump.current);
        // Other tests may take pooled regions meanwhile: at least one comes back here.
        assert!(reused
            .into_iter()
            .any(|r| ptrs.contains(&(r.ptr.as_ptr() as usize))));
        assert!(POOL.lock().len() <= POOL_REGIONS);
    }
}
