//! Tests of the SSTable writer and reader against the memtable as a reference.

mod caching;
mod corruption;
mod format1;
mod lifecycle;
mod round_trip;

use std::ops::Bound;
use std::path::Path;

use bytes::Bytes;

use crate::engine::PartitionSource;
use crate::filter::{KeyRange, ReadFilter};
use crate::memtable::Memtable;
use crate::sstable::{Descriptor, Sstable, SstableWriter, WriteOptions};
use mutation::{
    Cell, ColumnData, DeletionTime, LivenessInfo, PartitionKey, PartitionUpdate, RangeTombstone,
    Row,
};

pub(super) fn key(token: i64, name: &str) -> PartitionKey {
    PartitionKey {
        token,
        key: Bytes::copy_from_slice(name.as_bytes()),
    }
}

pub(super) fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

/// Writes every partition of `memtable` to SSTable `generation` in `dir`.
pub(super) fn flush(
    memtable: &Memtable,
    dir: &Path,
    generation: u64,
    options: WriteOptions,
) -> Descriptor {
    let mut writer = SstableWriter::create(dir, generation, options).expect("create writer");
    for key in memtable.keys(&KeyRange::all()) {
        let key = key.expect("memtable key");
        let data = memtable
            .partition(&key, &ReadFilter::all())
            .expect("memtable read")
            .expect("listed partition exists");
        writer.append(&key, &data).expect("append");
    }
    writer.finish().expect("finish")
}

pub(super) fn open(desc: &Descriptor) -> Sstable {
    Sstable::open(desc).expect("open sstable")
}

/// A small memtable with every kind of data: static rows, TTLs, tombstones of all levels,
/// collections.
pub(super) fn sample_memtable() -> Memtable {
    let memtable = Memtable::new();
    for (i, token) in [-50i64, -1, 0, 7, 7, 99].into_iter().enumerate() {
        let name = format!("k{i}");
        let mut rows = Vec::new();
        for c in 0..20u8 {
            let mut row = Row::new(Bytes::from(vec![c]));
            row.liveness = Some(LivenessInfo::expiring(10, 100, 1000));
            row.columns = vec![
                ColumnData::simple("a", Cell::live(10 + i64::from(c), b("value"))),
                ColumnData::simple("b", Cell::tombstone(11, 900)),
                ColumnData::complex(
                    "m",
                    DeletionTime::new(5, 800),
                    vec![Cell::expiring(12, 60, 1000, b("x")).with_path(b("p1"))],
                ),
            ];
            if c % 7 == 0 {
                row.deletion = DeletionTime::new(9, 950);
            }
            rows.push(row);
        }
        let mut static_row = Row::new(Bytes::new());
        static_row.columns = vec![ColumnData::simple("s", Cell::live(3, b("static")))];
        let update = PartitionUpdate {
            partition_deletion: if token == 0 {
                DeletionTime::new(1, 700)
            } else {
                DeletionTime::LIVE
            },
            static_row: Some(static_row),
            rows,
            range_tombstones: vec![RangeTombstone {
                start: Bound::Included(Bytes::from(vec![3])),
                end: Bound::Excluded(Bytes::from(vec![6])),
                deletion: DeletionTime::new(20, 990),
            }],
        };
        memtable.apply(&key(token, &name), update);
    }
    memtable
}
