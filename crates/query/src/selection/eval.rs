//! Evaluation of the selection on rows: the leaves read from a row, then each expression
//! over them (functions called on serialized values, aggregates' results given).
use bytes::Bytes;
use storage::{Cell, ColumnValue};
use types::{CqlError, CqlResult};

use super::{Leaf, Node, Selection};
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
    pub fn leaves(&self, view: &RowView) -> Vec<Option<Bytes>> {
        self.selection
            .leaves
            .iter()
            .map(|l| leaf(view, l))
            .collect()
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
        let leaves = self.leaves(view);
        self.nodes(&self.selection.outputs, &leaves, &[])
    }
}

/// A leaf's value in a row.
fn leaf(view: &RowView, leaf: &Leaf) -> Option<Bytes> {
    match leaf {
        Leaf::Column(c) => view.value(c),
        Leaf::Token => Some(Bytes::copy_from_slice(&view.key.token.to_be_bytes())),
        Leaf::WriteTime(c) => per_cell(view, c, |cell| Some(cell.timestamp.to_be_bytes().to_vec())),
        Leaf::Ttl(c) => per_cell(view, c, |cell| ttl(cell, view.now)),
        Leaf::MaxWriteTime(c) => view
            .live_cells(c)
            .iter()
            .map(|cell| cell.timestamp)
            .max()
            .map(|t| Bytes::copy_from_slice(&t.to_be_bytes())),
    }
}

fn ttl(cell: &Cell, now: i32) -> Option<Vec<u8>> {
    (cell.ttl > 0).then(|| {
        let left = cell.local_deletion_time.saturating_sub(now).max(0);
        left.to_be_bytes().to_vec()
    })
}

/// A per-cell value: of the cell of a simple column, or the list of a multi-cell column's.
fn per_cell(
    view: &RowView,
    c: &schema::ColumnMetadata,
    f: impl Fn(&Cell) -> Option<Vec<u8>>,
) -> Option<Bytes> {
    if !c.ty.is_multi_cell() {
        return view.cell(c).and_then(&f).map(Bytes::from);
    }
    let cells = view.live_cells(c);
    if cells.is_empty() {
        return None;
    }
    let values: Vec<Bytes> = cells
        .iter()
        .map(|cell| f(cell).map(Bytes::from).unwrap_or_default())
        .collect();
    Some(collections::encode_elements(&values))
}

/// The live cells of a column, for MAXWRITETIME and per-cell WRITETIME/TTL.
impl RowView<'_> {
    pub fn live_cells(&self, c: &schema::ColumnMetadata) -> Vec<&Cell> {
        let source = if c.kind == schema::ColumnKind::Static {
            self.static_row
        } else {
            self.row
        };
        let Some(data) = source.and_then(|r| r.column(c.name.as_bytes())) else {
            return Vec::new();
        };
        match &data.value {
            ColumnValue::Simple(cell) if cell.is_live(self.now) => vec![cell],
            ColumnValue::Simple(_) => Vec::new(),
            ColumnValue::Complex(complex) => complex
                .cells
                .iter()
                .filter(|c| c.is_live(self.now))
                .collect(),
        }
    }
}
