//! Lightweight transactions: Paxos as Cassandra 5.0 runs it ("Paxos v2"), one leaderless
//! round per operation over a partition's replicas, and the linearizability checker its tests
//! use.
//!
//! - [`Ballot`]s from a hybrid clock ([`BallotGenerator`] over a [`Clock`]) that never goes
//!   backwards, seeded across restarts.
//! - The replica side: a partition's registers ([`PaxosState`]) and their rules, applied by a
//!   [`Replica`] that persists them ([`PaxosStore`]) before it answers and applies commits to
//!   its [`Data`].
//! - The proposer side: [`Proposer::cas`] and [`Proposer::read`] over [`Replicas`], with
//!   quorums over natural and pending replicas, completion of in-progress rounds, read with
//!   prepare, commits folded into the next prepare, randomised back-off, and Cassandra's
//!   outcomes ([`Outcome`], [`PaxosError`]).
//! - [`linearizability`]: a Wing–Gong–Lowe checker with memoisation (as Porcupine), and a
//!   register model.
//!
//! Generic over the data ([`Types`]); the node will decide `mutation` partition updates.
//! See docs/architecture.md ("Lightweight transactions").
mod ballot;
mod error;
mod gather;
pub mod linearizability;
mod messages;
mod metrics;
mod proposer;
mod replica;
mod replicas;
mod state;
mod store;
mod types;

#[cfg(test)]
mod sim;
#[cfg(test)]
mod testing;

pub use ballot::{Ballot, BallotGenerator, Clock, SystemClock};
pub use error::{Outcome, PaxosError};
pub use messages::{Answer, NoReply, Permitted, Prepare, PrepareAnswer, ProposeAnswer};
pub use metrics::Metrics;
pub use proposer::{Config, Proposer};
pub use replica::Replica;
pub use replicas::{Electorate, Replicas};
pub use state::{PaxosState, Promise};
pub use store::{Data, MemoryStore, PaxosStore, StoreError};
pub use types::{Proposal, Types};
