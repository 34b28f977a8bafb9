//! [`TokenRange`]: a range of the token ring, as streaming, repair, cleanup, size estimates and
//! node operations pass them around.
//!
//! A type alias of a pair rather than a newtype: ranges are built and taken apart as `(left,
//! right)` in every crate that moves data (ring arithmetic, Merkle trees, stream plans, the
//! admin API's JSON), and a newtype would only add `.0`/`.1` and constructors there without a
//! rule of its own to enforce.

/// A token range: left-exclusive, right-inclusive (`left < right`; a wrapping range is split).
/// A right end of `i64::MIN` is the end of the ring, as Cassandra's `(t, MIN]`.
pub type TokenRange = (i64, i64);
