//! Storage for Helenus: the schema-agnostic data model, reconciliation, memtables, the per-table
//! engine trait and the commit log, tied together by [`Storage`].

pub mod commitlog;
pub mod compaction;
pub mod engine;
pub mod error;
pub mod filter;
pub mod model;
pub mod sstable;

mod codec;
mod counter;
mod memtable;
mod partition;
mod reconcile;
mod resolve;
mod storage;

pub use commitlog::CommitlogSync;
pub use counter::CounterUpdate;
pub use engine::{MemtableEngine, TableEngine};
pub use error::{Result, StorageError};
pub use filter::{KeyRange, PartitionPosition, ReadFilter};
pub use model::*;
pub use storage::{ReplayStats, Storage, StorageConfig};
