//! The binary form of the data model: what the commit log, SSTables and internode messages
//! carry. Decoding checks every length against the payload and never panics on bad input.
use std::ops::Bound;

use bytes::{BufMut, Bytes};
use uuid::Uuid;

use crate::model::{
    Cell, ColumnData, ColumnValue, ComplexColumn, DeletionTime, LivenessInfo, Mutation,
    PartitionKey, PartitionUpdate, RangeTombstone, Row, TableId,
};

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

pub fn put_row(out: &mut Vec<u8>, row: &Row) {
    put_bytes(out, &row.clustering);
    match &row.liveness {
        Some(l) => {
            out.put_u8(1);
            out.put_i64(l.timestamp);
            out.put_i32(l.ttl);
            out.put_i32(l.local_expiration_time);
        }
        None => out.put_u8(0),
    }
    put_deletion(out, &row.deletion);
    put_len(out, row.columns.len());
    for column in &row.columns {
        put_bytes(out, &column.name);
        match &column.value {
            ColumnValue::Simple(cell) => {
                out.put_u8(0);
                put_cell(out, cell);
            }
            ColumnValue::Complex(complex) => {
                out.put_u8(1);
                put_deletion(out, &complex.deletion);
                put_len(out, complex.cells.len());
                for cell in &complex.cells {
                    put_cell(out, cell);
                }
            }
        }
    }
}

const HAS_VALUE: u8 = 1;
const HAS_PATH: u8 = 2;
/// The value is a counter context (absent from data written before counters had shards).
const IS_COUNTER: u8 = 4;

pub fn put_cell(out: &mut Vec<u8>, cell: &Cell) {
    let flags = if cell.value.is_some() { HAS_VALUE } else { 0 }
        | if cell.path.is_some() { HAS_PATH } else { 0 }
        | if cell.counter { IS_COUNTER } else { 0 };
    out.put_u8(flags);
    out.put_i64(cell.timestamp);
    out.put_i32(cell.ttl);
    out.put_i32(cell.local_deletion_time);
    if let Some(value) = &cell.value {
        put_bytes(out, value);
    }
    if let Some(path) = &cell.path {
        put_bytes(out, path);
    }
}

/// A bounds-checked cursor over a payload.
pub struct Reader<'a> {
    pub bytes: &'a [u8],
}

