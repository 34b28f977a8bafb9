//! The storage proxy, in two sides. Every read and write a client makes goes through the
//! coordinator side; every request another node's coordinator sends lands on the replica side.
//!
//! - `coordinator/` owns the paths a coordinator runs: it maps each keyspace to its replication
//!   strategy (`strategies`, from each schema the query layer installs), finds the replicas of
//!   a token on the ring, checks the consistency level against the live ones (answering
//!   Unavailable as Cassandra does) and drives the request: `write`, `read`, `range` (with
//!   `gather` and `speculation` under the reads), `counters` (including the leader a counter
//!   update goes to) and `batchlog` (logged batches and their replay). A single node is a
//!   one-member ring whose only replica is local storage.
//! - `replica/` owns the verb handlers a replica runs for other nodes' coordinators: mutations,
//!   reads, range reads, counter updates to lead, batchlog stores and removals.
//! - Both use the shared modules: `failures` (every mapping of a failure: storage errors to
//!   Cassandra's reason codes and client errors, replica answers to outcomes), `messages` (the
//!   verbs' payloads), `batches` (the `system.batches` table), the ring view (`topology`,
//!   `replicas`, `responses`, `consistency`), `remote`, `trace`, the metrics and timeouts.
//!
//! The replica side may use the coordinator side (a counter leader replicates through the
//! write path); the coordinator side never uses the replica side, and no files import each
//! other in a circle (`tests/no_circles.rs`). This root only declares and re-exports.
mod batches;
mod consistency;
mod coordinator;
mod failures;
#[cfg(feature = "sim-faults")]
pub mod faults;
mod latency;
mod messages;
pub mod metrics;
mod paxos;
pub mod proxy_metrics;
mod remote;
mod replica;
mod replicas;
mod responses;
mod slow;
mod timeouts;
mod topology;
pub mod trace;

pub use consistency::{block_for, validate_for_read, validate_for_write};
pub use coordinator::batchlog::{state::BatchlogStats, BatchGroups};
pub use coordinator::cas::{CasOutcome, CasScope};
pub use coordinator::counters::CounterWrite;
pub use coordinator::read::ReadScope;
pub use coordinator::speculation::{ReadPolicy, SpeculativeRetry};
pub use coordinator::Coordinator;
pub use failures::Replica;
pub use metrics::Metrics;
pub use proxy_metrics::RequestKind;
pub use remote::{EpochSource, EpochWaiter, Remote};
pub use replicas::ReplicaPlan;
pub use responses::Requirement;
pub use slow::SlowQueries;
pub use timeouts::{LiveTimeouts, TimeoutKind, Timeouts};
pub use topology::{Liveness, Topology};
pub use trace::{Trace, TraceEvent, TraceSink};
