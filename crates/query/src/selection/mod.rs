//! The SELECT clause as a tree: the values each result row carries are expressions
//! (`Node`) over the row's *leaves* (cells, key parts, WRITETIME/TTL, token), constants and
//! bind markers, applied native functions (`crate::functions`) and aggregates. A query is
//! an aggregation when any output contains an aggregate; then each group of rows feeds the
//! aggregates, and the output is computed once per group from the aggregates' results and
//! the group's first row (as Cassandra does for plain columns next to aggregates).
//!
//! Element, slice and field selections (`m[k]`, `m[a..b]`, `u.f`) are `Node::Access` over any
//! value of the right type; WRITETIME/TTL of them are leaves that narrow the column's cell
//! times the same way (`access`, `times`).
use std::sync::Arc;

use schema::{ColumnMetadata, TableMetadata};
use types::result::ColumnSpec;
use types::CqlResult;

use crate::columns::spec;
use crate::exec::ExecContext;
use crate::functions::Function;
use crate::operand::Operand;

mod access;
#[cfg(test)]
mod access_tests;
mod analyze;
mod eval;
mod group;
#[cfg(test)]
mod tests;
mod times;

pub use access::{Access, AccessKind};
pub use eval::Evaluator;
pub use group::GroupState;
pub use times::TimesKind;

/// A value read from the row itself.
#[derive(Clone, Debug, PartialEq)]
pub enum Leaf {
    Column(ColumnMetadata),
    /// WRITETIME, MAXWRITETIME or TTL of a column, or of what the element, slice and field
    /// selections of `path` take from it: a bigint (an int for TTL), or a list of them (one
    /// per cell) for a non-frozen collection or UDT.
    Times {
        kind: TimesKind,
        column: ColumnMetadata,
        path: Vec<Access>,
    },
    Token,
}

impl Leaf {
    pub fn column(&self) -> Option<&ColumnMetadata> {
        match self {
            Leaf::Column(c) | Leaf::Times { column: c, .. } => Some(c),
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
    /// An element, slice or field of a value.
    Access(Box<Node>, Access),
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
    /// Whether the outputs are the leaves themselves, in order (`SELECT *`, plain columns):
    /// a row's leaf values are then its outputs.
    pub fn outputs_are_leaves(&self) -> bool {
        self.outputs.len() == self.leaves.len()
            && self
                .outputs
                .iter()
                .enumerate()
                .all(|(i, node)| matches!(node, Node::Leaf(j) if *j == i))
    }

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

impl Selection {
    /// Binds every element key and slice bound once, so that a null key is refused before any
    /// row is read, as Cassandra refuses it when it makes the selectors of an execution.
    pub fn check_bound(&self, ctx: &ExecContext) -> CqlResult<()> {
        let mut accesses: Vec<&Access> = Vec::new();
        for leaf in &self.leaves {
            if let Leaf::Times { path, .. } = leaf {
                accesses.extend(path);
            }
        }
        let args = self.aggregates.iter().flat_map(|a| &a.args);
        for node in self.outputs.iter().chain(args) {
            node.accesses(&mut accesses);
        }
        accesses.iter().try_for_each(|a| a.bind(ctx).map(drop))
    }
}

impl Node {
    /// The element, slice and field selections in this expression.
    fn accesses<'a>(&'a self, out: &mut Vec<&'a Access>) {
        match self {
            Node::Call(_, args) | Node::Composite(_, args) => {
                args.iter().for_each(|a| a.accesses(out));
            }
            Node::Access(inner, access) => {
                inner.accesses(out);
                out.push(access);
            }
            Node::Leaf(_) | Node::Value(_) | Node::Aggregate(_) => {}
        }
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
