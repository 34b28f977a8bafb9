//! The compact row encoding every row is written in: one flags byte (its top bit set, which
//! tells it from a [`super::legacy`] row), lengths and counts as varints, and per cell only
//! what differs from the usual: a cell's timestamp is written only when it differs from the
//! row marker's or the cell before it (an INSERT's cells share one), its TTL and local deletion
//! time only when it has them. A `standard1` row of five 34-byte values takes 206 bytes here
//! and 347 in the legacy form. Decoding accepts only the one encoding `put_row` writes (minimal
//! varints, flags only for what is there), so a decoded row re-encodes to the same bytes.

use bytes::BufMut;

use super::{put_deletion, HAS_PATH, HAS_VALUE, IS_COUNTER};
use crate::model::{Cell, ColumnValue, LivenessInfo, Row, NO_DELETION_TIME};

/// Set on the first byte of every compact row.
pub(super) const COMPACT_ROW: u8 = 0x80;
pub(super) const ROW_LIVENESS: u8 = 1;
/// The row marker's TTL and expiration time follow its timestamp.
pub(super) const ROW_LIVENESS_EXPIRY: u8 = 2;
pub(super) const ROW_DELETION: u8 = 4;
pub(super) const ROW_FLAGS: u8 = COMPACT_ROW | ROW_LIVENESS | ROW_LIVENESS_EXPIRY | ROW_DELETION;
/// In a numbered row (see [`put_numbered_row`]): its columns are numbers 0, 1, … of the name
/// table in that order, and no number is written.
pub(super) const DENSE_COLUMNS: u8 = 8;

/// Cell flags beyond the legacy ones: the timestamp follows (else it is the reference: the
/// timestamp of the row marker or of the cell before), a TTL follows, a local deletion time
/// follows.
pub(super) const CELL_TIMESTAMP: u8 = 8;
pub(super) const CELL_TTL: u8 = 16;
pub(super) const CELL_DELETION_TIME: u8 = 32;
pub(super) const CELL_FLAGS: u8 =
    HAS_VALUE | HAS_PATH | IS_COUNTER | CELL_TIMESTAMP | CELL_TTL | CELL_DELETION_TIME;
/// In a numbered row's simple cell: the value has its column's usual length, not written.
pub(super) const CELL_USUAL_LENGTH: u8 = 0x80;
/// In place of a simple column's cell flags: a complex column, with its deletion if flagged.
pub(super) const COMPLEX: u8 = 0x40;
pub(super) const COMPLEX_DELETION: u8 = 1;

fn flag(set: bool, bit: u8) -> u8 {
    if set {
        bit
    } else {
        0
    }
}

/// A row marker's expiry, unless it is the plain "never expires".
pub(super) fn marker_expiry(liveness: &LivenessInfo) -> Option<(i32, i32)> {
    let expiry = (liveness.ttl, liveness.local_expiration_time);
    (expiry != (0, NO_DELETION_TIME)).then_some(expiry)
}

/// At least the bytes [`put_row`] writes for `row`.
pub(super) fn size_hint(row: &Row) -> usize {
    let cell = |c: &Cell| {
        1 + 8
            + 4
            + 4
            + 5
            + c.value.as_ref().map_or(0, |v| v.len())
            + 5
            + c.path.as_ref().map_or(0, |p| p.len())
    };
    let columns: usize = row
        .columns
        .iter()
        .map(|column| {
            5 + column.name.len()
                + match &column.value {
                    ColumnValue::Simple(c) => cell(c),
                    ColumnValue::Complex(complex) => {
                        1 + 12 + 5 + complex.cells.iter().map(cell).sum::<usize>()
                    }
                }
        })
        .sum();
    1 + 5 + row.clustering.len() + 16 + 12 + 5 + columns
}

