//! Column names as `Bytes` that cost nothing to clone or drop. A write names every column it
//! sets, and the name travels with the cell into the commit log and the memtable; a name
//! copied per write costs two allocations (the copy, then the header `Bytes` adds when it is
//! first shared), atomic reference counting and, at flush, frees from another thread. Here each
//! distinct name is stored once for the life of the process (schema names are few, and a
//! dropped column's name stays behind: a few bytes), and each thread looks names up in its own
//! cache, so no lock is taken on the write path once a name has been seen.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use bytes::Bytes;

/// Every name interned so far, shared by all threads.
static INTERNED: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());

thread_local! {
    static CACHE: RefCell<HashMap<Box<str>, Bytes>> = RefCell::new(HashMap::new());
}

/// The bytes of column name `name`, static for the life of the process.
pub fn column_name(name: &str) -> Bytes {
    CACHE.with(|cache| {
        if let Some(bytes) = cache.borrow().get(name) {
            return bytes.clone();
        }
        let bytes = Bytes::from_static(intern(name).as_bytes());
        cache.borrow_mut().insert(name.into(), bytes.clone());
        bytes
    })
}

fn intern(name: &str) -> &'static str {
    let mut interned = INTERNED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(known) = interned.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.into());
    interned.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_stored_once_for_every_thread() {
        let here = column_name("interned_column");
        let there = std::thread::spawn(|| column_name("interned_column"))
            .join()
            .unwrap();
        assert_eq!(here, Bytes::from_static(b"interned_column"));
        assert_eq!(here.as_ptr(), there.as_ptr());
        assert_ne!(column_name("other_column").as_ptr(), here.as_ptr());
    }
}
