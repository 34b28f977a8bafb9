//! The mutation and row model that travels between the layers of a node and between nodes:
//! keys, cells, rows, deletions, partition updates and mutations, token ranges, and their
//! binary form; and the vocabulary of a read that travels with them: what to read (`filter`),
//! counter increments, what a read did (`ReadStats`), and their binary form (`wire`).
//! Query builds mutations and reads, the coordinator routes them, hints keep them, storage
//! applies and answers them.
//!
//! The answers of reads that cross nodes live here too, with the rules that combine them, so
//! that the coordinator, Paxos and repair need nothing of storage's to read:
//! - `partition`: [`PartitionData`], one source's unresolved version of a partition (rows,
//!   tombstones, deletions; rows in a [`RowMap`]), and [`SourceRows`], a capped answer;
//!   `scan`: a replica's answer to a range scan and the merge of several (`ScanSource`,
//!   `ScanRound`); `wire` encodes them and digests an answer.
//! - `reconcile`: Cassandra's reconciliation of cells and rows (counter cells in
//!   `counter_context`); `resolve`: the live view of reconciled data at a time; `rounds`: reads
//!   limited to a number of rows, in rounds over sources or replicas; `shadow`: data another
//!   version makes obsolete (garbage collection, canonical digests); `read_repair`: what a
//!   stale replica lacks.
//!
//! The binary form (`codec`) is checked on decode (no panic on bad bytes): compact rows with
//! varint lengths and per-cell fields only when they differ from the row's (legacy rows still
//! read), and the *numbered* form SSTables store — column numbers from a per-SSTable name table
//! instead of names, values of a column's usual length without their length, the row marker's
//! timestamp from a per-SSTable base. The commit log, SSTables and internode messages all use it.
//! Every crate names the model as `mutation::…`; `storage` does not re-export it.
pub mod clock;
pub mod codec;
pub mod counter_context;
mod counter_update;
pub mod filter;
mod model;
mod names;
pub mod partition;
mod read_repair;
mod read_stats;
pub mod reconcile;
pub mod resolve;
pub mod rounds;
pub mod row_map;
pub mod scan;
pub mod shadow;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod token_range;
pub mod wire;

pub use counter_update::CounterUpdate;
pub use filter::{KeyRange, PartitionPosition, ReadFilter};
pub use model::*;
pub use names::column_name;
pub use partition::{PartitionData, SourceRows};
pub use read_stats::ReadStats;
pub use row_map::RowMap;
pub use token_range::{token_in, token_intersection, tokens_overlap, TokenRange};
