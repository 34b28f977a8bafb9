//! WRITETIME, MAXWRITETIME and TTL, as Cassandra 5.0's `ColumnTimestamps`: one time for a
//! single-cell column, one per cell for a non-frozen collection, one per field for a non-frozen
//! UDT (none where a field has no cell); element, slice and field selections narrow them to
//! the cells they select, and MAXWRITETIME keeps the largest.
use std::ops::Range;

use bytes::Bytes;
use mutation::Cell;
use schema::ColumnMetadata;
use types::CqlType;

use super::access::{Access, Bound};
use crate::collections;
use crate::rows::RowView;

/// Which of a cell's times is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimesKind {
    WriteTime,
    MaxWriteTime,
    Ttl,
}

impl TimesKind {
    /// The function's name, as in messages and result column names.
    pub fn name(self) -> &'static str {
        match self {
            TimesKind::WriteTime => "writetime",
            TimesKind::MaxWriteTime => "maxwritetime",
            TimesKind::Ttl => "ttl",
        }
    }

    /// The cell's write time, or its remaining TTL in seconds at `now` (`None` for a cell that
    /// does not expire or has expired).
    fn of(self, cell: &Cell, now: i32) -> Option<i64> {
        match self {
            TimesKind::WriteTime | TimesKind::MaxWriteTime => Some(cell.timestamp),
            TimesKind::Ttl if cell.ttl > 0 => {
                let left = i64::from(cell.local_deletion_time) - i64::from(now);
                (left >= 0).then_some(left)
            }
            TimesKind::Ttl => None,
        }
    }

    fn encode(self, time: i64) -> Bytes {
        match self {
            TimesKind::Ttl => Bytes::copy_from_slice(&(time as i32).to_be_bytes()),
            _ => Bytes::copy_from_slice(&time.to_be_bytes()),
        }
    }
}

/// The times of a selected value.
#[derive(Clone, Debug, PartialEq)]
pub enum Times {
    /// Nothing selected (an absent element, an empty slice).
    None,
    /// A single-cell value: every element and field shares its time.
    Single(Option<i64>),
    /// One per cell of a non-frozen value, in the value's order.
    Multiple(Vec<Option<i64>>),
}

impl Times {
    /// The time of the element or field at `index`.
    pub fn get(self, index: usize) -> Times {
        match self {
            Times::Multiple(list) if list.is_empty() => Times::None,
            Times::Multiple(list) => Times::Single(list.get(index).copied().flatten()),
            other => other,
        }
    }

    /// The times of the elements at `range`.
    pub fn slice(self, range: Range<usize>) -> Times {
        if range.is_empty() {
            return Times::None;
        }
        match self {
            Times::Multiple(list) => {
                let end = range.end.min(list.len());
                let start = range.start.min(end);
                Times::Multiple(list[start..end].to_vec())
            }
            other => other,
        }
    }

    /// The largest time.
    fn max(self) -> Times {
        match self {
            Times::Multiple(list) if list.is_empty() => Times::None,
            Times::Multiple(list) => Times::Single(list.into_iter().flatten().max()),
            other => other,
        }
    }

    /// The result value: a bigint (an int for TTL), or a list of them for several cells, a
    /// cell without a time giving an empty element (see docs/differences.md).
    fn to_bytes(&self, kind: TimesKind) -> Option<Bytes> {
        match self {
            Times::None | Times::Single(None) => None,
            Times::Single(Some(time)) => Some(kind.encode(*time)),
            Times::Multiple(list) if list.is_empty() => None,
            Times::Multiple(list) => {
                let values: Vec<Bytes> = list
                    .iter()
                    .map(|t| t.map(|t| kind.encode(t)).unwrap_or_default())
                    .collect();
                Some(collections::encode_elements(&values))
            }
        }
    }
}

/// The times `kind` reads of `column` in `view`, narrowed by the selections of `path`, each
/// with its execution's `bounds`.
pub fn read(
    view: &RowView,
    kind: TimesKind,
    column: &ColumnMetadata,
    path: &[Access],
    bounds: &[Bound],
) -> Option<Bytes> {
    let mut times = column_times(view, column, kind);
    let mut value = (!path.is_empty()).then(|| view.value(column)).flatten();
    for (access, bound) in path.iter().zip(bounds) {
        times = bound.times(&access.ty, value.as_deref(), times);
        value = value.and_then(|v| bound.value(&access.ty, &v));
    }
    if kind == TimesKind::MaxWriteTime {
        times = times.max();
    }
    times.to_bytes(kind)
}

/// One time per cell of a column; a non-frozen UDT has one per field.
fn column_times(view: &RowView, column: &ColumnMetadata, kind: TimesKind) -> Times {
    let cells = view.live_cells(column);
    let of = |c: &Cell| kind.of(c, view.now);
    if !column.ty.is_multi_cell() {
        return Times::Single(cells.first().and_then(|c| of(c)));
    }
    let CqlType::Udt(udt) = &column.ty else {
        return Times::Multiple(cells.iter().map(|c| of(c)).collect());
    };
    if cells.is_empty() {
        return Times::Multiple(Vec::new());
    }
    let mut fields = vec![None; udt.fields.len()];
    for cell in cells {
        let index = cell.path.as_deref().and_then(collections::field_index);
        if let Some(slot) = index.and_then(|i| fields.get_mut(i)) {
            *slot = of(cell);
        }
    }
    Times::Multiple(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_is_the_time_left_and_none_without_expiry() {
        let live = Cell::live(5, Bytes::new());
        assert_eq!(TimesKind::WriteTime.of(&live, 100), Some(5));
        assert_eq!(TimesKind::Ttl.of(&live, 100), None);
        let expiring = Cell::expiring(5, 60, 100, Bytes::new());
        assert_eq!(TimesKind::Ttl.of(&expiring, 130), Some(30));
        assert_eq!(TimesKind::Ttl.of(&expiring, 161), None);
    }

    #[test]
    fn elements_and_slices_narrow_multiple_times() {
        let all = Times::Multiple(vec![Some(1), None, Some(3)]);
        assert_eq!(all.clone().get(2), Times::Single(Some(3)));
        assert_eq!(all.clone().get(1), Times::Single(None));
        assert_eq!(
            all.clone().slice(1..3),
            Times::Multiple(vec![None, Some(3)])
        );
        assert_eq!(all.clone().max(), Times::Single(Some(3)));
        assert_eq!(all.slice(2..2), Times::None);
        let single = Times::Single(Some(7));
        assert_eq!(single.clone().get(4), single);
        assert_eq!(Times::Multiple(vec![]).get(0), Times::None);
    }

    #[test]
    fn encoded_as_bigints_ints_or_lists_with_empty_elements() {
        let one = Times::Single(Some(2)).to_bytes(TimesKind::Ttl);
        assert_eq!(one.as_deref(), Some(&[0, 0, 0, 2][..]));
        let list = Times::Multiple(vec![Some(1), None]).to_bytes(TimesKind::WriteTime);
        let expected = [
            &[0, 0, 0, 2][..],
            &[0, 0, 0, 8],
            &1i64.to_be_bytes(),
            &[0; 4],
        ]
        .concat();
        assert_eq!(list.as_deref(), Some(&expected[..]));
        assert_eq!(Times::Multiple(vec![]).to_bytes(TimesKind::WriteTime), None);
        assert_eq!(Times::None.to_bytes(TimesKind::WriteTime), None);
    }
}
