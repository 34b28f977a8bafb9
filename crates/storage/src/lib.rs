//! Commit log, memtables, storage engine traits.
