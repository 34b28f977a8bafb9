//! The seam between node operations and data movement: the streaming service implements
//! [`RangeMover`]; node operations hand it what must move and wait for it.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;

use mutation::TokenRange;

/// Some ranges of one keyspace copied from `source` into `target` (either may be this node,
/// or neither: removenode has a gaining node pull from a surviving replica).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub keyspace: String,
    pub source: IpAddr,
    pub target: IpAddr,
    pub ranges: Vec<TokenRange>,
}

/// Why data moves, named as Cassandra names its stream operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A joining or replacing node fetches its ranges.
    Bootstrap,
    /// A decommissioning node sends its ranges.
    Unbootstrap,
    /// The new replicas of a removed node's ranges fetch them from the survivors.
    RestoreReplicaCount,
}

impl Purpose {
    pub fn name(self) -> &'static str {
        match self {
            Purpose::Bootstrap => "Bootstrap",
            Purpose::Unbootstrap => "Unbootstrap",
            Purpose::RestoreReplicaCount => "Restore replica count",
        }
    }
}

/// What a move resolves to: done, or why not (the operation stops there and can be resumed).
pub type MoveFuture<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// About how many bytes some transfers would copy, or why that is not known.
pub type EstimateFuture<'a> = Pin<Box<dyn Future<Output = Result<u64, String>> + Send + 'a>>;

/// Moves the data of token ranges between nodes.
pub trait RangeMover: Send + Sync {
    /// Copies every table of each transfer's keyspace, for its ranges, from its source into
    /// its target; resolves once every target holds its data durably.
    fn transfer(&self, purpose: Purpose, transfers: Vec<Transfer>) -> MoveFuture<'_>;

    /// About how many bytes `transfers` would copy, as their sources tell (0 for a mover that
    /// cannot tell).
    fn estimate(&self, _transfers: Vec<Transfer>) -> EstimateFuture<'_> {
        Box::pin(async { Ok(0) })
    }
}
