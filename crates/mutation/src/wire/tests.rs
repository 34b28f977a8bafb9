use super::*;
use crate::scan::ScanSource;
use crate::testing::{arb_partition_data, bound, partition_key};
use crate::{
    Cell, ColumnData, DeletionTime, KeyRange, PartitionData, PartitionPosition, PartitionUpdate,
    ReadFilter, Row, SourceRows,
};
use bytes::Bytes;
use proptest::prelude::*;
use std::ops::Bound;

fn encoded<T>(value: &T, put: impl Fn(&mut Vec<u8>, &T)) -> Vec<u8> {
    let mut out = Vec::new();
    put(&mut out, value);
    out
}

fn arb_filter() -> impl Strategy<Value = ReadFilter> {
    let columns = prop::collection::vec(prop::sample::select(vec!["a", "bb"]), 0..3)
        .prop_map(|names| names.into_iter().map(Bytes::from).collect());
    (
        prop::collection::vec((bound(), bound()), 0..3),
        any::<bool>(),
        prop::option::of(prop::sample::select(vec![0usize, 7, usize::MAX])),
        prop::option::of(0usize..1000),
        any::<bool>(),
        prop::option::of(columns),
    )
        .prop_map(
            |(slices, reversed, row_limit, total_row_limit, include_static, columns)| ReadFilter {
                slices,
                reversed,
                row_limit,
                total_row_limit,
                include_static,
                columns,
            },
        )
}

fn arb_position_bound() -> impl Strategy<Value = Bound<PartitionPosition>> {
    let position = prop_oneof![
        any::<i64>().prop_map(PartitionPosition::Token),
        partition_key().prop_map(PartitionPosition::Key),
    ];
    prop_oneof![
        Just(Bound::Unbounded),
        position.clone().prop_map(Bound::Included),
        position.prop_map(Bound::Excluded),
    ]
}

fn arb_source_rows() -> impl Strategy<Value = SourceRows> {
    let stop = prop::option::of(prop::collection::vec(any::<u8>(), 0..4).prop_map(Bytes::from));
    (arb_partition_data(), stop).prop_map(|(data, stopped_at)| SourceRows { data, stopped_at })
}

fn arb_scan_source() -> impl Strategy<Value = ScanSource> {
    (
        prop::collection::vec((partition_key(), arb_partition_data()), 0..3),
        prop::option::of(partition_key()),
    )
        .prop_map(|(partitions, stopped_at)| ScanSource {
            partitions,
            stopped_at,
        })
}

/// Tombstones in a canonical order (decoding keeps the encoded, sorted order).
fn sorted(mut data: PartitionData) -> PartitionData {
    data.range_tombstones = partition_data(&mut Reader {
        bytes: &encoded(&data, put_partition_data),
    })
    .expect("decode")
    .range_tombstones;
    data
}

/// Every strict prefix of `bytes` fails to decode, with an error rather than a panic.
fn prefixes_fail<T>(bytes: &[u8], read: impl Fn(&mut Reader<'_>) -> Decoded<T>) -> bool {
    (0..bytes.len()).all(|n| decode_all(&bytes[..n], &read).is_err())
}

proptest! {
    #[test]
    fn filters_and_ranges_round_trip(
        filter in arb_filter(),
        start in arb_position_bound(),
        end in arb_position_bound(),
    ) {
        let bytes = encoded(&filter, put_read_filter);
        prop_assert_eq!(decode_all(&bytes, read_filter), Ok(filter));
        prop_assert!(prefixes_fail(&bytes, read_filter));
        let range = KeyRange { start, end };
        let bytes = encoded(&range, put_key_range);
        prop_assert_eq!(decode_all(&bytes, key_range), Ok(range));
        prop_assert!(prefixes_fail(&bytes, key_range));
    }

    #[test]
    fn answers_round_trip(rows in arb_source_rows(), scan in arb_scan_source()) {
        let bytes = encoded(&rows, put_source_rows);
        let expected = SourceRows { data: sorted(rows.data.clone()), ..rows };
        prop_assert_eq!(decode_all(&bytes, source_rows), Ok(expected));
        prop_assert!(prefixes_fail(&bytes, source_rows));
        let bytes = encoded(&scan, put_scan_source);
        let decoded = decode_all(&bytes, scan_source).expect("decode");
        prop_assert_eq!(decoded.stopped_at, scan.stopped_at);
        let partitions: Vec<_> = scan.partitions.into_iter().map(|(k, d)| (k, sorted(d))).collect();
        prop_assert_eq!(decoded.partitions, partitions);
    }

    #[test]
    fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode_all(&bytes, read_filter);
        let _ = decode_all(&bytes, key_range);
        let _ = decode_all(&bytes, source_rows);
        let _ = decode_all(&bytes, scan_source);
    }
}

#[test]
fn bad_tags_and_trailing_bytes_are_errors() {
    let mut bytes = encoded(&KeyRange::all(), put_key_range);
    assert_eq!(decode_all(&bytes, key_range), Ok(KeyRange::all()));
    bytes.push(0);
    assert!(decode_all(&bytes, key_range).is_err());
    assert!(decode_all(&[3], key_range).is_err(), "bound tag 3");
    assert!(decode_all(&[1, 2], key_range).is_err(), "position tag 2");
    let huge_count = [0xff, 0xff, 0xff, 0xff];
    assert!(decode_all(&huge_count, read_filter).is_err());
}

fn with_row(deletion: DeletionTime, cell_ts: i64) -> SourceRows {
    let mut row = Row::new("c");
    row.deletion = deletion;
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(cell_ts, Bytes::from_static(b"x")),
    )];
    let mut data = PartitionData::default();
    data.apply(PartitionUpdate {
        rows: vec![row],
        ..Default::default()
    });
    SourceRows {
        data,
        stopped_at: None,
    }
}

#[test]
fn digests_ignore_shadowed_data_and_see_timestamps_and_tombstones() {
    let deleted = DeletionTime::new(5, 0);
    let shadowed = with_row(deleted, 3);
    let mut compacted = shadowed.clone();
    let row = compacted.data.rows.get_mut(b"c").expect("the row");
    row.columns.clear();
    assert_eq!(
        shadowed.digest(),
        compacted.digest(),
        "the cell is shadowed"
    );
    assert_ne!(
        with_row(DeletionTime::LIVE, 3).digest(),
        with_row(DeletionTime::LIVE, 4).digest()
    );
    assert_ne!(with_row(DeletionTime::LIVE, 3).digest(), shadowed.digest());
    let stopped = SourceRows {
        stopped_at: Some(Bytes::from_static(b"c")),
        ..shadowed.clone()
    };
    assert_ne!(stopped.digest(), shadowed.digest());
}
