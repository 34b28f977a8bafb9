//! The mutation and row model that travels between the layers of a node and between nodes:
//! keys, cells, rows, deletions, partition updates and mutations, and their binary form; and
//! the vocabulary of a read that travels with them: what to read (`filter`), counter
//! increments, what a read did (`ReadStats`), and their binary form (`wire`).
//! Query builds mutations and reads, the coordinator routes them, hints keep them, storage
//! applies and answers them.
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
mod read_stats;
mod token_range;
pub mod wire;

pub use counter_update::CounterUpdate;
pub use filter::{KeyRange, PartitionPosition, ReadFilter};
pub use model::*;
pub use names::column_name;
pub use read_stats::ReadStats;
pub use token_range::TokenRange;
