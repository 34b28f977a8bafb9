//! The query processor: analyses CQL statements against the schema and executes them
//! through the coordinator (Cassandra's `cql3` package: QueryProcessor, SelectStatement,
//! ModificationStatement, BatchStatement and the schema statements).
mod assignments;
mod batch;
mod calls;
mod cells;
mod columns;
mod ddl;
mod describe;
mod dropped;
mod endpoints;
mod exec;
pub mod functions;
mod grouping;
pub mod guardrails;
mod json;
mod local;
mod modify;
mod multi_column;
mod operand;
mod paging;
mod peers;
mod processor;
mod restrictions;
mod schema_follow;
mod schema_store;
mod schema_sync;
mod select;
mod selection;
mod slices;
mod terms;
#[doc(hidden)]
pub mod testing;
mod tombstones;
pub mod trace;
pub mod virtual_tables;
#[cfg(test)]
mod where_tests;

// How values sit in stored rows (keys, collections, row views) is the schema crate's; the
// modules here name it as their own.
use schema::{collections, keys, row_view as rows};

pub use endpoints::RangeReplicas;
pub use guardrails::Limits;
pub use local::{NodeInfo, RELEASE_VERSION};
pub use peers::PeerInfo;
pub use processor::{AgreementWait, QueryProcessor};
pub use schema_follow::SchemaLag;
pub use tombstones::TombstoneLimits;
pub use trace::{Tracer, Tracing};
