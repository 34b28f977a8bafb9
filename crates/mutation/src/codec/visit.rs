//! Reading a compact row (see [`super::row`]) without copying it: [`Reader::visit_compact_row`]
//! checks the encoding and hands its parts, borrowed from it, to a [`RowVisitor`]. Decoding
//! into a [`Row`] is one visitor (it copies what it keeps, or slices it out of the shared buffer
//! the encoding lies in: see [`Reader::shared_row`]); statistics over rows still encoded are
//! another. [`visit_decoded`] walks a decoded row the same way, so a visitor serves both.

use bytes::Bytes;

use super::row::{
    marker_expiry, unzigzag, CELL_DELETION_TIME, CELL_FLAGS, CELL_TIMESTAMP, CELL_TTL,
    CELL_USUAL_LENGTH, COMPLEX, COMPLEX_DELETION, DENSE_COLUMNS, ROW_DELETION, ROW_FLAGS,
    ROW_LIVENESS, ROW_LIVENESS_EXPIRY,
};
use super::{check_counter, DecodeError, Reader, HAS_PATH, HAS_VALUE, IS_COUNTER};
use crate::model::{
    Cell, ColumnData, ColumnValue, ComplexColumn, DeletionTime, LivenessInfo, Row, NO_DELETION_TIME,
};

/// A cell as an encoding (or a decoded [`Cell`]) holds it, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellView<'a> {
    pub timestamp: i64,
    pub ttl: i32,
    pub local_deletion_time: i32,
    pub value: Option<&'a [u8]>,
    pub path: Option<&'a [u8]>,
    pub counter: bool,
}

impl<'a> CellView<'a> {
    pub fn of(cell: &'a Cell) -> Self {
        CellView {
            timestamp: cell.timestamp,
            ttl: cell.ttl,
            local_deletion_time: cell.local_deletion_time,
            value: cell.value.as_deref(),
            path: cell.path.as_deref(),
            counter: cell.counter,
        }
    }

    /// The cell of these fields (`flags` says whether it holds a counter), refused if it
    /// claims to hold a counter without a valid counter context.
    pub(super) fn checked(
        flags: u8,
        timestamp: i64,
        (ttl, local_deletion_time): (i32, i32),
        (value, path): (Option<&'a [u8]>, Option<&'a [u8]>),
    ) -> Result<Self, DecodeError> {
        let counter = flags & IS_COUNTER != 0;
        check_counter(counter, value)?;
        Ok(CellView {
            timestamp,
            ttl,
            local_deletion_time,
            value,
            path,
            counter,
        })
    }

    /// As [`Cell::is_tombstone`].
    pub fn is_tombstone(&self) -> bool {
        self.value.is_none()
    }

    /// As [`Cell::is_expiring`].
    pub fn is_expiring(&self) -> bool {
        self.ttl > 0 && self.value.is_some()
    }

    /// The cell, its bytes copied.
    pub fn to_cell(&self) -> Cell {
        self.cell_in(None)
    }

    /// The cell, its bytes sliced out of `source` when they lie in it, else copied.
    fn cell_in(&self, source: Option<&Bytes>) -> Cell {
        Cell {
            timestamp: self.timestamp,
            ttl: self.ttl,
            local_deletion_time: self.local_deletion_time,
            value: self.value.map(|v| keep(source, v)),
            path: self.path.map(|p| keep(source, p)),
            counter: self.counter,
        }
    }
}

/// What the numbered rows of an SSTable (format version 2) are read with: the column names
/// their numbers index, each column's usual value length ([`NO_USUAL_LENGTH`] for none) and
/// the timestamp their row markers' are written from.
#[derive(Clone, Copy, Debug)]
pub struct Numbering<'a> {
    pub names: &'a [Bytes],
    pub lengths: &'a [u32],
    pub timestamp_base: i64,
}

/// A column without a usual value length (none of its simple cells had a value).
pub const NO_USUAL_LENGTH: u32 = u32::MAX;

/// Receives a row's parts in order: its head, then each column (a complex column's cells
/// follow it).
pub trait RowVisitor<'a> {
    fn head(
        &mut self,
        clustering: &'a [u8],
        liveness: Option<LivenessInfo>,
        deletion: DeletionTime,
    );
    fn simple(&mut self, name: &'a [u8], cell: CellView<'a>);
    /// A complex column and its deletion (live when it has none).
    fn complex(&mut self, name: &'a [u8], deletion: DeletionTime);
    /// A cell of the complex column last visited.
    fn complex_cell(&mut self, cell: CellView<'a>);
}

/// Walks a decoded row as [`Reader::visit_compact_row`] walks an encoded one.
pub fn visit_decoded<'a>(row: &'a Row, visitor: &mut impl RowVisitor<'a>) {
    visitor.head(&row.clustering, row.liveness, row.deletion);
    for column in &row.columns {
        match &column.value {
            ColumnValue::Simple(cell) => visitor.simple(&column.name, CellView::of(cell)),
            ColumnValue::Complex(complex) => {
                visitor.complex(&column.name, complex.deletion);
                for cell in &complex.cells {
                    visitor.complex_cell(CellView::of(cell));
                }
            }
        }
    }
}

