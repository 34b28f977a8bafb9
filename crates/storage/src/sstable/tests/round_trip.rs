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
use mutation::testing::{bound, partition_key, update};
use mutation::{PartitionKey, PartitionUpdate};

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
        memtable.apply(key, update.clone());
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
        prop_assert_eq!(sstable.stats().first_key.as_ref(), keys.first());
        prop_assert_eq!(sstable.stats().last_key.as_ref(), keys.last());

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
