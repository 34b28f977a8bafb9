//! How one partition is laid out in the uncompressed Data stream: a header record (key,
//! partition deletion, static row, range tombstones), one record per row in clustering order,
//! and an empty record ending the partition. Every record is a `u32` length and its bytes; rows
//! and bounds use the mutation codec's encodings.

use std::ops::Bound;
use std::path::Path;

use bytes::{BufMut, Bytes};

use crate::error::Result;
use crate::partition::PartitionData;
use crate::sstable::format::{put_bytes, Decoder};
use mutation::codec::{put_bound, put_deletion, put_row};
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

/// Appends a record: a `u32` length, then the body `body` writes (in place, not copied).
fn put_record(out: &mut Vec<u8>, body: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.put_u32(0);
    body(out);
    let len = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

/// Appends the header record of `data`.
pub(crate) fn put_header_record(out: &mut Vec<u8>, key: &PartitionKey, data: &PartitionData) {
    put_record(out, |out| {
        out.put_i64(key.token);
        put_bytes(out, &key.key);
        put_deletion(out, &data.partition_deletion);
        match &data.static_row {
            Some(row) => {
                out.put_u8(1);
                put_row(out, row);
            }
            None => out.put_u8(0),
        }
        out.put_u32(data.range_tombstones.len() as u32);
        for tombstone in &data.range_tombstones {
            put_bound(out, &tombstone.start);
            put_bound(out, &tombstone.end);
            put_deletion(out, &tombstone.deletion);
        }
    })
}

/// Appends the record of `row`.
pub(crate) fn put_row_record(out: &mut Vec<u8>, row: &Row) {
    put_record(out, |out| put_row(out, row))
}

/// Appends the record of a row already in its encoding.
pub(crate) fn put_encoded_row_record(out: &mut Vec<u8>, encoded: &[u8]) {
    put_record(out, |out| out.extend_from_slice(encoded))
}

pub(crate) fn decode_header(bytes: &[u8], file: &Path, offset: u64) -> Result<PartitionHeader> {
    let mut d = Decoder::new(bytes, file, offset);
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
    let mut range_tombstones = Vec::with_capacity(count);
    for _ in 0..count {
        range_tombstones.push(RangeTombstone {
            start: d.codec(|r| r.bound())?,
            end: d.codec(|r| r.bound())?,
            deletion: d.codec(|r| r.deletion())?,
        });
    }
    d.finish()?;
    Ok(PartitionHeader {
        key,
        deletion,
        static_row,
        range_tombstones,
    })
}

/// The row of a record, its names and values slices of `record`'s buffer.
pub(crate) fn decode_row(record: &Bytes, file: &Path, offset: u64) -> Result<Row> {
    let mut d = Decoder::new(record, file, offset);
    let row = d.codec(|r| r.shared_row(record))?;
    d.finish()?;
    Ok(row)
}

/// Whether the range `start..end` lies entirely before `other_start`.
pub(crate) fn ends_before(end: &Bound<Bytes>, other_start: &Bound<Bytes>) -> bool {
    match (end, other_start) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => false,
        (Bound::Included(e), Bound::Included(s)) => e < s,
        (Bound::Included(e), Bound::Excluded(s))
        | (Bound::Excluded(e), Bound::Included(s))
        | (Bound::Excluded(e), Bound::Excluded(s)) => e <= s,
    }
}

/// Whether two clustering ranges share a point.
pub(crate) fn ranges_overlap(
    a: (&Bound<Bytes>, &Bound<Bytes>),
    b: (&Bound<Bytes>, &Bound<Bytes>),
) -> bool {
    !ends_before(a.1, b.0) && !ends_before(b.1, a.0)
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
            let len = u32::from_be_bytes(out[1..5].try_into().expect("length"));
            assert_eq!(len as usize, out.len() - 5);
            out.split_off(5)
        };
        let header = record(&|out| put_header_record(out, &key, &data));
        let header = decode_header(&header, file, 0).expect("header");
        assert_eq!(header.clone().into_data(), (key, data));
        let mut bad = record(&|out| put_row_record(out, &row));
        assert_eq!(decode_row(&bad.clone().into(), file, 0).expect("row"), row);
        bad.push(0);
        assert!(decode_row(&bad.into(), file, 0).is_err());
    }

    #[test]
    fn bound_comparisons() {
        let (inc, exc) = (Bound::Included(b("b")), Bound::Excluded(b("b")));
        assert!(!ends_before(&inc, &inc));
        assert!(ends_before(&exc, &inc));
        assert!(ends_before(&inc, &exc));
        assert!(ranges_overlap(
            (&Bound::Unbounded, &inc),
            (&inc, &Bound::Unbounded)
        ));
        assert!(!ranges_overlap(
            (&Bound::Unbounded, &exc),
            (&inc, &Bound::Unbounded)
        ));
        assert!(before_start(b"b", &exc) && !before_start(b"b", &inc));
        assert!(after_end(b"b", &exc) && !after_end(b"b", &inc));
    }
}
