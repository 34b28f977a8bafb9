//! The mutation and row model that travels between the layers of a node and between nodes:
//! keys, cells, rows, deletions, partition updates and mutations, and their binary form; and
//! the vocabulary of a read that travels with them: what to read (`filter`), counter
//! increments, what a read did (`ReadStats`), and their binary form (`wire`).
//! Query builds mutations and reads, the coordinator routes them, hints keep them, storage
//! applies and answers them.
pub mod clock;
pub mod codec;
pub mod counter_context;
mod counter_update;
pub mod filter;
mod model;
mod names;
mod read_stats;
pub mod wire;

pub use counter_update::CounterUpdate;
pub use filter::{KeyRange, PartitionPosition, ReadFilter};
pub use model::*;
pub use names::column_name;
pub use read_stats::ReadStats;
