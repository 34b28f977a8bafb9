//! The mutation and row model that travels between the layers of a node and between nodes:
//! keys, cells, rows, deletions, partition updates and mutations, and their binary form.
//! Query builds mutations, the coordinator routes them, hints keep them, storage applies them.
pub mod codec;
pub mod counter_context;
mod model;
mod names;

pub use model::*;
pub use names::column_name;
