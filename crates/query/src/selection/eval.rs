//! Evaluation of the selection on rows: the leaves read from a row, then each expression
//! over them (functions called on serialized values, aggregates' results given).
use bytes::Bytes;
use types::{CqlError, CqlResult};

use super::{times, Leaf, Node, Selection};
use crate::collections;
use crate::exec::ExecContext;
use crate::functions::Env;
use crate::operand::Resolved;
use crate::rows::RowView;

/// Evaluates a selection's expressions within one execution.
pub struct Evaluator<'a> {
    pub selection: &'a Selection,
    pub ctx: &'a ExecContext,
}

impl Evaluator<'_> {
    fn env(&self) -> Env {
        Env {
            now_micros: self.ctx.now_micros,
        }
    }

    /// Every leaf's value in `view`.
    pub fn leaves(&self, view: &RowView) -> CqlResult<Vec<Option<Bytes>>> {
        self.selection
            .leaves
            .iter()
            .map(|l| self.leaf(view, l))
            .collect()
    }

    /// A leaf's value in a row.
    fn leaf(&self, view: &RowView, leaf: &Leaf) -> CqlResult<Option<Bytes>> {
        Ok(match leaf {
            Leaf::Column(c) => view.value(c),
            Leaf::Token => Some(Bytes::copy_from_slice(&view.key.token.to_be_bytes())),
            Leaf::Times { kind, column, path } => {
                let bounds = path
                    .iter()
                    .map(|a| a.bind(self.ctx))
                    .collect::<CqlResult<Vec<_>>>()?;
                times::read(view, *kind, column, path, &bounds)
            }
        })
    }

    /// An expression's value from leaf values and aggregate results.
    pub fn node(
        &self,
        node: &Node,
        leaves: &[Option<Bytes>],
        aggregates: &[Option<Bytes>],
    ) -> CqlResult<Option<Bytes>> {
        match node {
            Node::Leaf(i) => Ok(leaves.get(*i).cloned().flatten()),
            Node::Aggregate(i) => Ok(aggregates.get(*i).cloned().flatten()),
            Node::Value(operand) => Ok(match operand.resolve(self.ctx)? {
                Resolved::Value(b) => Some(b),
                Resolved::Null | Resolved::Unset => None,
            }),
            Node::Call(function, args) => {
                let values = self.nodes(args, leaves, aggregates)?;
                function.call(&values, &self.env())
            }
            Node::Composite(ty, parts) => {
                let values = self.nodes(parts, leaves, aggregates)?;
                if values.iter().any(Option::is_none)
                    && !matches!(ty.unfrozen(), types::CqlType::Tuple(_))
                {
                    return Err(CqlError::invalid(
                        "null is not supported inside collections",
                    ));
                }
                collections::build(ty, values).map(Some)
            }
            Node::Access(target, access) => {
                let bound = access.bind(self.ctx)?;
                let value = self.node(target, leaves, aggregates)?;
                Ok(value.and_then(|v| bound.value(&access.ty, &v)))
            }
        }
    }

    pub fn nodes(
        &self,
        nodes: &[Node],
        leaves: &[Option<Bytes>],
        aggregates: &[Option<Bytes>],
    ) -> CqlResult<Vec<Option<Bytes>>> {
        nodes
            .iter()
            .map(|n| self.node(n, leaves, aggregates))
            .collect()
    }

    /// The outputs of a row of a query without aggregates.
    pub fn row(&self, view: &RowView) -> CqlResult<Vec<Option<Bytes>>> {
        let leaves = self.leaves(view)?;
        if self.selection.outputs_are_leaves() {
            return Ok(leaves);
        }
        self.nodes(&self.selection.outputs, &leaves, &[])
    }
}
