//! How one partition is laid out in the uncompressed Data stream: a header record (key,
//! partition deletion, static row, range tombstones), one record per row in clustering order,
//! and an empty record ending the partition. Every record is a length and its bytes; rows and
//! bounds use the mutation codec's encodings. Format version 2 (written) has varint lengths and
//! a header that holds only what differs from the usual (a token that is not the Murmur3 token
//! of the key, a deletion, a static row, range tombstones); version 1 (read) had `u32` lengths
//! and every header field.

use std::ops::Bound;
use std::path::Path;

use bytes::{BufMut, Bytes};

use std::collections::HashMap;

use crate::error::{Result, StorageError};
use crate::sstable::format::{put_varbytes, put_varint, Decoder};
use crate::sstable::stats::RowNumbering;
use mutation::codec::{
    put_bound, put_deletion, put_numbered_row, put_row, ColumnTable, Numbering, RowSpans,
    NO_USUAL_LENGTH,
};
use mutation::partition::PartitionData;
use mutation::{DeletionTime, PartitionKey, RangeTombstone, Row};

/// Everything of a partition that precedes its rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PartitionHeader {
    pub key: PartitionKey,
    pub deletion: DeletionTime,
    pub static_row: Option<Row>,
    pub range_tombstones: Vec<RangeTombstone>,
}

impl PartitionHeader {
    /// A partition with this header and no rows yet.
    pub fn into_data(self) -> (PartitionKey, PartitionData) {
        let data = PartitionData {
            partition_deletion: self.deletion,
            static_row: self.static_row,
            rows: Default::default(),
            range_tombstones: self.range_tombstones,
        };
        (self.key, data)
    }
}

/// Header flags (version 2): what follows the key.
const EXPLICIT_TOKEN: u8 = 1;
const PARTITION_DELETION: u8 = 2;
const STATIC_ROW: u8 = 4;
const RANGE_TOMBSTONES: u8 = 8;
const HEADER_FLAGS: u8 = EXPLICIT_TOKEN | PARTITION_DELETION | STATIC_ROW | RANGE_TOMBSTONES;

/// The length of the end-of-partition marker, and of every other record prefix (version 2).
pub(crate) const END_MARKER: [u8; 1] = [0];

/// Appends a record: a varint length, then the body `body` writes (written in place, then
/// moved up by the length's size).
fn put_record(out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    body(out);
    let mut len = Vec::with_capacity(5);
    put_varint(&mut len, (out.len() - start) as u64);
    out.splice(start..start, len);
}

/// Whether `key`'s token is the one the partitioner gives its bytes (so needs no storing).
fn token_implied(key: &PartitionKey) -> bool {
    ring::murmur3_token(&key.key) == key.token
}

/// The token of a key stored without one: its Murmur3 token.
pub(crate) fn implied_token(key: &[u8]) -> i64 {
    ring::murmur3_token(key)
}

/// Appends the header record of `data`: flags, the key, then what the flags announce.
pub(crate) fn put_header_record(out: &mut Vec<u8>, key: &PartitionKey, data: &PartitionData) {
    put_record(out, |out| {
        let explicit = !token_implied(key);
        let deleted = !data.partition_deletion.is_live();
        let tombstones = &data.range_tombstones;
        let flag = |set: bool, bit: u8| if set { bit } else { 0 };
        out.put_u8(
            flag(explicit, EXPLICIT_TOKEN)
                | flag(deleted, PARTITION_DELETION)
                | flag(data.static_row.is_some(), STATIC_ROW)
                | flag(!tombstones.is_empty(), RANGE_TOMBSTONES),
        );
        put_varbytes(out, &key.key);
        if explicit {
            out.put_i64(key.token);
        }
        if deleted {
            put_deletion(out, &data.partition_deletion);
        }
        if let Some(row) = &data.static_row {
            put_row(out, row);
        }
        if !tombstones.is_empty() {
            put_varint(out, tombstones.len() as u64);
        }
        for tombstone in tombstones {
            put_bound(out, &tombstone.start);
            put_bound(out, &tombstone.end);
            put_deletion(out, &tombstone.deletion);
        }
    })
}

/// The column names the rows of one SSTable number (format version 2), in the order they were
/// first written, with their usual value lengths, and the row records that number them.
#[derive(Default)]
pub(crate) struct ColumnNumbers {
    columns: Columns,
    /// The timestamp row markers are written from: the first one written.
    timestamp_base: Option<i64>,
    spans: RowSpans,
    scratch: Vec<u8>,
}

#[derive(Default)]
struct Columns {
    names: Vec<Bytes>,
    lengths: Vec<u32>,
    numbers: HashMap<Bytes, u64>,
}

