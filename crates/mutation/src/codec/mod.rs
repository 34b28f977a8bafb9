//! The binary form of the data model: what the commit log, SSTables and internode messages
//! carry. Decoding checks every length against the payload and never panics on bad input.
use std::ops::Bound;

use bytes::{BufMut, Bytes};
use uuid::Uuid;

use crate::model::{
    DeletionTime, Mutation, PartitionKey, PartitionUpdate, RangeTombstone, Row, TableId,
};

mod legacy;
mod row;
mod visit;

pub use row::{put_numbered_row, put_row, ColumnTable, RowSpans};
pub use visit::{visit_decoded, CellView, Numbering, RowVisitor, NO_USUAL_LENGTH};

/// Cell flags both row encodings share.
const HAS_VALUE: u8 = 1;
const HAS_PATH: u8 = 2;
/// The value is a counter context (absent from data written before counters had shards).
const IS_COUNTER: u8 = 4;

/// Why a payload could not be decoded.
#[derive(Debug, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

pub fn put_len(out: &mut Vec<u8>, len: usize) {
    // Record sizes are capped far below 4 GiB by the commit log, so lengths fit in u32.
    out.put_u32(u32::try_from(len).unwrap_or(u32::MAX));
}

pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_len(out, bytes.len());
    out.put_slice(bytes);
}

pub fn put_mutation(out: &mut Vec<u8>, m: &Mutation) {
    // Sized once: growing a buffer from empty copies a write's bytes several times over.
    out.reserve(mutation_size_hint(m));
    out.put_slice(m.table.0.as_bytes());
    out.put_i64(m.key.token);
    put_bytes(out, &m.key.key);
    put_deletion(out, &m.update.partition_deletion);
    match &m.update.static_row {
        Some(row) => {
            out.put_u8(1);
            put_row(out, row);
        }
        None => out.put_u8(0),
    }
    put_len(out, m.update.rows.len());
    for row in &m.update.rows {
        put_row(out, row);
    }
    put_len(out, m.update.range_tombstones.len());
    for tombstone in &m.update.range_tombstones {
        put_bound(out, &tombstone.start);
        put_bound(out, &tombstone.end);
        put_deletion(out, &tombstone.deletion);
    }
}

/// About the bytes [`put_mutation`] writes for `m`: at least that for rows and tombstones as
/// writes make them, so one reservation holds the encoding.
fn mutation_size_hint(m: &Mutation) -> usize {
    let update = &m.update;
    let rows: usize = update
        .static_row
        .iter()
        .chain(&update.rows)
        .map(row::size_hint)
        .sum();
    let bounds = |b: &Bound<Bytes>| match b {
        Bound::Included(b) | Bound::Excluded(b) => 5 + b.len(),
        Bound::Unbounded => 1,
    };
    let tombstones: usize = update
        .range_tombstones
        .iter()
        .map(|t| 12 + bounds(&t.start) + bounds(&t.end))
        .sum();
    16 + 8 + 4 + m.key.key.len() + 12 + 1 + 4 + rows + 4 + tombstones
}

pub fn put_deletion(out: &mut Vec<u8>, d: &DeletionTime) {
    out.put_i64(d.marked_for_delete_at);
    out.put_i32(d.local_deletion_time);
}

pub fn put_bound(out: &mut Vec<u8>, bound: &Bound<Bytes>) {
    match bound {
        Bound::Unbounded => out.put_u8(0),
        Bound::Included(b) => {
            out.put_u8(1);
            put_bytes(out, b);
        }
        Bound::Excluded(b) => {
            out.put_u8(2);
            put_bytes(out, b);
        }
    }
}

/// A bounds-checked cursor over a payload.
pub struct Reader<'a> {
    pub bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let (head, rest) = self
            .bytes
            .split_first_chunk::<N>()
            .ok_or(DecodeError("payload ends early"))?;
        self.bytes = rest;
        Ok(*head)
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take::<1>()?[0])
    }

    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.take()?))
    }

    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(self.take()?))
    }

    /// Reads a length prefix (a u32), checked against the bytes left.
    #[allow(
        clippy::len_without_is_empty,
        reason = "reads a length; the reader is no container"
    )]
    pub fn len(&mut self) -> Result<usize, DecodeError> {
        let len = u32::from_be_bytes(self.take()?) as usize;
        if len > self.bytes.len() {
            // Every counted item takes at least one byte, so this is always corrupt.
            return Err(DecodeError("length exceeds payload"));
        }
        Ok(len)
    }

    pub fn bytes(&mut self) -> Result<Bytes, DecodeError> {
        Ok(Bytes::copy_from_slice(self.len_slice()?))
    }

    /// Bytes preceded by their `u32` length, borrowed.
    fn len_slice(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.len()?;
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(head)
    }

    /// A row in either encoding (see [`row`] and [`legacy`]), its bytes copied.
    pub fn row(&mut self) -> Result<Row, DecodeError> {
        match self.bytes.first() {
            Some(first) if first & row::COMPACT_ROW != 0 => self.compact_row(None),
            _ => self.legacy_row(),
        }
    }

    /// [`row`](Self::row) read from a payload lying in `source`: a compact row's names and
    /// values are slices sharing `source`'s buffer instead of copies (a part outside `source`
    /// is copied). They keep all of `source` alive: for rows read and dropped soon, not kept.
    pub fn shared_row(&mut self, source: &Bytes) -> Result<Row, DecodeError> {
        match self.bytes.first() {
            Some(first) if first & row::COMPACT_ROW != 0 => self.compact_row(Some(source)),
            _ => self.legacy_row(),
        }
    }

    pub fn flag(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(DecodeError("invalid flag byte")),
        }
    }

    pub fn table_id(&mut self) -> Result<TableId, DecodeError> {
        Ok(TableId(Uuid::from_bytes(self.take()?)))
    }

    pub fn deletion(&mut self) -> Result<DeletionTime, DecodeError> {
        Ok(DeletionTime {
            marked_for_delete_at: self.i64()?,
            local_deletion_time: self.i32()?,
        })
    }

    pub fn bound(&mut self) -> Result<Bound<Bytes>, DecodeError> {
        match self.u8()? {
            0 => Ok(Bound::Unbounded),
            1 => Ok(Bound::Included(self.bytes()?)),
            2 => Ok(Bound::Excluded(self.bytes()?)),
            _ => Err(DecodeError("invalid bound tag")),
        }
    }

    pub fn mutation(&mut self) -> Result<Mutation, DecodeError> {
        let table = self.table_id()?;
        let key = PartitionKey {
            token: self.i64()?,
            key: self.bytes()?,
        };
        let partition_deletion = self.deletion()?;
        let static_row = if self.flag()? {
            Some(self.row()?)
        } else {
            None
        };
        let mut rows = Vec::new();
        for _ in 0..self.len()? {
            rows.push(self.row()?);
        }
        let mut range_tombstones = Vec::new();
        for _ in 0..self.len()? {
            range_tombstones.push(RangeTombstone {
                start: self.bound()?,
                end: self.bound()?,
                deletion: self.deletion()?,
            });
        }
        let update = PartitionUpdate {
            partition_deletion,
            static_row,
            rows,
            range_tombstones,
        };
        Ok(Mutation { table, key, update })
    }
}

/// Refuses a cell claiming to hold a counter without a valid counter context.
fn check_counter(counter: bool, value: Option<&[u8]>) -> Result<(), DecodeError> {
    if counter {
        let context = value.ok_or(DecodeError("counter cell without a value"))?;
        crate::counter_context::CounterContext::decode(context)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
