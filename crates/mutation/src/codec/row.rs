//! The compact row encoding every row is written in: one flags byte (its top bit set, which
//! tells it from a [`super::legacy`] row), lengths and counts as varints, and per cell only
//! what differs from the usual: a cell's timestamp is written only when it differs from the
//! row marker's or the cell before it (an INSERT's cells share one), its TTL and local deletion
//! time only when it has them. A `standard1` row of five 34-byte values takes 206 bytes here
//! and 347 in the legacy form. Decoding accepts only the one encoding `put_row` writes (minimal
//! varints, flags only for what is there), so a decoded row re-encodes to the same bytes.

use bytes::BufMut;

use super::{put_deletion, DecodeError, Reader, HAS_PATH, HAS_VALUE, IS_COUNTER};
use crate::model::{
    Cell, ColumnData, ColumnValue, ComplexColumn, DeletionTime, LivenessInfo, Row, NO_DELETION_TIME,
};

/// Set on the first byte of every compact row.
pub(super) const COMPACT_ROW: u8 = 0x80;
const ROW_LIVENESS: u8 = 1;
/// The row marker's TTL and expiration time follow its timestamp.
const ROW_LIVENESS_EXPIRY: u8 = 2;
const ROW_DELETION: u8 = 4;
const ROW_FLAGS: u8 = COMPACT_ROW | ROW_LIVENESS | ROW_LIVENESS_EXPIRY | ROW_DELETION;

/// Cell flags beyond the legacy ones: the timestamp follows (else it is the reference: the
/// timestamp of the row marker or of the cell before), a TTL follows, a local deletion time
/// follows.
const CELL_TIMESTAMP: u8 = 8;
const CELL_TTL: u8 = 16;
const CELL_DELETION_TIME: u8 = 32;
const CELL_FLAGS: u8 =
    HAS_VALUE | HAS_PATH | IS_COUNTER | CELL_TIMESTAMP | CELL_TTL | CELL_DELETION_TIME;
/// In place of a simple column's cell flags: a complex column, with its deletion if flagged.
const COMPLEX: u8 = 0x40;
const COMPLEX_DELETION: u8 = 1;

fn flag(set: bool, bit: u8) -> u8 {
    if set {
        bit
    } else {
        0
    }
}