impl ColumnTable for Columns {
    /// Rows mostly have the columns of the rows before, so the `i`th name is tried before the
    /// map.
    fn number(&mut self, name: &[u8], i: usize) -> u64 {
        if self.names.get(i).is_some_and(|n| n == name) {
            return i as u64;
        }
        if let Some(number) = self.numbers.get(name) {
            return *number;
        }
        let number = self.names.len() as u64;
        let name = Bytes::copy_from_slice(name);
        self.names.push(name.clone());
        self.lengths.push(NO_USUAL_LENGTH);
        self.numbers.insert(name, number);
        number
    }

    fn usual_length(&mut self, number: u64, len: usize) -> bool {
        let Some(usual) = self.lengths.get_mut(number as usize) else {
            return false;
        };
        let len = u32::try_from(len).unwrap_or(NO_USUAL_LENGTH);
        if *usual == NO_USUAL_LENGTH {
            *usual = len;
        }
        *usual == len && len != NO_USUAL_LENGTH
    }
}

impl ColumnNumbers {
    /// Appends the record of the row encoded (compactly) as `encoded`, its columns numbered.
    pub fn put_encoded_row_record(&mut self, out: &mut Vec<u8>, encoded: &[u8]) -> Result<()> {
        let mut result = Ok(());
        put_record(out, |out| {
            let (spans, columns) = (&mut self.spans, &mut self.columns);
            result = put_numbered_row(out, encoded, spans, columns, &mut self.timestamp_base);
        });
        result.map_err(|e| StorageError::Invalid(format!("a row does not encode: {}", e.0)))
    }

    /// Appends the record of `row`, its columns numbered.
    pub fn put_row_record(&mut self, out: &mut Vec<u8>, row: &Row) -> Result<()> {
        let mut encoded = std::mem::take(&mut self.scratch);
        encoded.clear();
        put_row(&mut encoded, row);
        let result = self.put_encoded_row_record(out, &encoded);
        self.scratch = encoded;
        result
    }

    /// What the rows were numbered with, for Statistics.
    pub fn into_numbering(self) -> RowNumbering {
        RowNumbering {
            names: self.columns.names,
            lengths: self.columns.lengths,
            timestamp_base: self.timestamp_base.unwrap_or(0),
        }
    }
}

/// The header record `bytes` of a Data stream of format `version`.
pub(crate) fn decode_header(
    bytes: &[u8],
    file: &Path,
    offset: u64,
    version: u16,
) -> Result<PartitionHeader> {
    let mut d = Decoder::new(bytes, file, offset);
    let header = if version == 1 {
        decode_header_v1(&mut d)?
    } else {
        decode_header_v2(&mut d)?
    };
    d.finish()?;
    Ok(header)
}

fn decode_header_v2(d: &mut Decoder<'_>) -> Result<PartitionHeader> {
    let flags = d.u8()?;
    if flags & !HEADER_FLAGS != 0 {
        return Err(d.corrupt("invalid partition header flags"));
    }
    let key = Bytes::copy_from_slice(d.varslice()?);
    let token = if flags & EXPLICIT_TOKEN != 0 {
        d.i64()?
    } else {
        implied_token(&key)
    };
    let deletion = if flags & PARTITION_DELETION != 0 {
        d.codec(|r| r.deletion())?
    } else {
        DeletionTime::LIVE
    };
    let static_row = if flags & STATIC_ROW != 0 {
        Some(d.codec(|r| r.row())?)
    } else {
        None
    };
    let count = if flags & RANGE_TOMBSTONES != 0 {
        d.varcount()?
    } else {
        0
    };
    Ok(PartitionHeader {
        key: PartitionKey { token, key },
        deletion,
        static_row,
        range_tombstones: range_tombstones(d, count)?,
    })
}

fn decode_header_v1(d: &mut Decoder<'_>) -> Result<PartitionHeader> {
    let key = PartitionKey {
        token: d.i64()?,
        key: d.bytes()?,
    };
    let deletion = d.codec(|r| r.deletion())?;
    let static_row = match d.u8()? {
        0 => None,
        1 => Some(d.codec(|r| r.row())?),
        _ => return Err(d.corrupt("invalid static-row flag")),
    };
    let count = d.count(14)?;
    Ok(PartitionHeader {
        key,
        deletion,
        static_row,
        range_tombstones: range_tombstones(d, count)?,
    })
}

