//! Property test: random partitions written to an SSTable read back exactly as the memtable
//! that produced them holds them, for every compression, chunk size and row-index granularity.

use std::collections::BTreeSet;
use std::ops::Bound;

use bytes::Bytes;
use proptest::prelude::*;

use super::{flush, open};
use crate::engine::{read_sources, PartitionSource};
use crate::filter::{KeyRange, PartitionPosition, ReadFilter, Slice};
use crate::memtable::Memtable;
use crate::sstable::{Compression, WriteOptions};
use mutation::{
    Cell, ColumnData, DeletionTime, LivenessInfo, PartitionKey, PartitionUpdate, RangeTombstone,
    Row,
};

fn clustering() -> impl Strategy<Value = Bytes> {
    prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0x7f, 0xff]), 0..3)
        .prop_map(Bytes::from)
}

fn bound() -> impl Strategy<Value = Bound<Bytes>> {
    prop_oneof![
        Just(Bound::Unbounded),
        clustering().prop_map(Bound::Included),
        clustering().prop_map(Bound::Excluded),
    ]
}

fn deletion() -> impl Strategy<Value = DeletionTime> {
    prop_oneof![
        2 => Just(DeletionTime::LIVE),
        1 => (0i64..20, 0i32..200).prop_map(|(ts, now)| DeletionTime::new(ts, now)),
    ]
}

fn cell() -> impl Strategy<Value = Cell> {
    let value = prop::collection::vec(any::<u8>(), 0..6).prop_map(Bytes::from);
    prop_oneof![
        (0i64..20, value.clone()).prop_map(|(ts, v)| Cell::live(ts, v)),
        (0i64..20, 1i32..50, 0i32..100, value)
            .prop_map(|(ts, ttl, now, v)| Cell::expiring(ts, ttl, now, v)),
        (0i64..20, 0i32..200).prop_map(|(ts, now)| Cell::tombstone(ts, now)),
    ]
}

fn column() -> impl Strategy<Value = ColumnData> {
    let name = prop::sample::select(vec!["a", "b", "c"]);
    prop_oneof![
        (name.clone(), cell()).prop_map(|(n, c)| ColumnData::simple(n, c)),
        (
            name,
            deletion(),
            prop::collection::btree_map(clustering(), cell(), 0..3)
        )
            .prop_map(|(n, d, cells)| {
                let cells = cells
                    .into_iter()
                    .map(|(path, c)| c.with_path(path))
                    .collect();
                ColumnData::complex(n, d, cells)
            }),
    ]
}

fn row(clustering: impl Strategy<Value = Bytes>) -> impl Strategy<Value = Row> {
    let liveness = prop_oneof![
        Just(None),
        (0i64..20).prop_map(|ts| Some(LivenessInfo::new(ts))),
        (0i64..20, 1i32..50, 0i32..100)
            .prop_map(|(ts, ttl, now)| Some(LivenessInfo::expiring(ts, ttl, now))),
    ];
    let columns =
        prop::collection::btree_map(prop::sample::select(vec!["a", "b", "c"]), column(), 0..3);
    (clustering, liveness, deletion(), columns).prop_map(
        |(clustering, liveness, deletion, columns)| Row {
            clustering,
            liveness,
            deletion,
            columns: columns
                .into_iter()
                .map(|(name, mut c)| {
                    c.name = Bytes::from_static(name.as_bytes());
                    c
                })
                .collect(),
        },
    )
}

fn update() -> impl Strategy<Value = PartitionUpdate> {
    let tombstone =
        (bound(), bound(), deletion()).prop_map(|(start, end, deletion)| RangeTombstone {
            start,
            end,
            deletion,
        });
    (
        deletion(),
        prop::option::of(row(Just(Bytes::new()))),
        prop::collection::vec(row(clustering()), 0..12),
        prop::collection::vec(tombstone, 0..3),
    )
        .prop_map(
            |(partition_deletion, static_row, rows, range_tombstones)| PartitionUpdate {
                partition_deletion,
                static_row,
                rows,
                range_tombstones,
            },
        )
}

fn partition_key() -> impl Strategy<Value = PartitionKey> {
    (
        prop::sample::select(vec![i64::MIN + 1, -5, 0, 3, i64::MAX]),
        0u8..4,
    )
        .prop_map(|(token, k)| PartitionKey {
            token,
            key: Bytes::from(vec![b'k', k]),
        })
}

fn options() -> impl Strategy<Value = WriteOptions> {
    let compression = prop::sample::select(vec![
        Compression::None,
        Compression::Lz4,
        Compression::Zstd { level: 3 },
    ]);
    let chunk = prop::sample::select(vec![16usize, 100, 4096, 16 * 1024]);
    let block = prop::sample::select(vec![1usize, 40, 64 * 1024]);
    (compression, chunk, block).prop_map(|(compression, chunk_length, row_index_block)| {
        WriteOptions {
            compression,
            chunk_length,
            row_index_block,
            ..WriteOptions::default()
        }
    })
}

