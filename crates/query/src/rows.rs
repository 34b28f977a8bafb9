//! Reading values out of stored rows: key components and cells (simple and multi-cell).
use bytes::Bytes;
use schema::{ColumnKind, ColumnMetadata};
use storage::{Cell, ColumnValue, PartitionKey, Row};
use types::CqlType;

use crate::collections;

/// One result row's sources.
pub struct RowView<'a> {
    pub key: &'a PartitionKey,
    pub pk: &'a [Bytes],
    pub clustering: &'a [Option<Bytes>],
    pub row: Option<&'a Row>,
    pub static_row: Option<&'a Row>,
    pub now: i32,
}

impl RowView<'_> {
    fn source(&self, col: &ColumnMetadata) -> Option<&Row> {
        if col.kind == ColumnKind::Static {
            self.static_row
        } else {
            self.row
        }
    }

    /// The simple cell of `col`, if live.
    pub fn cell(&self, col: &ColumnMetadata) -> Option<&Cell> {
        let data = self.source(col)?.column(col.name.as_bytes())?;
        match &data.value {
            ColumnValue::Simple(cell) if cell.is_live(self.now) => Some(cell),
            _ => None,
        }
    }

    pub fn value(&self, col: &ColumnMetadata) -> Option<Bytes> {
        match col.kind {
            ColumnKind::PartitionKey => self.pk.get(col.position.max(0) as usize).cloned(),
            ColumnKind::Clustering => self
                .clustering
                .get(col.position.max(0) as usize)
                .cloned()
                .flatten(),
            _ => self.cell_value(col),
        }
    }

    fn cell_value(&self, col: &ColumnMetadata) -> Option<Bytes> {
        let data = self.source(col)?.column(col.name.as_bytes())?;
        match &data.value {
            ColumnValue::Simple(cell) if cell.is_live(self.now) => cell.value.clone(),
            ColumnValue::Simple(_) => None,
            ColumnValue::Complex(complex) => {
                let live: Vec<&Cell> = complex
                    .cells
                    .iter()
                    .filter(|c| c.is_live(self.now))
                    .collect();
                join_cells(&col.ty, &live)
            }
        }
    }
}

/// A non-frozen collection from its live cells (paths are list timeuuids, set elements,
/// or map keys).
fn join_cells(ty: &CqlType, cells: &[&Cell]) -> Option<Bytes> {
    if cells.is_empty() {
        return None;
    }
    match ty {
        CqlType::List(_) => {
            let values: Vec<Bytes> = cells.iter().filter_map(|c| c.value.clone()).collect();
            Some(collections::encode_elements(&values))
        }
        CqlType::Set(_) => {
            let values: Vec<Bytes> = cells.iter().filter_map(|c| c.path.clone()).collect();
            Some(collections::encode_elements(&values))
        }
        CqlType::Map(..) => {
            let pairs: Vec<(Bytes, Bytes)> = cells
                .iter()
                .filter_map(|c| Some((c.path.clone()?, c.value.clone()?)))
                .collect();
            Some(collections::encode_pairs(&pairs))
        }
        _ => None,
    }
}