/// `name` as its own `Bytes`: the entry of `names` it is (a numbered row's name), else as
/// [`keep`] gives it.
fn keep_name(source: Option<&Bytes>, names: &[Bytes], name: &[u8]) -> Bytes {
    let same = |entry: &&Bytes| entry.as_ptr() == name.as_ptr() && entry.len() == name.len();
    match names.iter().find(same) {
        Some(entry) => entry.clone(),
        None => keep(source, name),
    }
}

/// `part` as its own `Bytes`: a slice of `source` (sharing its buffer) when it lies in it,
/// else a copy.
fn keep(source: Option<&Bytes>, part: &[u8]) -> Bytes {
    let Some(source) = source else {
        return Bytes::copy_from_slice(part);
    };
    let start = (part.as_ptr() as usize).wrapping_sub(source.as_ptr() as usize);
    match start.checked_add(part.len()) {
        Some(end) if end <= source.len() && !part.is_empty() => source.slice(start..end),
        _ => Bytes::copy_from_slice(part),
    }
}

/// Builds the row a visit reads, slicing its bytes out of `source` when given (the buffer the
/// encoding lies in), else copying them.
pub(super) struct RowBuilder<'s> {
    pub row: Row,
    pub source: Option<&'s Bytes>,
    /// The name table of a numbered row (empty otherwise): its names are shared, not copied.
    pub names: &'s [Bytes],
}

impl<'a> RowVisitor<'a> for RowBuilder<'_> {
    fn head(
        &mut self,
        clustering: &'a [u8],
        liveness: Option<LivenessInfo>,
        deletion: DeletionTime,
    ) {
        self.row.clustering = keep(self.source, clustering);
        self.row.liveness = liveness;
        self.row.deletion = deletion;
    }

    fn simple(&mut self, name: &'a [u8], cell: CellView<'a>) {
        let value = ColumnValue::Simple(cell.cell_in(self.source));
        let name = keep_name(self.source, self.names, name);
        self.row.columns.push(ColumnData { name, value });
    }

    fn complex(&mut self, name: &'a [u8], deletion: DeletionTime) {
        let cells = Vec::new();
        let value = ColumnValue::Complex(ComplexColumn { deletion, cells });
        let name = keep_name(self.source, self.names, name);
        self.row.columns.push(ColumnData { name, value });
    }

    fn complex_cell(&mut self, cell: CellView<'a>) {
        let source = self.source;
        if let Some(ColumnValue::Complex(complex)) =
            self.row.columns.last_mut().map(|c| &mut c.value)
        {
            complex.cells.push(cell.cell_in(source));
        }
    }
}

impl<'a> Reader<'a> {
    /// A 64-bit varint as numbered rows write timestamps: at most ten bytes, minimal.
    fn varint64(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for i in 0..10 {
            let byte = self.u8()?;
            let bits = u64::from(byte & 0x7f);
            if i == 9 && bits > 1 {
                return Err(DecodeError("varint overflows 64 bits"));
            }
            value |= bits << (7 * i);
            if byte & 0x80 == 0 {
                if byte == 0 && i > 0 {
                    return Err(DecodeError("varint not minimal"));
                }
                return Ok(value);
            }
        }
        Err(DecodeError("varint longer than ten bytes"))
    }

    /// A varint as [`super::row::put_varint`] writes it: at most five bytes, no redundant high
    /// zeros.
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

    /// Bytes preceded by their varint length, borrowed.
    fn varslice(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.varlen()?;
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(head)
    }

