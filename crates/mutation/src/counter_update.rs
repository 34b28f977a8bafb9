//! A counter increment as a statement asks it, before its leader replica turns it into shards.

use bytes::Bytes;

/// Adds `delta` to counter `column` of a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterUpdate {
    /// The row's clustering, or `None` for the static row.
    pub clustering: Option<Bytes>,
    pub column: Bytes,
    pub delta: i64,
}
