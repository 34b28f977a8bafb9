//! The node's local state, the part of a node that holds its storage handle beside the
//! coordinator: what the node records about itself rather than what clients write. It starts
//! the node (`startup`: system tables registered, the commit log replayed, the schema loaded,
//! the node identified) and gives the query processor what it needs of the node through
//! [`query::NodeState`] (`node_state`): `system.local` and the saved prepared statements
//! (`system_local`), the schema kept in `system_schema` and the tables a schema change
//! registers and drops (`schema_store`), truncation, the partition guardrails storage reports
//! to (`partition_watch`), and the in-memory tables virtual-table reads use. Beside it: the
//! peers tables (`peers`), the virtual tables read from storage (`virtual_tables`),
//! `system.size_estimates`/`system.table_estimates` (`size_estimates`) and the node's load
//! (`load_bytes`).
mod load;
mod node_state;
mod partition_watch;
pub mod peers;
mod schema_store;
pub mod size_estimates;
mod startup;
mod system_local;
mod tables;
#[doc(hidden)]
pub mod testing;
pub mod virtual_tables;

pub use load::load_bytes;
pub use peers::PeerInfo;
pub use startup::{start, start_alone};

use types::CqlError;

fn storage_error(e: storage::StorageError) -> CqlError {
    CqlError::Server(format!("storage error: {e}"))
}