impl Reader<'_> {
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

    pub fn len(&mut self) -> Result<usize, DecodeError> {
        let len = u32::from_be_bytes(self.take()?) as usize;
        if len > self.bytes.len() {
            // Every counted item takes at least one byte, so this is always corrupt.
            return Err(DecodeError("length exceeds payload"));
        }
        Ok(len)
    }

    pub fn bytes(&mut self) -> Result<Bytes, DecodeError> {
        let len = self.len()?;
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(Bytes::copy_from_slice(head))
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

    pub fn row(&mut self) -> Result<Row, DecodeError> {
        let clustering = self.bytes()?;
        let liveness = if self.flag()? {
            Some(LivenessInfo {
                timestamp: self.i64()?,
                ttl: self.i32()?,
                local_expiration_time: self.i32()?,
            })
        } else {
            None
        };
        let deletion = self.deletion()?;
        let mut columns = Vec::new();
        for _ in 0..self.len()? {
            columns.push(self.column()?);
        }
        Ok(Row {
            clustering,
            liveness,
            deletion,
            columns,
        })
    }

    pub fn column(&mut self) -> Result<ColumnData, DecodeError> {
        let name = self.bytes()?;
        let value = if self.flag()? {
            let deletion = self.deletion()?;
            let mut cells = Vec::new();
            for _ in 0..self.len()? {
                cells.push(self.cell()?);
            }
            ColumnValue::Complex(ComplexColumn { deletion, cells })
        } else {
            ColumnValue::Simple(self.cell()?)
        };
        Ok(ColumnData { name, value })
    }

    pub fn cell(&mut self) -> Result<Cell, DecodeError> {
        let flags = self.u8()?;
        if flags & !(HAS_VALUE | HAS_PATH | IS_COUNTER) != 0 {
            return Err(DecodeError("invalid cell flags"));
        }
        let timestamp = self.i64()?;
        let ttl = self.i32()?;
        let local_deletion_time = self.i32()?;
        let value = if flags & HAS_VALUE != 0 {
            Some(self.bytes()?)
        } else {
            None
        };
        let path = if flags & HAS_PATH != 0 {
            Some(self.bytes()?)
        } else {
            None
        };
        let counter = flags & IS_COUNTER != 0;
        if counter {
            let context = value
                .as_ref()
                .ok_or(DecodeError("counter cell without a value"))?;
            crate::counter_context::CounterContext::decode(context)?;
        }
        Ok(Cell {
            timestamp,
            ttl,
            local_deletion_time,
            value,
            path,
            counter,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> Mutation {
        let mut row = Row::new(Bytes::from_static(b"c1"));
        row.liveness = Some(LivenessInfo::expiring(10, 5, 100));
        row.deletion = DeletionTime::new(3, 4);
        row.columns = vec![
            ColumnData::simple("a", Cell::live(10, Bytes::from_static(b"x"))),
            ColumnData::simple("b", Cell::tombstone(11, 7)),
            ColumnData::simple("n", Cell::counter(12, &counter_context())),
            ColumnData::complex(
                "m",
                DeletionTime::new(9, 9),
                vec![Cell::live(10, Bytes::new()).with_path(Bytes::from_static(b"p"))],
            ),
        ];
        Mutation {
            table: TableId(Uuid::from_u128(42)),
            key: PartitionKey {
                token: -7,
                key: Bytes::from_static(b"pk"),
            },
            update: PartitionUpdate {
                partition_deletion: DeletionTime::new(1, 2),
                static_row: Some(Row::new(Bytes::new())),
                rows: vec![row],
                range_tombstones: vec![RangeTombstone {
                    start: Bound::Excluded(Bytes::from_static(b"a")),
                    end: Bound::Unbounded,
                    deletion: DeletionTime::new(5, 6),
                }],
            },
        }
    }

    fn counter_context() -> crate::counter_context::CounterContext {
        crate::counter_context::CounterContext::single(crate::counter_context::Shard {
            id: [3; 16],
            clock: 2,
            count: -5,
        })
    }

    #[test]
    fn cells_written_before_counter_contexts_decode_unflagged() {
        // A legacy counter total as data written before contexts holds it: flags 1 (value).
        let mut old = vec![1u8];
        old.extend_from_slice(&9i64.to_be_bytes());
        old.extend_from_slice(&0i32.to_be_bytes());
        old.extend_from_slice(&i32::MAX.to_be_bytes());
        put_bytes(&mut old, &40i64.to_be_bytes());
        let cell = Reader { bytes: &old }.cell().expect("legacy cell");
        assert_eq!(
            cell,
            Cell::live(9, Bytes::copy_from_slice(&40i64.to_be_bytes()))
        );
        assert!(!cell.counter);
    }

    #[test]
    fn counter_cells_with_damaged_contexts_are_refused() {
        let mut out = Vec::new();
        put_cell(&mut out, &Cell::counter(1, &counter_context()));
        assert!(Reader { bytes: &out }.cell().expect("valid").is_counter());
        let last = out.len() - 1;
        let mut short = out[..last].to_vec();
        short[17..21].copy_from_slice(&31u32.to_be_bytes());
        assert!(Reader { bytes: &short }.cell().is_err());
        let mut flagged_tombstone = Vec::new();
        put_cell(&mut flagged_tombstone, &Cell::tombstone(1, 0));
        flagged_tombstone[0] |= IS_COUNTER;
        assert!(Reader {
            bytes: &flagged_tombstone
        }
        .cell()
        .is_err());
    }

    #[test]
    fn mutations_round_trip_and_every_prefix_is_an_error() {
        let m = sample();
        let mut out = Vec::new();
        put_mutation(&mut out, &m);
        let mut reader = Reader { bytes: &out };
        assert_eq!(reader.mutation(), Ok(m));
        assert!(reader.bytes.is_empty());
        for len in 0..out.len() {
            let mut reader = Reader { bytes: &out[..len] };
            assert!(reader.mutation().is_err(), "prefix of {len} bytes decoded");
        }
    }
}