pub fn put_row(out: &mut Vec<u8>, row: &Row) {
    let expiry = row.liveness.as_ref().and_then(marker_expiry);
    out.put_u8(
        COMPACT_ROW
            | flag(row.liveness.is_some(), ROW_LIVENESS)
            | flag(expiry.is_some(), ROW_LIVENESS_EXPIRY)
            | flag(!row.deletion.is_live(), ROW_DELETION),
    );
    put_varbytes(out, &row.clustering);
    if let Some(liveness) = &row.liveness {
        out.put_i64(liveness.timestamp);
    }
    if let Some((ttl, expires)) = expiry {
        out.put_i32(ttl);
        out.put_i32(expires);
    }
    if !row.deletion.is_live() {
        put_deletion(out, &row.deletion);
    }
    put_varint(out, row.columns.len());
    let mut reference = row.liveness.map(|l| l.timestamp);
    for column in &row.columns {
        put_varbytes(out, &column.name);
        match &column.value {
            ColumnValue::Simple(cell) => put_cell(out, cell, &mut reference),
            ColumnValue::Complex(complex) => {
                let deleted = !complex.deletion.is_live();
                out.put_u8(COMPLEX | flag(deleted, COMPLEX_DELETION));
                if deleted {
                    put_deletion(out, &complex.deletion);
                }
                put_varint(out, complex.cells.len());
                for cell in &complex.cells {
                    put_cell(out, cell, &mut reference);
                }
            }
        }
    }
}

fn put_cell(out: &mut Vec<u8>, cell: &Cell, reference: &mut Option<i64>) {
    let new_timestamp = *reference != Some(cell.timestamp);
    let has_deletion_time = cell.local_deletion_time != NO_DELETION_TIME;
    out.put_u8(
        flag(cell.value.is_some(), HAS_VALUE)
            | flag(cell.path.is_some(), HAS_PATH)
            | flag(cell.counter, IS_COUNTER)
            | flag(new_timestamp, CELL_TIMESTAMP)
            | flag(cell.ttl != 0, CELL_TTL)
            | flag(has_deletion_time, CELL_DELETION_TIME),
    );
    if new_timestamp {
        out.put_i64(cell.timestamp);
        *reference = Some(cell.timestamp);
    }
    if cell.ttl != 0 {
        out.put_i32(cell.ttl);
    }
    if has_deletion_time {
        out.put_i32(cell.local_deletion_time);
    }
    if let Some(value) = &cell.value {
        put_varbytes(out, value);
    }
    if let Some(path) = &cell.path {
        put_varbytes(out, path);
    }
}

/// LEB128: seven bits a byte, low bits first. Lengths and counts fit in `u32`.
pub(super) fn put_varint(out: &mut Vec<u8>, value: usize) {
    let mut rest = u32::try_from(value).unwrap_or(u32::MAX);
    while rest >= 0x80 {
        out.put_u8(rest as u8 | 0x80);
        rest >>= 7;
    }
    out.put_u8(rest as u8);
}

pub(super) fn put_varbytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len());
    out.put_slice(bytes);
}

/// The bytes [`put_varint`] writes for `value`.
fn varint_len(value: usize) -> usize {
    let bits = usize::BITS - (value | 1).leading_zeros();
    bits.div_ceil(7) as usize
}

/// What a numbered row's writer asks of the SSTable it writes: the numbers of its columns and
/// their usual value lengths.
pub trait ColumnTable {
    /// The number of column `name`, the `i`th of its row.
    fn number(&mut self, name: &[u8], i: usize) -> u64;
    /// Whether a value of `len` bytes of column `number` is the column's usual length (that of
    /// its first value, which this call records when the column has none yet), so a cell may
    /// leave its length out.
    fn usual_length(&mut self, number: u64, len: usize) -> bool;
}

/// Scratch space of [`put_numbered_row`]: where the names and cells of the row lie.
#[derive(Debug, Default)]
pub struct RowSpans {
    columns: Vec<ColumnSpan>,
    /// The offset of the row marker's timestamp (right after the clustering) and its value.
    marker: Option<(usize, i64)>,
    /// The timestamp a cell without one of its own has (the codec's reference).
    reference: Option<i64>,
    /// The address of the encoding's first byte.
    base: usize,
}

#[derive(Debug)]
struct ColumnSpan {
    /// Where the column's name lies.
    name: (usize, usize),
    number: u64,
    /// A simple column's cell with a value: where its flags byte and value lie.
    cell: Option<(usize, usize, usize)>,
}

