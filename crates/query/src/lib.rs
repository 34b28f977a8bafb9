//! The query processor: analyses CQL statements against the schema and executes them
//! through the coordinator (Cassandra's `cql3` package: QueryProcessor, SelectStatement,
//! ModificationStatement, BatchStatement and the schema statements). What it needs of the node
//! it runs on beside the coordinator's reads and writes it asks through [`NodeState`], which
//! the `system` crate implements over the node's storage.
//!
//! Lightweight transactions: `conditions` analyses IF clauses and evaluates them against the
//! rows read; `cas` turns a conditional statement or batch into one compare-and-set on one
//! partition through the coordinator's Paxos round and answers its `[applied]` rows; a SELECT
//! at SERIAL or LOCAL_SERIAL reads through Paxos (`reads::SerialReader`).
mod assignments;
mod batch;
mod calls;
mod cas;
mod cells;
mod columns;
mod conditions;
mod ddl;
mod describe;
mod dropped;
mod endpoints;
mod exec;
pub mod functions;
mod grouping;
pub mod guardrails;
mod json;
mod modify;
mod multi_column;
mod node;
mod node_state;
mod operand;
mod paging;
mod processor;
pub mod reads;
mod restrictions;
mod schema_follow;
mod schema_sync;
mod select;
mod selection;
mod slices;
mod terms;
mod tombstones;
pub mod trace;
pub mod virtual_tables;

// How values sit in stored rows (keys, collections, row views) is the schema crate's; the
// modules here name it as their own.
use schema::{collections, keys, row_view as rows};

pub use endpoints::RangeReplicas;
pub use guardrails::Limits;
pub use node::{NodeInfo, CQL_VERSION, RELEASE_VERSION};
pub use node_state::NodeState;
pub use processor::{AgreementWait, QueryProcessor};
pub use schema_follow::SchemaLag;
pub use schema_sync::changed_tables;
pub use tombstones::{TombstoneLimits, TombstoneThresholds};
pub use trace::{Tracer, Tracing};
