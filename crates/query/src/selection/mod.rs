//! The SELECT clause as a tree: the values each result row carries are expressions
//! (`Node`) over the row's *leaves* (cells, key parts, WRITETIME/TTL, token), constants and
//! bind markers, applied native functions (`crate::functions`) and aggregates. A query is
//! an aggregation when any output contains an aggregate; then each group of rows feeds the
//! aggregates, and the output is computed once per group from the aggregates' results and
//! the group's first row (as Cassandra does for plain columns next to aggregates).
//!
//! Element and field selectors (`m[k]`, `u.f`) plug in as further `Node` kinds over a
//! value; `analyze::selector` is where they are analysed.
use std::sync::Arc;

use schema::{ColumnMetadata, TableMetadata};
use types::result::ColumnSpec;

use crate::columns::spec;
use crate::functions::Function;
use crate::operand::Operand;

mod analyze;
mod eval;
mod group;
#[cfg(test)]
mod tests;

pub use eval::Evaluator;
pub use group::GroupState;

/// A value read from the row itself.
#[derive(Clone, Debug, PartialEq)]
pub enum Leaf {
    Column(ColumnMetadata),
    /// WRITETIME: a bigint, or for a non-frozen collection or UDT a list of its cells'.
    WriteTime(ColumnMetadata),
    /// MAXWRITETIME: the largest write time of the column's cells.
    MaxWriteTime(ColumnMetadata),
    /// TTL: an int, or for a non-frozen collection or UDT a list of its cells'.
    Ttl(ColumnMetadata),
    Token,
}

impl Leaf {
    pub fn column(&self) -> Option<&ColumnMetadata> {
        match self {
            Leaf::Column(c) | Leaf::WriteTime(c) | Leaf::MaxWriteTime(c) | Leaf::Ttl(c) => Some(c),
            Leaf::Token => None,
        }
    }
}

/// One expression of the selection.
#[derive(Clone, Debug)]
pub enum Node {
    /// The leaf at this index of `Selection::leaves`.
    Leaf(usize),
    /// A constant or bind marker.
    Value(Operand),
    /// A scalar function applied to its arguments.
    Call(Arc<Function>, Vec<Node>),
    /// The result of the aggregate at this index of `Selection::aggregates`.
    Aggregate(usize),
    /// A list, set, map (flattened pairs) or tuple built from selectors.
    Composite(types::CqlType, Vec<Node>),
}

/// An aggregate call: the function and its argument expressions (over leaves only).
#[derive(Clone, Debug)]
pub struct AggregateCall {
    pub function: Arc<Function>,
    pub args: Vec<Node>,
}

/// The analysed selection.
#[derive(Clone, Debug)]
pub struct Selection {
    pub leaves: Vec<Leaf>,
    pub outputs: Vec<Node>,
    pub aggregates: Vec<AggregateCall>,
    /// The result metadata (one spec per output).
    pub specs: Vec<ColumnSpec>,
    /// Each output's value type (the spec's type but where Cassandra reports another, see
    /// `Function::legacy_timeuuid`).
    pub types: Vec<types::CqlType>,
    pub is_aggregate: bool,
}

impl Selection {
    /// `SELECT *`: every column in Cassandra's order.
    pub fn wildcard(table: &TableMetadata) -> Selection {
        let columns = select_order(table);
        let specs = columns
            .iter()
            .map(|c| spec(table, &c.name, c.ty.clone()))
            .collect();
        let types = columns.iter().map(|c| c.ty.clone()).collect();
        Selection {
            outputs: (0..columns.len()).map(Node::Leaf).collect(),
            leaves: columns.into_iter().map(Leaf::Column).collect(),
            aggregates: Vec::new(),
            specs,
            types,
            is_aggregate: false,
        }
    }

    /// The output that is just a column (for DISTINCT's checks), per output.
    pub fn plain_columns(&self) -> impl Iterator<Item = Option<&ColumnMetadata>> {
        self.outputs.iter().map(|node| match node {
            Node::Leaf(i) => match &self.leaves[*i] {
                Leaf::Column(c) => Some(c),
                _ => None,
            },
            _ => None,
        })
    }
}

/// Cassandra's `SELECT *` order: partition key, clustering, then static and regular
/// columns, each group by name.
pub fn select_order(table: &TableMetadata) -> Vec<ColumnMetadata> {
    let mut out: Vec<ColumnMetadata> = table.partition_key_columns().cloned().collect();
    out.extend(table.clustering_columns().cloned());
    let mut statics: Vec<ColumnMetadata> = table.static_columns().cloned().collect();
    statics.sort_by(|a, b| a.name.cmp(&b.name));
    let mut regulars: Vec<ColumnMetadata> = table.regular_columns().cloned().collect();
    regulars.sort_by(|a, b| a.name.cmp(&b.name));
    out.extend(statics);
    out.extend(regulars);
    out
}
