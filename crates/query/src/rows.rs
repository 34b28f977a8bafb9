//! Reading values out of stored rows: key components, cells (simple and multi-cell),
//! WRITETIME/TTL, and the aggregates computed over them.
use std::cmp::Ordering;

use bytes::Bytes;
use schema::{ColumnKind, ColumnMetadata};
use storage::{Cell, ColumnValue, PartitionKey, Row};
use types::comparable::compare;
use types::{CqlType, NativeType};

use crate::collections;
use crate::selection::{Aggregate, Selected};

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

    pub fn evaluate(&self, item: &Selected) -> Option<Bytes> {
        match item {
            Selected::Column(c) => self.value(c),
            Selected::WriteTime(c) => self
                .cell(c)
                .map(|cell| Bytes::copy_from_slice(&cell.timestamp.to_be_bytes())),
            Selected::Ttl(c) => self.cell(c).filter(|cell| cell.ttl > 0).map(|cell| {
                let left = cell.local_deletion_time.saturating_sub(self.now).max(0);
                Bytes::copy_from_slice(&left.to_be_bytes())
            }),
            Selected::Token => Some(Bytes::copy_from_slice(&self.key.token.to_be_bytes())),
            Selected::Aggregate(_) => None,
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

/// Running state of one aggregate.
#[derive(Clone, Debug)]
pub struct Accumulator {
    count: i64,
    best: Option<Bytes>,
    int_sum: i128,
    float_sum: f64,
}

impl Accumulator {
    pub fn new() -> Accumulator {
        Accumulator {
            count: 0,
            best: None,
            int_sum: 0,
            float_sum: 0.0,
        }
    }

    pub fn add(&mut self, agg: &Aggregate, view: &RowView) {
        match agg {
            Aggregate::CountRows => self.count += 1,
            Aggregate::Count(s) => {
                if view.evaluate(s).is_some() {
                    self.count += 1;
                }
            }
            Aggregate::Min(s, ty) => self.keep(view.evaluate(s), ty, Ordering::Less),
            Aggregate::Max(s, ty) => self.keep(view.evaluate(s), ty, Ordering::Greater),
            Aggregate::Sum(s, ty) | Aggregate::Avg(s, ty) => {
                if let Some(v) = view.evaluate(s) {
                    self.count += 1;
                    self.add_number(&v, ty);
                }
            }
        }
    }

    fn keep(&mut self, v: Option<Bytes>, ty: &CqlType, want: Ordering) {
        let Some(v) = v else { return };
        let better = match &self.best {
            None => true,
            Some(b) => compare(ty, &v, b) == want,
        };
        if better {
            self.best = Some(v);
        }
    }

    fn add_number(&mut self, v: &[u8], ty: &CqlType) {
        match ty {
            CqlType::Native(NativeType::Float) => {
                if let Ok(a) = <[u8; 4]>::try_from(v) {
                    self.float_sum += f32::from_be_bytes(a) as f64;
                }
            }
            CqlType::Native(NativeType::Double) => {
                if let Ok(a) = <[u8; 8]>::try_from(v) {
                    self.float_sum += f64::from_be_bytes(a);
                }
            }
            _ => self.int_sum += signed_int(v),
        }
    }

    pub fn result(&self, agg: &Aggregate) -> Option<Bytes> {
        match agg {
            Aggregate::CountRows | Aggregate::Count(_) => {
                Some(Bytes::copy_from_slice(&self.count.to_be_bytes()))
            }
            Aggregate::Min(..) | Aggregate::Max(..) => self.best.clone(),
            Aggregate::Sum(_, ty) => Some(number(ty, self.int_sum, self.float_sum)),
            Aggregate::Avg(_, ty) => {
                let n = self.count.max(1);
                Some(number(
                    ty,
                    self.int_sum / n as i128,
                    self.float_sum / n as f64,
                ))
            }
        }
    }
}

impl Default for Accumulator {
    fn default() -> Self {
        Accumulator::new()
    }
}

fn signed_int(v: &[u8]) -> i128 {
    if v.is_empty() || v.len() > 16 {
        return 0;
    }
    let fill = if v[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut buf = [fill; 16];
    buf[16 - v.len()..].copy_from_slice(v);
    i128::from_be_bytes(buf)
}

/// Encodes a sum or average in the argument's type, wrapping like Java's integer types.
fn number(ty: &CqlType, int: i128, float: f64) -> Bytes {
    let b: Vec<u8> = match ty {
        CqlType::Native(NativeType::Tinyint) => (int as i8).to_be_bytes().to_vec(),
        CqlType::Native(NativeType::Smallint) => (int as i16).to_be_bytes().to_vec(),
        CqlType::Native(NativeType::Int) => (int as i32).to_be_bytes().to_vec(),
        CqlType::Native(NativeType::Float) => (float as f32).to_be_bytes().to_vec(),
        CqlType::Native(NativeType::Double) => float.to_be_bytes().to_vec(),
        _ => (int as i64).to_be_bytes().to_vec(),
    };
    Bytes::from(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_wrap_like_java_ints() {
        let ty = CqlType::Native(NativeType::Int);
        assert_eq!(
            number(&ty, i32::MAX as i128 + 1, 0.0).as_ref(),
            &i32::MIN.to_be_bytes()
        );
    }

    #[test]
    fn signed_bytes_extend() {
        assert_eq!(signed_int(&[0xff, 0xff, 0xff, 0xfe]), -2);
        assert_eq!(signed_int(&[0x01]), 1);
    }
}