    fn varslice_if(&mut self, present: bool) -> Result<Option<&'a [u8]>, DecodeError> {
        present.then(|| self.varslice()).transpose()
    }

    /// Reads a compact row, handing its parts to `visitor` as they are checked.
    pub fn visit_compact_row(
        &mut self,
        visitor: &mut impl RowVisitor<'a>,
    ) -> Result<(), DecodeError> {
        self.visit_row(None, visitor)
    }

    /// Reads a numbered row (see [`super::put_numbered_row`]), handing its parts to `visitor`
    /// as they are checked.
    pub fn visit_numbered_row(
        &mut self,
        numbering: Numbering<'a>,
        visitor: &mut impl RowVisitor<'a>,
    ) -> Result<(), DecodeError> {
        self.visit_row(Some(numbering), visitor)
    }

    /// A numbered row, its values sliced out of `source` and its names shared with the table's.
    pub fn shared_numbered_row(
        &mut self,
        source: &Bytes,
        numbering: Numbering<'a>,
    ) -> Result<Row, DecodeError> {
        let mut builder = RowBuilder {
            row: Row::new(Bytes::new()),
            source: Some(source),
            names: numbering.names,
        };
        self.visit_numbered_row(numbering, &mut builder)?;
        Ok(builder.row)
    }

    /// A compact row (`numbering` absent) or a numbered one.
    fn visit_row(
        &mut self,
        numbering: Option<Numbering<'a>>,
        visitor: &mut impl RowVisitor<'a>,
    ) -> Result<(), DecodeError> {
        let flags = self.u8()?;
        let expiry_without_marker = flags & ROW_LIVENESS_EXPIRY != 0 && flags & ROW_LIVENESS == 0;
        let allowed = ROW_FLAGS
            | if numbering.is_some() {
                DENSE_COLUMNS
            } else {
                0
            };
        if flags & !allowed != 0 || expiry_without_marker {
            return Err(DecodeError("invalid row flags"));
        }
        let clustering = self.varslice()?;
        let liveness = if flags & ROW_LIVENESS != 0 {
            let timestamp = match numbering {
                Some(n) => n.timestamp_base.wrapping_add(unzigzag(self.varint64()?)),
                None => self.i64()?,
            };
            Some(self.marker(timestamp, flags & ROW_LIVENESS_EXPIRY != 0)?)
        } else {
            None
        };
        let deletion = self.present_deletion(flags & ROW_DELETION != 0)?;
        visitor.head(clustering, liveness, deletion);
        let mut reference = liveness.map(|l| l.timestamp);
        let dense = flags & DENSE_COLUMNS != 0;
        for i in 0..self.varlen()? {
            let (name, usual) = match numbering {
                None => (self.varslice()?, None),
                Some(n) => {
                    let number = if dense { i } else { self.varint()? as usize };
                    let name = n.names.get(number);
                    let name = name.ok_or(DecodeError("unknown column number"))?;
                    let usual = n.lengths.get(number).copied().unwrap_or(NO_USUAL_LENGTH);
                    (&name[..], Some(usual))
                }
            };
            self.column(name, usual, &mut reference, visitor)?;
        }
        Ok(())
    }

    /// A compact row, its bytes sliced out of `source` when given, else copied.
    pub(super) fn compact_row(&mut self, source: Option<&Bytes>) -> Result<Row, DecodeError> {
        let mut builder = RowBuilder {
            row: Row::new(Bytes::new()),
            source,
            names: &[],
        };
        self.visit_compact_row(&mut builder)?;
        Ok(builder.row)
    }

    fn marker(&mut self, timestamp: i64, expiring: bool) -> Result<LivenessInfo, DecodeError> {
        let mut liveness = LivenessInfo::new(timestamp);
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

    /// A column; `usual` is its usual value length in a numbered row (`None` in a compact one).
    fn column(
        &mut self,
        name: &'a [u8],
        usual: Option<u32>,
        reference: &mut Option<i64>,
        visitor: &mut impl RowVisitor<'a>,
    ) -> Result<(), DecodeError> {
        let Some(&flags) = self.bytes.first() else {
            return Err(DecodeError("payload ends early"));
        };
        if flags & COMPLEX == 0 {
            visitor.simple(name, self.compact_cell(reference, usual)?);
            return Ok(());
        }
        self.u8()?;
        if flags & !(COMPLEX | COMPLEX_DELETION) != 0 {
            return Err(DecodeError("invalid complex column flags"));
        }
        visitor.complex(name, self.present_deletion(flags & COMPLEX_DELETION != 0)?);
        for _ in 0..self.varlen()? {
            visitor.complex_cell(self.compact_cell(reference, None)?);
        }
        Ok(())
    }

    /// A cell; `usual` is its column's usual value length when its length may be left out (a
    /// numbered row's simple cell).
    fn compact_cell(
        &mut self,
        reference: &mut Option<i64>,
        usual: Option<u32>,
    ) -> Result<CellView<'a>, DecodeError> {
        let flags = self.u8()?;
        let allowed = CELL_FLAGS
            | if usual.is_some() {
                CELL_USUAL_LENGTH
            } else {
                0
            };
        if flags & !allowed != 0 {
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
        let value = if flags & CELL_USUAL_LENGTH != 0 {
            Some(self.usual_value(flags, usual)?)
        } else {
            self.varslice_if(flags & HAS_VALUE != 0)?
        };
        let path = self.varslice_if(flags & HAS_PATH != 0)?;
        CellView::checked(flags, timestamp, (ttl, local_deletion_time), (value, path))
    }

    /// A value of its column's usual length, which a flagged cell leaves out.
    fn usual_value(&mut self, flags: u8, usual: Option<u32>) -> Result<&'a [u8], DecodeError> {
        let len = usual.filter(|&l| l != NO_USUAL_LENGTH && flags & HAS_VALUE != 0);
        let len = len.ok_or(DecodeError(
            "usual length without a value or a usual length",
        ))?;
        if len as usize > self.bytes.len() {
            return Err(DecodeError("length exceeds payload"));
        }
        let (value, rest) = self.bytes.split_at(len as usize);
        self.bytes = rest;
        Ok(value)
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
}
