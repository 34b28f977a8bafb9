//! The server's memory allocator: mimalloc, told to keep the memory it frees.
//!
//! By default mimalloc hands pages freed for a second back to the OS (`purge_delay`). A node's
//! memory cycles: a memtable fills, is flushed and freed, and the next one fills the same amount
//! again. Handing those pages back only to fault them in again (zeroed by the kernel) cost about
//! a tenth of the server's CPU per write in `helenus stress write` (page faults and
//! `clear_page` in the profile). Like a JVM heap sized once, the pages stay with the process; what
//! the node may use is bounded by its memtable, cache and in-flight request settings.
#![allow(unsafe_code)] // mimalloc's option calls

use std::os::raw::{c_int, c_long};

/// mimalloc rather than glibc's malloc: under a 2M-row write load glibc's malloc led the
/// server's CPU profile and its arenas kept far more resident than was in use.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_t` (v2 and v3 alike): milliseconds before
/// freed memory is returned to the OS, -1 for never. `libmimalloc-sys` exports no constant for it.
const PURGE_DELAY: c_int = 15;

/// Keeps freed memory in the process for reuse (see the module comment), unless the
/// environment sets mimalloc's own `MIMALLOC_PURGE_DELAY`. Call before the server starts its
/// threads.
pub fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        set(PURGE_DELAY, -1);
    }
}

fn set(option: c_int, value: c_long) {
    // SAFETY: mi_option_set only stores the value in mimalloc's option table; any option index
    // below mimalloc's `_mi_option_last` is valid, and 15 is.
    unsafe { libmimalloc_sys::mi_option_set(option, value) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(option: c_int) -> c_long {
        // SAFETY: reads mimalloc's option table (see `set`).
        unsafe { libmimalloc_sys::mi_option_get(option) }
    }

    #[test]
    fn the_option_set_is_the_purge_delay() {
        // mimalloc's documented default purge delay is 1000 ms (v3), 10 ms (v2): index 15 is it,
        // not a neighbour (numa nodes: 0, os tag: 100).
        assert!(matches!(get(PURGE_DELAY), 10 | 1000));
        set(PURGE_DELAY, -1);
        assert_eq!(get(PURGE_DELAY), -1);
    }
}