/// Re-encodes compact row `encoded` as a *numbered* row, as SSTables of format version 2 store
/// rows: each column name is replaced by the number `table` gives it (a varint), and a row whose
/// columns are numbers 0, 1, … in order is flagged [`DENSE_COLUMNS`] and writes none; a simple
/// cell whose value has its column's usual length is flagged [`CELL_USUAL_LENGTH`] and writes
/// no length; the row marker's timestamp is written as a zigzag varint from `timestamp_base`
/// (set to the first marker's timestamp when unset). The rest is copied as it is.
pub fn put_numbered_row(
    out: &mut Vec<u8>,
    encoded: &[u8],
    spans: &mut RowSpans,
    table: &mut impl ColumnTable,
    timestamp_base: &mut Option<i64>,
) -> Result<(), super::DecodeError> {
    spans.columns.clear();
    spans.base = encoded.as_ptr() as usize;
    super::Reader { bytes: encoded }.visit_compact_row(spans)?;
    for (i, column) in spans.columns.iter_mut().enumerate() {
        let (offset, len) = column.name;
        column.number = table.number(&encoded[offset..offset + len], i);
    }
    let dense = (spans.columns.iter().enumerate()).all(|(i, c)| c.number == i as u64);
    let start = out.len();
    let copy =
        |out: &mut Vec<u8>, from: usize, to: usize| out.extend_from_slice(&encoded[from..to]);
    let mut copied = 0;
    if let Some((at, timestamp)) = spans.marker {
        let base = *timestamp_base.get_or_insert(timestamp);
        copy(out, 0, at);
        put_varint64(out, zigzag(timestamp.wrapping_sub(base)));
        copied = at + 8;
    }
    for column in &spans.columns {
        let (offset, len) = column.name;
        copy(out, copied, offset - varint_len(len));
        if !dense {
            put_varint(out, usize::try_from(column.number).unwrap_or(usize::MAX));
        }
        copied = offset + len;
        let Some((flags_at, value_at, value_len)) = column.cell else {
            continue;
        };
        if table.usual_length(column.number, value_len) {
            copy(out, copied, flags_at);
            out.put_u8(encoded[flags_at] | CELL_USUAL_LENGTH);
            copy(out, flags_at + 1, value_at - varint_len(value_len));
            copied = value_at;
        }
    }
    copy(out, copied, encoded.len());
    if dense {
        out[start] |= DENSE_COLUMNS;
    }
    Ok(())
}

/// A signed difference as an unsigned number small when the difference is small either way.
pub(super) fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

pub(super) fn unzigzag(value: u64) -> i64 {
    (value >> 1) as i64 ^ -((value & 1) as i64)
}

/// LEB128 over 64 bits (at most ten bytes).
fn put_varint64(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.put_u8(value as u8 | 0x80);
        value >>= 7;
    }
    out.put_u8(value as u8);
}

impl RowSpans {
    fn offset(&self, part: &[u8]) -> usize {
        (part.as_ptr() as usize).wrapping_sub(self.base)
    }

    fn add(&mut self, name: &[u8]) {
        let name = (self.offset(name), name.len());
        self.columns.push(ColumnSpan {
            name,
            number: 0,
            cell: None,
        });
    }

    /// Follows the reference timestamp past `cell`; whether `cell` wrote its own.
    fn own_timestamp(&mut self, cell: &super::CellView<'_>) -> bool {
        let own = self.reference != Some(cell.timestamp);
        self.reference = Some(cell.timestamp);
        own
    }
}

impl<'a> super::RowVisitor<'a> for RowSpans {
    fn head(
        &mut self,
        clustering: &'a [u8],
        liveness: Option<LivenessInfo>,
        _: crate::model::DeletionTime,
    ) {
        let at = self.offset(clustering) + clustering.len();
        self.marker = liveness.map(|l| (at, l.timestamp));
        self.reference = liveness.map(|l| l.timestamp);
    }

    fn simple(&mut self, name: &'a [u8], cell: super::CellView<'a>) {
        self.add(name);
        let own = self.own_timestamp(&cell);
        let (Some(value), None) = (cell.value, cell.path) else {
            return;
        };
        // The cell's fields before its value: flags, then each only when present.
        let fields = 1
            + if own { 8 } else { 0 }
            + if cell.ttl != 0 { 4 } else { 0 }
            + if cell.local_deletion_time != NO_DELETION_TIME {
                4
            } else {
                0
            };
        let value_at = self.offset(value);
        let flags_at = value_at - varint_len(value.len()) - fields;
        if let Some(column) = self.columns.last_mut() {
            column.cell = Some((flags_at, value_at, value.len()));
        }
    }

    fn complex(&mut self, name: &'a [u8], _: crate::model::DeletionTime) {
        self.add(name);
    }

    fn complex_cell(&mut self, cell: super::CellView<'a>) {
        self.own_timestamp(&cell);
    }
}
