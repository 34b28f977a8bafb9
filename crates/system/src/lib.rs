//! The node's local system state, the part of a node that holds its storage handle beside the
//! coordinator: what the node records about itself in its system tables rather than what
//! clients write. Now `system.size_estimates` and `system.table_estimates` (`size_estimates`)
//! and the node's load (`load_bytes`); the system and virtual tables, the schema store and its
//! sync, peers and start-up still live in `query` (issue 28 point 1, in progress).
mod load;
pub mod size_estimates;

pub use load::load_bytes;

use types::CqlError;

fn storage_error(e: storage::StorageError) -> CqlError {
    CqlError::Server(format!("storage error: {e}"))
}
