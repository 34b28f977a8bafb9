//! Reading values out of stored rows: key components and cells (simple and multi-cell).
use crate::{ColumnKind, ColumnMetadata};
use bytes::Bytes;
use mutation::{Cell, ColumnValue, PartitionKey, Row};
use types::comparable::compare;
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
        if col.ty.is_multi_cell() {
            return join_cells(&col.ty, &self.live_cells(col));
        }
        self.cell(col).and_then(|cell| cell.value.clone())
    }

    /// The live cells of a column: its cell, or a non-frozen collection's or UDT's in the
    /// order of its value (elements by their type's order, list items and fields by position).
    pub fn live_cells(&self, col: &ColumnMetadata) -> Vec<&Cell> {
        let Some(data) = self.source(col).and_then(|r| r.column(col.name.as_bytes())) else {
            return Vec::new();
        };
        let mut live: Vec<&Cell> = match &data.value {
            ColumnValue::Simple(cell) => vec![cell],
            ColumnValue::Complex(complex) => complex.cells.iter().collect(),
        };
        live.retain(|c| c.is_live(self.now));
        if let CqlType::Map(key, _) | CqlType::Set(key) = &col.ty {
            let path = |c: &Cell| c.path.clone().unwrap_or_default();
            live.sort_by(|a, b| compare(key, &path(a), &path(b)));
        }
        live
    }
}

/// A non-frozen collection or UDT from its live cells, in value order (paths are list
/// positions, set elements, map keys or field positions).
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
        CqlType::Udt(udt) => {
            let mut fields = vec![None; udt.fields.len()];
            for cell in cells {
                let index = cell.path.as_deref().and_then(collections::field_index);
                if let Some(slot) = index.and_then(|i| fields.get_mut(i)) {
                    *slot = cell.value.clone();
                }
            }
            Some(collections::encode_fields(&fields))
        }
        _ => None,
    }
}
