//! What the server answers: result kinds, column specs, schema-change events.
use crate::cql_type::CqlType;
use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};

/// One column of result or bind-variable metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnSpec {
    pub keyspace: String,
    pub table: String,
    pub name: String,
    pub ty: CqlType,
}

/// A page of rows. `content` holds `row_count * columns.len()` values already encoded as
/// protocol `[bytes]` (int length, -1 for null), written through [`Rows::push_value`].
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Rows {
    /// Shared with the statement's plan: a page does not copy its columns' names.
    pub columns: Arc<Vec<ColumnSpec>>,
    pub row_count: i32,
    pub content: BytesMut,
    /// Set when more pages follow.
    pub paging_state: Option<Bytes>,
    /// The client asked (and may) skip metadata: only the column count is sent.
    pub skip_metadata: bool,
}

impl Rows {
    pub fn new(columns: impl Into<Arc<Vec<ColumnSpec>>>) -> Rows {
        Rows {
            columns: columns.into(),
            ..Rows::default()
        }
    }

    /// Appends one cell; call `columns.len()` times, then [`Rows::end_row`].
    pub fn push_value(&mut self, value: Option<&[u8]>) {
        match value {
            Some(v) => {
                self.content.put_i32(v.len() as i32);
                self.content.put_slice(v);
            }
            None => self.content.put_i32(-1),
        }
    }

    pub fn end_row(&mut self) {
        self.row_count += 1;
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaChangeKind {
    Created,
    Updated,
    Dropped,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaChangeTarget {
    Keyspace,
    Table,
    Type,
    Function,
    Aggregate,
}

/// A schema change, both as a RESULT and as an EVENT.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaChange {
    pub kind: SchemaChangeKind,
    pub target: SchemaChangeTarget,
    pub keyspace: String,
    /// Table, type, function or aggregate name; empty for a keyspace.
    pub name: String,
    /// Argument types, for functions and aggregates.
    pub arg_types: Vec<String>,
}

/// A prepared statement's description, as returned in a RESULT Prepared.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    pub id: Bytes,
    /// Protocol v5: hash of the result metadata.
    pub result_metadata_id: Bytes,
    pub bind_columns: Vec<ColumnSpec>,
    /// Positions in `bind_columns` of the partition key components, in key order.
    pub pk_indexes: Vec<u16>,
    /// Empty for statements that return no rows.
    pub result_columns: Vec<ColumnSpec>,
}

/// The body of a RESULT message.
#[derive(Clone, Debug, PartialEq)]
pub enum QueryResult {
    Void,
    Rows(Rows),
    SetKeyspace(String),
    Prepared(Prepared),
    SchemaChange(SchemaChange),
}

/// A result plus the warnings the client should see (protocol warning flag).
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub result: QueryResult,
    pub warnings: Vec<String>,
    /// The trace session of a request the client asked to trace (protocol tracing flag).
    pub tracing_id: Option<uuid::Uuid>,
}

impl From<QueryResult> for Outcome {
    fn from(result: QueryResult) -> Outcome {
        Outcome {
            result,
            warnings: Vec::new(),
            tracing_id: None,
        }
    }
}
