//! What a client asks for, decoded from QUERY/EXECUTE/BATCH messages.
use crate::error::Consistency;
use bytes::Bytes;

/// One bound value as sent by a client.
#[derive(Clone, Debug, PartialEq)]
pub enum BoundValue {
    Set(Bytes),
    Null,
    /// Protocol v4+ "unset": leave the column untouched.
    Unset,
}

/// Bound values, by position or by name (`:name` markers or the named-values flag).
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Values {
    #[default]
    None,
    Positional(Vec<BoundValue>),
    Named(Vec<(String, BoundValue)>),
}

/// The `<query_parameters>` of QUERY and EXECUTE.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryOptions {
    pub consistency: Consistency,
    pub values: Values,
    pub skip_metadata: bool,
    /// `None` means no paging: return every row.
    pub page_size: Option<i32>,
    pub paging_state: Option<Bytes>,
    pub serial_consistency: Option<Consistency>,
    /// Client-supplied write timestamp (microseconds).
    pub timestamp: Option<i64>,
    /// Protocol v5 per-query keyspace.
    pub keyspace: Option<String>,
    /// Protocol v5 `now_in_seconds`.
    pub now_in_seconds: Option<i32>,
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions {
            consistency: Consistency::One,
            values: Values::None,
            skip_metadata: false,
            page_size: None,
            paging_state: None,
            serial_consistency: None,
            timestamp: None,
            keyspace: None,
            now_in_seconds: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchKind {
    Logged = 0,
    Unlogged = 1,
    Counter = 2,
}

/// One statement of a BATCH: query text or a prepared id, with positional values.
#[derive(Clone, Debug, PartialEq)]
pub enum BatchStatement {
    Query {
        query: String,
        values: Vec<BoundValue>,
    },
    Prepared {
        id: Bytes,
        values: Vec<BoundValue>,
    },
}

/// A BATCH message.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchRequest {
    pub kind: BatchKind,
    pub statements: Vec<BatchStatement>,
    pub consistency: Consistency,
    pub serial_consistency: Option<Consistency>,
    pub timestamp: Option<i64>,
    pub keyspace: Option<String>,
    pub now_in_seconds: Option<i32>,
}
