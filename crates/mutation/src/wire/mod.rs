//! The binary form of what a replica is asked — [`ReadFilter`], [`KeyRange`] — and of the
//! partition content it answers with, on the model's codec ([`crate::codec`]); the answers
//! themselves (`SourceRows`, `ScanSource`) in `answers`. Decoding checks every length and tag
//! and never panics on bad input.

mod answers;
#[cfg(test)]
mod tests;

use std::ops::Bound;
use std::sync::Arc;

use bytes::BufMut;

use crate::codec::{put_bound, put_bytes, put_deletion, put_len, put_row, DecodeError, Reader};
use crate::filter::{KeyRange, PartitionPosition, ReadFilter};
use crate::{DeletionTime, PartitionKey, PartitionUpdate, RangeTombstone, Row};

pub use answers::{
    partition_data, put_partition_data, put_scan_source, put_source_rows, scan_source, source_rows,
};

pub type Decoded<T> = Result<T, DecodeError>;

/// Decodes the whole of `bytes` with `read`; bytes left over are an error.
pub fn decode_all<T>(bytes: &[u8], read: impl FnOnce(&mut Reader<'_>) -> Decoded<T>) -> Decoded<T> {
    let mut reader = Reader { bytes };
    let value = read(&mut reader)?;
    if !reader.bytes.is_empty() {
        return Err(DecodeError("bytes after the end of the payload"));
    }
    Ok(value)
}

pub fn put_read_filter(out: &mut Vec<u8>, filter: &ReadFilter) {
    put_len(out, filter.slices.len());
    for (start, end) in &filter.slices {
        put_bound(out, start);
        put_bound(out, end);
    }
    out.put_u8(u8::from(filter.reversed));
    put_limit(out, filter.row_limit);
    put_limit(out, filter.total_row_limit);
    out.put_u8(u8::from(filter.include_static));
    put_option(out, filter.columns.as_ref(), |out, columns| {
        put_len(out, columns.len());
        for column in columns.iter() {
            put_bytes(out, column);
        }
    });
}

pub fn read_filter(r: &mut Reader<'_>) -> Decoded<ReadFilter> {
    let slices = counted(r, |r| Ok((r.bound()?, r.bound()?)))?;
    Ok(ReadFilter {
        slices,
        reversed: r.flag()?,
        row_limit: limit(r)?,
        total_row_limit: limit(r)?,
        include_static: r.flag()?,
        columns: option(r, |r| counted(r, Reader::bytes))?.map(Arc::from),
    })
}

pub fn put_key_range(out: &mut Vec<u8>, range: &KeyRange) {
    put_position_bound(out, &range.start);
    put_position_bound(out, &range.end);
}

pub fn key_range(r: &mut Reader<'_>) -> Decoded<KeyRange> {
    Ok(KeyRange {
        start: position_bound(r)?,
        end: position_bound(r)?,
    })
}

pub fn put_key(out: &mut Vec<u8>, key: &PartitionKey) {
    out.put_i64(key.token);
    put_bytes(out, &key.key);
}

pub fn key(r: &mut Reader<'_>) -> Decoded<PartitionKey> {
    Ok(PartitionKey {
        token: r.i64()?,
        key: r.bytes()?,
    })
}

fn put_position_bound(out: &mut Vec<u8>, bound: &Bound<PartitionPosition>) {
    let (tag, position) = match bound {
        Bound::Unbounded => (0, None),
        Bound::Included(p) => (1, Some(p)),
        Bound::Excluded(p) => (2, Some(p)),
    };
    out.put_u8(tag);
    match position {
        Some(PartitionPosition::Token(token)) => {
            out.put_u8(0);
            out.put_i64(*token);
        }
        Some(PartitionPosition::Key(k)) => {
            out.put_u8(1);
            put_key(out, k);
        }
        None => {}
    }
}

fn position_bound(r: &mut Reader<'_>) -> Decoded<Bound<PartitionPosition>> {
    let tag = r.u8()?;
    if tag == 0 {
        return Ok(Bound::Unbounded);
    }
    let position = match r.u8()? {
        0 => PartitionPosition::Token(r.i64()?),
        1 => PartitionPosition::Key(key(r)?),
        _ => return Err(DecodeError("invalid partition position tag")),
    };
    match tag {
        1 => Ok(Bound::Included(position)),
        2 => Ok(Bound::Excluded(position)),
        _ => Err(DecodeError("invalid bound tag")),
    }
}

fn put_limit(out: &mut Vec<u8>, limit: Option<usize>) {
    put_option(out, limit.as_ref(), |out, n| {
        out.put_u64(u64::try_from(*n).unwrap_or(u64::MAX));
    });
}

fn limit(r: &mut Reader<'_>) -> Decoded<Option<usize>> {
    option(r, |r| {
        let n = u64::from_be_bytes(r.i64()?.to_be_bytes());
        // A limit beyond the address space cannot be reached: it is no limit.
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    })
}

pub fn put_option<T: ?Sized>(out: &mut Vec<u8>, value: Option<&T>, put: impl Fn(&mut Vec<u8>, &T)) {
    match value {
        Some(value) => {
            out.put_u8(1);
            put(out, value);
        }
        None => out.put_u8(0),
    }
}

pub fn option<'a, T>(
    r: &mut Reader<'a>,
    read: impl Fn(&mut Reader<'a>) -> Decoded<T>,
) -> Decoded<Option<T>> {
    if r.flag()? {
        Ok(Some(read(r)?))
    } else {
        Ok(None)
    }
}

/// A count then that many items; the count is checked against the payload left.
pub fn counted<'a, T>(
    r: &mut Reader<'a>,
    read: impl Fn(&mut Reader<'a>) -> Decoded<T>,
) -> Decoded<Vec<T>> {
    let count = r.len()?;
    let mut items = Vec::with_capacity(count.min(1024));
    for _ in 0..count {
        items.push(read(r)?);
    }
    Ok(items)
}

/// The parts of a partition's content an answer carries, borrowed from whatever holds them.
pub struct Content<'a> {
    pub partition_deletion: &'a DeletionTime,
    pub static_row: Option<&'a Row>,
    /// How many rows follow.
    pub rows: usize,
    pub range_tombstones: &'a [RangeTombstone],
}

