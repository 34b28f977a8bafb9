//! Proptest strategies for the data model, for the property tests of `mutation` and of the crates
//! that store it (feature `testing`).

use std::ops::Bound;

use bytes::Bytes;
use proptest::prelude::*;

use crate::partition::PartitionData;
use crate::{
    Cell, ColumnData, DeletionTime, LivenessInfo, PartitionKey, PartitionUpdate, RangeTombstone,
    Row,
};

/// A partition key of `token` whose key bytes are the token's (so keys differ with tokens).
pub fn keyed_by_token(token: i64) -> PartitionKey {
    PartitionKey {
        token,
        key: Bytes::from(token.to_be_bytes().to_vec()),
    }
}

pub fn clustering() -> impl Strategy<Value = Bytes> {
    prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0x7f, 0xff]), 0..3)
        .prop_map(Bytes::from)
}

pub fn bound() -> impl Strategy<Value = Bound<Bytes>> {
    prop_oneof![
        Just(Bound::Unbounded),
        clustering().prop_map(Bound::Included),
        clustering().prop_map(Bound::Excluded),
    ]
}

pub fn deletion() -> impl Strategy<Value = DeletionTime> {
    prop_oneof![
        2 => Just(DeletionTime::LIVE),
        1 => (0i64..20, 0i32..200).prop_map(|(ts, now)| DeletionTime::new(ts, now)),
    ]
}

pub fn cell() -> impl Strategy<Value = Cell> {
    let value = prop::collection::vec(any::<u8>(), 0..6).prop_map(Bytes::from);
    prop_oneof![
        (0i64..20, value.clone()).prop_map(|(ts, v)| Cell::live(ts, v)),
        (0i64..20, 1i32..50, 0i32..100, value)
            .prop_map(|(ts, ttl, now, v)| Cell::expiring(ts, ttl, now, v)),
        (0i64..20, 0i32..200).prop_map(|(ts, now)| Cell::tombstone(ts, now)),
    ]
}

pub fn column() -> impl Strategy<Value = ColumnData> {
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

pub fn row(clustering: impl Strategy<Value = Bytes>) -> impl Strategy<Value = Row> {
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

pub fn update() -> impl Strategy<Value = PartitionUpdate> {
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

pub fn partition_key() -> impl Strategy<Value = PartitionKey> {
    (
        prop::sample::select(vec![i64::MIN + 1, -5, 0, 3, i64::MAX]),
        0u8..4,
    )
        .prop_map(|(token, k)| PartitionKey {
            token,
            key: Bytes::from(vec![b'k', k]),
        })
}

/// One source's reconciled version of a partition.
pub fn arb_partition_data() -> impl Strategy<Value = PartitionData> {
    update().prop_map(|update| {
        let mut data = PartitionData::default();
        data.apply(update);
        data
    })
}

/// Partition `k` with this token.
pub fn token_key(token: i64) -> PartitionKey {
    PartitionKey {
        token,
        key: Bytes::from_static(b"k"),
    }
}

/// A row at clustering `c` whose only cell, `v`, holds `x` written at `timestamp`.
pub fn one_cell_row(c: &'static str, timestamp: i64) -> Row {
    let mut row = Row::new(Bytes::from_static(c.as_bytes()));
    row.columns = vec![crate::ColumnData::simple(
        "v",
        crate::Cell::live(timestamp, Bytes::from_static(b"x")),
    )];
    row
}
