//! The seam between node operations and data movement: the streaming service implements
//! [`RangeMover`]; node operations hand it what must move and wait for it.

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;

/// A token range, left-exclusive and right-inclusive; `left < right` except that a right of
/// `i64::MIN` is the end of the ring (wrapping ranges are split there).
pub type TokenRange = (i64, i64);

/// Some ranges of one keyspace and the peer that gives them (fetch) or takes them (send).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub keyspace: String,
    pub peer: IpAddr,
    pub ranges: Vec<TokenRange>,
}

/// What a move resolves to: done, or why not (the operation stops there and can be resumed).
pub type MoveFuture<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// Moves the data of token ranges between this node and others.
pub trait RangeMover: Send + Sync {
    /// Copies into this node every table of each transfer's keyspace, for its ranges, from its
    /// peer; resolves once everything has arrived and is durable here.
    fn fetch(&self, transfers: Vec<Transfer>) -> MoveFuture<'_>;
    /// Copies this node's data of each transfer's keyspace, for its ranges, to its peer;
    /// resolves once the peer holds it durably.
    fn send(&self, transfers: Vec<Transfer>) -> MoveFuture<'_>;
}