fn filter() -> impl Strategy<Value = ReadFilter> {
    let slices = prop::collection::vec((bound(), bound()), 0..3);
    (
        slices,
        any::<bool>(),
        any::<bool>(),
        prop::option::of(1usize..4),
    )
        .prop_map(|(slices, reversed, include_static, row_limit)| ReadFilter {
            slices: sorted_slices(slices),
            reversed,
            row_limit,
            total_row_limit: None,
            include_static,
            columns: None,
        })
}

/// Filters hold sorted slices; sort by start so arbitrary bounds make a plausible filter.
fn sorted_slices(mut slices: Vec<Slice>) -> Vec<Slice> {
    slices.sort_by_key(|s| start_key(&s.0));
    slices
}

fn start_key(bound: &Bound<Bytes>) -> (Option<Bytes>, bool) {
    match bound {
        Bound::Unbounded => (None, false),
        Bound::Included(b) => (Some(b.clone()), false),
        Bound::Excluded(b) => (Some(b.clone()), true),
    }
}

fn key_range() -> impl Strategy<Value = KeyRange> {
    let position = prop_oneof![
        prop::sample::select(vec![-5i64, 0, 3]).prop_map(PartitionPosition::Token),
        partition_key().prop_map(PartitionPosition::Key),
    ];
    let bound = prop_oneof![
        Just(Bound::Unbounded),
        position.clone().prop_map(Bound::Included),
        position.prop_map(Bound::Excluded),
    ];
    (bound.clone(), bound).prop_map(|(start, end)| KeyRange { start, end })
}

fn memtable_of(writes: &[(PartitionKey, PartitionUpdate)]) -> Memtable {
    let memtable = Memtable::new();
    for (key, update) in writes {
        memtable.apply(key, update);
    }
    memtable
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn sstable_reads_equal_memtable_reads(
        writes in prop::collection::vec((partition_key(), update()), 1..12),
        options in options(),
        filters in prop::collection::vec(filter(), 1..5),
        ranges in prop::collection::vec(key_range(), 1..4),
        now in prop::sample::select(vec![0i32, 60, 150, 1000]),
    ) {
        let memtable = memtable_of(&writes);
        let dir = tempfile::tempdir().expect("tempdir");
        let sstable = open(&flush(&memtable, dir.path(), 1, options));
        let keys: BTreeSet<PartitionKey> = writes.iter().map(|(k, _)| k.clone()).collect();
        prop_assert_eq!(sstable.stats().partitions, keys.len() as u64);

        let iterated: Vec<_> = sstable.iter().collect::<crate::Result<_>>().expect("iterate");
        prop_assert_eq!(iterated.len(), keys.len());
        for (key, data) in &iterated {
            let expected = memtable.partition(key, &ReadFilter::all()).expect("memtable");
            prop_assert_eq!(Some(data), expected.as_ref());
            prop_assert!(sstable.may_contain(key));
            prop_assert_eq!(sstable.read(key, &ReadFilter::all()).expect("read"), expected);
        }
        for key in &keys {
            for filter in &filters {
                let from_sstable = read_sources(&[&sstable], key, filter, now, &mut Default::default()).expect("sstable read");
                let from_memtable = read_sources(&[&memtable], key, filter, now, &mut Default::default()).expect("memtable read");
                prop_assert_eq!(from_sstable, from_memtable, "filter {:?}", filter);
                let raw = sstable.read(key, filter).expect("read").expect("present");
                let reference = memtable.partition(key, filter).expect("memtable").expect("present");
                prop_assert_eq!(raw.rows, reference.rows);
                for cap in [1usize, 2, 5] {
                    let capped = sstable.read_capped(key, filter, cap).expect("read").expect("present");
                    let reference = memtable.read_capped(key, filter, cap).expect("memtable").expect("present");
                    prop_assert_eq!(capped.data.rows, reference.data.rows, "cap {} filter {:?}", cap, filter);
                    prop_assert_eq!(capped.stopped_at, reference.stopped_at);
                }
            }
        }
        let absent = PartitionKey { token: 1, key: Bytes::from_static(b"absent") };
        prop_assert_eq!(sstable.read(&absent, &ReadFilter::all()).expect("read"), None);
        for range in &ranges {
            let from_sstable: Vec<_> = sstable.keys(range).collect::<crate::Result<_>>().expect("scan");
            let from_memtable: Vec<_> = memtable.keys(range).collect::<crate::Result<_>>().expect("scan");
            prop_assert_eq!(from_sstable, from_memtable, "range {:?}", range);
        }
    }
}
