//! A partition's digest for validation: SHA-256 over its key and content, fed field by field in
//! a fixed order (rows in clustering order, columns in name order, range tombstones sorted by
//! their encoding), so equal data gives an equal digest on every replica whatever the SSTables
//! or memtables it was merged from. Everything a replica must agree on is hashed: deletions,
//! row markers, every cell's timestamp, TTL, expiry or deletion time, value and path.

use std::ops::Bound;

use bytes::Bytes;
use mutation::{
    Cell, ColumnValue, DeletionTime, LivenessInfo, PartitionData, PartitionKey, RangeTombstone, Row,
};
use sha2::{Digest, Sha256};

use crate::merkle::Hash;

/// The digest of one partition as validation read it.
pub fn partition(key: &PartitionKey, data: &PartitionData) -> Hash {
    let mut out = Vec::with_capacity(256);
    put_bytes(&mut out, &key.key);
    put_deletion(&mut out, data.partition_deletion);
    match &data.static_row {
        Some(row) => {
            out.push(1);
            put_row(&mut out, row);
        }
        None => out.push(0),
    }
    out.extend_from_slice(&(data.rows.len() as u64).to_be_bytes());
    for row in data.rows.values() {
        put_row(&mut out, row);
    }
    let mut tombstones: Vec<Vec<u8>> = data.range_tombstones.iter().map(tombstone).collect();
    tombstones.sort();
    out.extend_from_slice(&(tombstones.len() as u64).to_be_bytes());
    for t in tombstones {
        out.extend_from_slice(&t);
    }
    Sha256::digest(&out).into()
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn put_deletion(out: &mut Vec<u8>, deletion: DeletionTime) {
    out.extend_from_slice(&deletion.marked_for_delete_at.to_be_bytes());
    out.extend_from_slice(&deletion.local_deletion_time.to_be_bytes());
}

fn put_liveness(out: &mut Vec<u8>, liveness: Option<LivenessInfo>) {
    match liveness {
        Some(l) => {
            out.push(1);
            out.extend_from_slice(&l.timestamp.to_be_bytes());
            out.extend_from_slice(&l.ttl.to_be_bytes());
            out.extend_from_slice(&l.local_expiration_time.to_be_bytes());
        }
        None => out.push(0),
    }
}

fn put_row(out: &mut Vec<u8>, row: &Row) {
    put_bytes(out, &row.clustering);
    put_liveness(out, row.liveness);
    put_deletion(out, row.deletion);
    out.extend_from_slice(&(row.columns.len() as u64).to_be_bytes());
    for column in &row.columns {
        put_bytes(out, &column.name);
        match &column.value {
            ColumnValue::Simple(cell) => {
                out.push(0);
                put_cell(out, cell);
            }
            ColumnValue::Complex(complex) => {
                out.push(1);
                put_deletion(out, complex.deletion);
                out.extend_from_slice(&(complex.cells.len() as u64).to_be_bytes());
                for cell in &complex.cells {
                    put_cell(out, cell);
                }
            }
        }
    }
}

fn put_cell(out: &mut Vec<u8>, cell: &Cell) {
    out.extend_from_slice(&cell.timestamp.to_be_bytes());
    out.extend_from_slice(&cell.ttl.to_be_bytes());
    out.extend_from_slice(&cell.local_deletion_time.to_be_bytes());
    out.push(u8::from(cell.counter));
    put_optional(out, cell.value.as_ref());
    put_optional(out, cell.path.as_ref());
}

fn put_optional(out: &mut Vec<u8>, bytes: Option<&Bytes>) {
    match bytes {
        Some(b) => {
            out.push(1);
            put_bytes(out, b);
        }
        None => out.push(0),
    }
}

fn tombstone(t: &RangeTombstone) -> Vec<u8> {
    let mut out = Vec::new();
    put_bound(&mut out, &t.start);
    put_bound(&mut out, &t.end);
    put_deletion(&mut out, t.deletion);
    out
}

fn put_bound(out: &mut Vec<u8>, bound: &Bound<Bytes>) {
    match bound {
        Bound::Included(b) => {
            out.push(0);
            put_bytes(out, b);
        }
        Bound::Excluded(b) => {
            out.push(1);
            put_bytes(out, b);
        }
        Bound::Unbounded => out.push(2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutation::{ColumnData, PartitionUpdate};

    fn key() -> PartitionKey {
        PartitionKey {
            token: 7,
            key: Bytes::from_static(b"k"),
        }
    }

    fn row(c: &'static str, value: &'static str, timestamp: i64) -> Row {
        let mut row = Row::new(Bytes::from_static(c.as_bytes()));
        row.liveness = Some(LivenessInfo::new(timestamp));
        row.columns = vec![ColumnData::simple(
            "v",
            Cell::live(timestamp, Bytes::from_static(value.as_bytes())),
        )];
        row
    }

    fn data(rows: Vec<Row>) -> PartitionData {
        let mut data = PartitionData::default();
        data.apply(PartitionUpdate {
            rows,
            ..PartitionUpdate::default()
        });
        data
    }

    #[test]
    fn equal_content_hashes_alike_whatever_the_order_it_arrived_in() {
        let a = data(vec![row("a", "1", 1), row("b", "2", 1)]);
        let b = data(vec![row("b", "2", 1), row("a", "1", 1)]);
        assert_eq!(partition(&key(), &a), partition(&key(), &b));
    }

    #[test]
    fn a_changed_value_timestamp_or_deletion_changes_the_digest() {
        let base = partition(&key(), &data(vec![row("a", "1", 1)]));
        assert_ne!(base, partition(&key(), &data(vec![row("a", "2", 1)])));
        assert_ne!(base, partition(&key(), &data(vec![row("a", "1", 2)])));
        let mut deleted = data(vec![row("a", "1", 1)]);
        deleted.partition_deletion = DeletionTime::new(0, 5);
        assert_ne!(base, partition(&key(), &deleted));
        let other_key = PartitionKey {
            token: 7,
            key: Bytes::from_static(b"j"),
        };
        assert_ne!(base, partition(&other_key, &data(vec![row("a", "1", 1)])));
    }
}