/// `content` with its `rows` (in clustering order, as many as `content.rows` says) and its
/// range tombstones sorted by their encoding, so equal data encodes the same whatever order
/// its tombstones were added in.
pub fn put_content<'a>(
    out: &mut Vec<u8>,
    content: &Content<'_>,
    rows: impl Iterator<Item = &'a Row>,
) {
    put_deletion(out, content.partition_deletion);
    put_option(out, content.static_row, put_row);
    put_len(out, content.rows);
    for row in rows {
        put_row(out, row);
    }
    let mut tombstones: Vec<Vec<u8>> = content
        .range_tombstones
        .iter()
        .map(|t| {
            let mut encoded = Vec::new();
            put_bound(&mut encoded, &t.start);
            put_bound(&mut encoded, &t.end);
            put_deletion(&mut encoded, &t.deletion);
            encoded
        })
        .collect();
    tombstones.sort();
    put_len(out, tombstones.len());
    for tombstone in tombstones {
        out.put_slice(&tombstone);
    }
}

/// Content written by [`put_content`], as an update.
pub fn partition_update(r: &mut Reader<'_>) -> Decoded<PartitionUpdate> {
    Ok(PartitionUpdate {
        partition_deletion: r.deletion()?,
        static_row: option(r, Reader::row)?,
        rows: counted(r, Reader::row)?,
        range_tombstones: counted(r, |r| {
            Ok(RangeTombstone {
                start: r.bound()?,
                end: r.bound()?,
                deletion: r.deletion()?,
            })
        })?,
    })
}
