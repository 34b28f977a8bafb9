//! The endpoints' handlers, one module per area; each takes the [`AdminNode`](crate::AdminNode)
//! and a parsed request and returns a body of [`types`].

pub mod auto_repair;
pub mod binary;
pub mod cleanup;
pub mod cluster;
pub mod compaction;
pub mod hints;
pub mod logging;
pub mod operations;
pub mod pools;
pub mod proxy;
pub mod repair;
pub mod repair_lease;
pub mod ring;
pub mod scrub;
pub mod settings;
pub mod snapshots;
pub mod streams;
pub mod tables;
pub mod trace;
pub mod types;