/// A row marker's expiry, unless it is the plain "never expires".
fn marker_expiry(liveness: &LivenessInfo) -> Option<(i32, i32)> {
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

impl Reader<'_> {
    /// A varint as [`put_varint`] writes it: at most five bytes, no redundant high zeros.
    pub(super) fn varint(&mut self) -> Result<u32, DecodeError> {
        let mut value = 0u32;
        for i in 0..5 {
            let byte = self.u8()?;
            let bits = u32::from(byte & 0x7f);
            if i == 4 && bits > 0x0f {
                return Err(DecodeError("varint overflows 32 bits"));
            }
            value |= bits << (7 * i);
            if byte & 0x80 == 0 {
                if byte == 0 && i > 0 {
                    return Err(DecodeError("varint not minimal"));
                }
                return Ok(value);
            }
        }
        Err(DecodeError("varint longer than five bytes"))
    }

    /// A varint count or length, which cannot exceed the bytes left.
    fn varlen(&mut self) -> Result<usize, DecodeError> {
        let len = self.varint()? as usize;
        if len > self.bytes.len() {
            return Err(DecodeError("length exceeds payload"));
        }
        Ok(len)
    }

    fn varbytes(&mut self) -> Result<bytes::Bytes, DecodeError> {
        let len = self.varlen()?;
        Ok(self.slice(len))
    }

    pub(super) fn compact_row(&mut self) -> Result<Row, DecodeError> {
        let flags = self.u8()?;
        let expiry_without_marker = flags & ROW_LIVENESS_EXPIRY != 0 && flags & ROW_LIVENESS == 0;
        if flags & !ROW_FLAGS != 0 || expiry_without_marker {
            return Err(DecodeError("invalid row flags"));
        }
        let clustering = self.varbytes()?;
        let liveness = if flags & ROW_LIVENESS != 0 {
            Some(self.marker(flags & ROW_LIVENESS_EXPIRY != 0)?)
        } else {
            None
        };
        let deletion = self.present_deletion(flags & ROW_DELETION != 0)?;
        let mut reference = liveness.map(|l| l.timestamp);
        let mut columns = Vec::new();
        for _ in 0..self.varlen()? {
            let name = self.varbytes()?;
            let value = self.column_value(&mut reference)?;
            columns.push(ColumnData { name, value });
        }
        Ok(Row {
            clustering,
            liveness,
            deletion,
            columns,
        })
    }

    fn marker(&mut self, expiring: bool) -> Result<LivenessInfo, DecodeError> {
        let mut liveness = LivenessInfo::new(self.i64()?);
        if expiring {
            liveness.ttl = self.i32()?;
            liveness.local_expiration_time = self.i32()?;
            if marker_expiry(&liveness).is_none() {
                return Err(DecodeError("row marker expiry flagged but absent"));
            }
        }
        Ok(liveness)
    }

    /// A deletion written only when `present`; one written must not be "live".
    fn present_deletion(&mut self, present: bool) -> Result<DeletionTime, DecodeError> {
        if !present {
            return Ok(DeletionTime::LIVE);
        }
        let deletion = self.deletion()?;
        if deletion.is_live() {
            return Err(DecodeError("live deletion flagged as present"));
        }
        Ok(deletion)
    }

    fn column_value(&mut self, reference: &mut Option<i64>) -> Result<ColumnValue, DecodeError> {
        let Some(&flags) = self.bytes.first() else {
            return Err(DecodeError("payload ends early"));
        };
        if flags & COMPLEX == 0 {
            return Ok(ColumnValue::Simple(self.compact_cell(reference)?));
        }
        self.u8()?;
        if flags & !(COMPLEX | COMPLEX_DELETION) != 0 {
            return Err(DecodeError("invalid complex column flags"));
        }
        let deletion = self.present_deletion(flags & COMPLEX_DELETION != 0)?;
        let mut cells = Vec::new();
        for _ in 0..self.varlen()? {
            cells.push(self.compact_cell(reference)?);
        }
        Ok(ColumnValue::Complex(ComplexColumn { deletion, cells }))
    }

    fn compact_cell(&mut self, reference: &mut Option<i64>) -> Result<Cell, DecodeError> {
        let flags = self.u8()?;
        if flags & !CELL_FLAGS != 0 {
            return Err(DecodeError("invalid cell flags"));
        }
        let timestamp = if flags & CELL_TIMESTAMP != 0 {
            let timestamp = self.i64()?;
            if *reference == Some(timestamp) {
                return Err(DecodeError("cell repeats the reference timestamp"));
            }
            *reference = Some(timestamp);
            timestamp
        } else {
            reference.ok_or(DecodeError("cell without a timestamp"))?
        };
        let ttl = self.i32_unless_default(flags & CELL_TTL != 0, 0)?;
        let local_deletion_time =
            self.i32_unless_default(flags & CELL_DELETION_TIME != 0, NO_DELETION_TIME)?;
        let value = self.varbytes_if(flags & HAS_VALUE != 0)?;
        let path = self.varbytes_if(flags & HAS_PATH != 0)?;
        super::checked_cell(flags, timestamp, (ttl, local_deletion_time), value, path)
    }

    /// An `i32` written only when it differs from `default`.
    fn i32_unless_default(&mut self, present: bool, default: i32) -> Result<i32, DecodeError> {
        if !present {
            return Ok(default);
        }
        let value = self.i32()?;
        if value == default {
            return Err(DecodeError("default value flagged as present"));
        }
        Ok(value)
    }

    fn varbytes_if(&mut self, present: bool) -> Result<Option<bytes::Bytes>, DecodeError> {
        present.then(|| self.varbytes()).transpose()
    }
}