fn range_tombstones(d: &mut Decoder<'_>, count: usize) -> Result<Vec<RangeTombstone>> {
    let mut range_tombstones = Vec::with_capacity(count);
    for _ in 0..count {
        range_tombstones.push(RangeTombstone {
            start: d.codec(|r| r.bound())?,
            end: d.codec(|r| r.bound())?,
            deletion: d.codec(|r| r.deletion())?,
        });
    }
    Ok(range_tombstones)
}

/// The row of a record, its values (and names, when `numbering` is `None`) slices of
/// `record`'s buffer; `numbering` is the SSTable's when its rows are numbered (version 2).
pub(crate) fn decode_row(
    record: &Bytes,
    file: &Path,
    offset: u64,
    numbering: Option<Numbering<'_>>,
) -> Result<Row> {
    let mut d = Decoder::new(record, file, offset);
    let row = match numbering {
        Some(numbering) => d.codec(|r| r.shared_numbered_row(record, numbering))?,
        None => d.codec(|r| r.shared_row(record))?,
    };
    d.finish()?;
    Ok(row)
}

/// Whether `clustering` comes before the start bound of a slice.
pub(crate) fn before_start(clustering: &[u8], start: &Bound<Bytes>) -> bool {
    match start {
        Bound::Unbounded => false,
        Bound::Included(s) => clustering < s.as_ref(),
        Bound::Excluded(s) => clustering <= s.as_ref(),
    }
}

/// Whether `clustering` comes after the end bound of a slice.
pub(crate) fn after_end(clustering: &[u8], end: &Bound<Bytes>) -> bool {
    match end {
        Bound::Unbounded => false,
        Bound::Included(e) => clustering > e.as_ref(),
        Bound::Excluded(e) => clustering >= e.as_ref(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sstable::format::read_varint;
    use mutation::{Cell, ColumnData};

    fn b(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    #[test]
    fn header_and_rows_round_trip() {
        let mut row = Row::new(b("c"));
        row.columns = vec![ColumnData::simple("v", Cell::live(3, b("x")))];
        let data = PartitionData {
            partition_deletion: DeletionTime::new(1, 2),
            static_row: Some(Row::new(Bytes::new())),
            rows: Default::default(),
            range_tombstones: vec![RangeTombstone {
                start: Bound::Excluded(b("a")),
                end: Bound::Unbounded,
                deletion: DeletionTime::new(4, 5),
            }],
        };
        let key = PartitionKey {
            token: -9,
            key: b("k"),
        };
        let file = Path::new("d");
        let record = |put: &dyn Fn(&mut Vec<u8>)| {
            let mut out = vec![7]; // records append after what the buffer holds
            put(&mut out);
            let (len, used) = read_varint(&out[1..]).expect("length");
            assert_eq!(len as usize, out.len() - 1 - used);
            out.split_off(1 + used)
        };
        let header = record(&|out| put_header_record(out, &key, &data));
        let decoded = decode_header(&header, file, 0, 2).expect("header");
        assert_eq!(decoded.into_data(), (key.clone(), data.clone()));
        assert!(
            decode_header(&header, file, 0, 1).is_err(),
            "not a version 1 header"
        );
        // The usual partition: its token implied by its key, nothing else in the header.
        let plain = PartitionKey {
            token: ring::murmur3_token(b"0123456789"),
            key: b("0123456789"),
        };
        let header = record(&|out| put_header_record(out, &plain, &PartitionData::default()));
        assert_eq!(header.len(), 1 + 1 + 10);
        let decoded = decode_header(&header, file, 0, 2).expect("header");
        assert_eq!(decoded.into_data(), (plain, PartitionData::default()));
        let mut numbers = ColumnNumbers::default();
        let mut bad = record(&|out| {
            let mut numbers = ColumnNumbers::default();
            numbers.put_row_record(out, &row).expect("row");
        });
        let mut out = Vec::new();
        numbers.put_row_record(&mut out, &row).expect("row");
        let numbering = numbers.into_numbering();
        assert_eq!(numbering.names, vec![b("v")]);
        assert_eq!(numbering.lengths, vec![1]);
        let numbering = Some(numbering.as_codec());
        let decoded = decode_row(&bad.clone().into(), file, 0, numbering).expect("row");
        assert_eq!(decoded, row);
        assert!(
            decode_row(&bad.clone().into(), file, 0, None).is_err(),
            "numbered"
        );
        bad.push(0);
        assert!(decode_row(&bad.into(), file, 0, numbering).is_err());
    }

    #[test]
    fn bound_comparisons() {
        let (inc, exc) = (Bound::Included(b("b")), Bound::Excluded(b("b")));
        assert!(before_start(b"b", &exc) && !before_start(b"b", &inc));
        assert!(after_end(b"b", &exc) && !after_end(b"b", &inc));
    }
}
