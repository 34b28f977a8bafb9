//! Writer and reader life cycle: ordering, abort, crash leftovers, statistics, level rewrite,
//! large partitions, and the merge read path over memtable + SSTable.

use std::fs;
use std::ops::Bound;

use bytes::Bytes;

use super::{b, flush, key, open, sample_memtable};
use crate::engine::{read_sources, scan_sources, PartitionSource};
use crate::error::StorageError;
use crate::filter::{KeyRange, ReadFilter};
use crate::memtable::Memtable;
use crate::sstable::caches::ReadCaches;
use crate::sstable::{
    list, Component, Compression, Descriptor, RepairMark, SstableWriter, WriteOptions,
};
use mutation::partition::PartitionData;
use mutation::{Cell, ColumnData, LivenessInfo, PartitionKey, PartitionUpdate, Row};

fn one_row(clustering: Bytes, ts: i64, value: &str) -> PartitionData {
    let mut data = PartitionData::default();
    let mut row = Row::new(clustering);
    row.columns = vec![ColumnData::simple("v", Cell::live(ts, b(value)))];
    data.apply(PartitionUpdate {
        rows: vec![row],
        ..Default::default()
    });
    data
}

#[test]
fn keys_must_ascend_and_abort_or_drop_leave_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut writer = SstableWriter::create(dir.path(), 1, WriteOptions::default()).expect("create");
    writer
        .append(&key(5, "a"), &one_row(b("c"), 1, "x"))
        .expect("first");
    assert!(matches!(
        writer.append(&key(5, "a"), &one_row(b("c"), 1, "x")),
        Err(StorageError::Invalid(_))
    ));
    assert!(matches!(
        writer.append(&key(4, "z"), &one_row(b("c"), 1, "x")),
        Err(StorageError::Invalid(_))
    ));
    writer
        .append(&key(5, "b"), &one_row(b("c"), 1, "x"))
        .expect("same token, larger key");
    assert!(writer.uncompressed_bytes() > 0);
    writer.abort();
    assert_eq!(fs::read_dir(dir.path()).expect("dir").count(), 0);

    let mut writer = SstableWriter::create(dir.path(), 2, WriteOptions::default()).expect("create");
    writer
        .append(&key(1, "a"), &one_row(b("c"), 1, "x"))
        .expect("append");
    drop(writer);
    assert_eq!(fs::read_dir(dir.path()).expect("dir").count(), 0);
}

#[test]
fn list_finds_committed_sstables_and_cleans_crash_leftovers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = flush(&sample_memtable(), dir.path(), 1, WriteOptions::default());
    let second = flush(&sample_memtable(), dir.path(), 2, WriteOptions::default());
    assert!(SstableWriter::create(dir.path(), 2, WriteOptions::default()).is_err());
    // A crash during commit: components renamed, TOC not yet.
    fs::remove_file(second.path(Component::Toc)).expect("remove TOC");
    // A crash while writing: temporary files of generation 3.
    let mut writer = SstableWriter::create(dir.path(), 3, WriteOptions::default()).expect("create");
    writer
        .append(&key(1, "a"), &one_row(b("c"), 1, "x"))
        .expect("append");
    std::mem::forget(writer);
    assert!(Descriptor::new(dir.path(), 3)
        .tmp_path(Component::Data)
        .exists());

    assert_eq!(list(dir.path()).expect("list"), vec![first.clone()]);
    let mut left: Vec<_> = fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
        .collect();
    left.sort();
    let mut expected: Vec<_> = Component::ALL
        .iter()
        .map(|c| {
            first
                .path(*c)
                .file_name()
                .and_then(|n| n.to_str())
                .map(String::from)
                .expect("name")
        })
        .collect();
    expected.sort();
    assert_eq!(left, expected);
    assert!(open(&first).stats().partitions > 0);
}

#[test]
fn statistics_count_everything_and_level_and_repair_state_are_rewritable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let desc = flush(
        &sample_memtable(),
        dir.path(),
        1,
        WriteOptions {
            level: 2,
            repair: RepairMark::repaired(77),
            ..WriteOptions::default()
        },
    );
    let sstable = open(&desc);
    let stats = sstable.stats().clone();
    assert_eq!(stats.partitions, 6);
    assert_eq!(stats.rows, 120);
    assert_eq!(
        stats.cells,
        360 + 6,
        "three cells per row plus each static cell"
    );
    assert_eq!(stats.cell_tombstones, 120);
    assert_eq!(stats.expiring_cells, 120);
    // 3 row deletions (c = 0, 7, 14) and 20 collection deletions per partition.
    assert_eq!(stats.row_tombstones, 6 * 23);
    assert_eq!(stats.range_tombstones, 6);
    assert_eq!(stats.partition_tombstones, 1);
    assert_eq!((stats.min_timestamp, stats.max_timestamp), (1, 29));
    assert_eq!(
        (stats.min_local_deletion_time, stats.max_local_deletion_time),
        (700, i32::MAX),
        "live cells never expire"
    );
    assert_eq!(
        (stats.min_token(), stats.max_token()),
        (Some(-50), Some(99))
    );
    let range = stats.clustering.clone().expect("rows present");
    assert_eq!(
        (range.min, range.max),
        (Bytes::from(vec![0]), Some(Bytes::from(vec![19])))
    );
    assert_eq!(stats.partition_sizes.count(), 6);
    assert_eq!(stats.cell_counts.count(), 6);
    let cells = stats.cell_counts.percentile(0.5);
    assert!(
        (61..80).contains(&cells),
        "61 cells a partition: bucket {cells}"
    );
    assert!(stats.partition_sizes.max() >= stats.uncompressed_size / 6);
    assert_eq!(stats.droppable_tombstones(600), 0);
    // Before 1000: the partition deletion, collection and cell tombstones, row deletions, RTs.
    assert_eq!(stats.droppable_tombstones(961), 1 + 120 + 120 + 18);
    assert_eq!(
        stats.droppable_tombstones(i32::MAX),
        stats.tombstone_drop_times.total()
    );
    assert!(stats.droppable_tombstone_ratio(i32::MAX) > 0.5);
    assert_eq!((stats.level, stats.repaired_at), (2, 77));
    assert!(stats.compressed_size > 0 && sstable.size_on_disk() > stats.compressed_size);

    sstable.set_level(5).expect("set level");
    assert_eq!(sstable.level(), 5);
    let reopened = open(&desc);
    assert_eq!(reopened.level(), 5);
    assert_eq!(reopened.stats().partitions, 6);
    assert_eq!(reopened.repair(), RepairMark::repaired(77));

    let session = uuid::Uuid::from_u128(0xfeed);
    reopened
        .set_repair(RepairMark::pending(session))
        .expect("mark pending");
    reopened.set_level(3).expect("set level");
    let again = open(&desc);
    assert_eq!(
        again.repair(),
        RepairMark::pending(session),
        "kept by set_level"
    );
    assert_eq!(again.level(), 3);
    assert!(!again.repair().is_repaired());
    again
        .set_repair(RepairMark::UNREPAIRED)
        .expect("back to unrepaired");
    assert_eq!(open(&desc).repair(), RepairMark::UNREPAIRED);
}

#[test]
fn large_partition_slice_reads_touch_few_chunks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut data = PartitionData::default();
    let rows: Vec<Row> = (0..100_000u32)
        .map(|i| {
            let mut row = Row::new(Bytes::from(i.to_be_bytes().to_vec()));
            row.columns = vec![ColumnData::simple(
                "v",
                Cell::live(i64::from(i), Bytes::from(format!("value-{i:08}"))),
            )];
            row
        })
        .collect();
    data.apply(PartitionUpdate {
        rows,
        ..Default::default()
    });
    let mut writer = SstableWriter::create(dir.path(), 1, WriteOptions::default()).expect("create");
    writer.append(&key(0, "big"), &data).expect("append");
    assert!(writer.bytes_written() > 0);
    let sstable = open(&writer.finish().expect("finish"));
    let total_chunks = sstable.stats().uncompressed_size.div_ceil(16 * 1024);
    assert!(total_chunks > 150, "{total_chunks} chunks");
    let location = sstable
        .find(&key(0, "big"), ReadCaches::default())
        .expect("index")
        .expect("entry");
    assert!(
        location.row_index.len() > 40,
        "{} row-index blocks",
        location.row_index.len()
    );

    let before = sstable.chunks_read();
    let wanted = Bytes::from(77_777u32.to_be_bytes().to_vec());
    let got = sstable
        .read(&key(0, "big"), &ReadFilter::row(wanted.clone()))
        .expect("read")
        .expect("present");
    assert_eq!(got.rows.keys().cloned().collect::<Vec<_>>(), vec![wanted]);
    let point_reads = sstable.chunks_read() - before;
    assert!(point_reads <= 8, "point read touched {point_reads} chunks");

    let before = sstable.chunks_read();
    let slice = ReadFilter {
        slices: vec![(
            Bound::Included(Bytes::from(50_000u32.to_be_bytes().to_vec())),
            Bound::Excluded(Bytes::from(50_100u32.to_be_bytes().to_vec())),
        )],
        ..ReadFilter::all()
    };
    let got = sstable
        .read(&key(0, "big"), &slice)
        .expect("read")
        .expect("present");
    assert_eq!(got.rows.len(), 100);
    assert!(sstable.chunks_read() - before <= 8);
    assert_eq!(got.rows, data.select(&slice, usize::MAX).data.rows);

    // A capped read from the middle, either way, decodes about the blocks it returns.
    for reversed in [false, true] {
        let before = sstable.chunks_read();
        let from = Bytes::from(60_000u32.to_be_bytes().to_vec());
        let filter = ReadFilter {
            reversed,
            ..ReadFilter::all()
        }
        .after(&from);
        let got = sstable
            .read_capped(&key(0, "big"), &filter, 1000)
            .expect("read")
            .expect("present");
        let expected = data.select(&filter, 1000);
        assert_eq!(got.data.rows, expected.data.rows);
        assert_eq!(got.stopped_at, expected.stopped_at);
        let next = if reversed { 59_000u32 } else { 61_000 };
        assert_eq!(
            got.stopped_at,
            Some(Bytes::from(next.to_be_bytes().to_vec()))
        );
        assert!(sstable.chunks_read() - before <= 12, "reversed: {reversed}");
    }
}

#[test]
fn merge_path_reads_memtable_over_sstable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let old = Memtable::new();
    for (token, value) in [(1, "old"), (3, "only-old")] {
        let data = one_row(b("c"), 1, value);
        old.apply(
            &key(token, &format!("k{token}")),
            PartitionUpdate {
                rows: data.rows.into_values().collect(),
                ..Default::default()
            },
        );
    }
    let sstable = open(&flush(&old, dir.path(), 1, WriteOptions::default()));
    let new = Memtable::new();
    for (token, value) in [(1, "new"), (2, "only-new")] {
        let data = one_row(b("c"), 2, value);
        new.apply(
            &key(token, &format!("k{token}")),
            PartitionUpdate {
                rows: data.rows.into_values().collect(),
                ..Default::default()
            },
        );
    }
    let sources: [&dyn PartitionSource; 2] = [&sstable, &new];
    let p = read_sources(
        &sources,
        &key(1, "k1"),
        &ReadFilter::all(),
        0,
        &mut Default::default(),
    )
    .expect("read")
    .expect("live");
    assert_eq!(
        p.rows[0].columns[0],
        ColumnData::simple("v", Cell::live(2, b("new")))
    );
    let all = scan_sources(
        &sources,
        &KeyRange::all(),
        &ReadFilter::all(),
        0,
        10,
        &mut Default::default(),
    )
    .expect("scan");
    assert_eq!(
        all.iter().map(|p| p.key.token).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    assert!(!sstable.may_contain(&key(2, "k2")));
    assert!(sstable.may_contain(&key(3, "k3")));
}

#[test]
fn empty_sstable_round_trips_and_bad_options_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let writer = SstableWriter::create(dir.path(), 9, WriteOptions::default()).expect("create");
    let sstable = open(&writer.finish().expect("finish"));
    assert_eq!(sstable.stats().partitions, 0);
    assert_eq!(sstable.stats().first_key, None);
    assert!(!sstable.may_contain(&key(1, "a")));
    assert_eq!(
        sstable
            .read(&key(1, "a"), &ReadFilter::all())
            .expect("read"),
        None
    );
    assert_eq!(sstable.iter().count(), 0);
    assert_eq!(sstable.scan_keys(&KeyRange::all()).count(), 0);
    assert_eq!(sstable.generation(), 9);

    for options in [
        WriteOptions {
            chunk_length: 0,
            ..WriteOptions::default()
        },
        WriteOptions {
            bloom_fp_chance: 0.0,
            ..WriteOptions::default()
        },
        WriteOptions {
            bloom_fp_chance: f64::NAN,
            ..WriteOptions::default()
        },
        WriteOptions {
            row_index_block: 0,
            ..WriteOptions::default()
        },
    ] {
        assert!(matches!(
            SstableWriter::create(dir.path(), 10, options),
            Err(StorageError::Invalid(_))
        ));
    }
    let disabled = WriteOptions {
        bloom_fp_chance: 1.0,
        ..WriteOptions::default()
    };
    let sstable = open(&flush(&sample_memtable(), dir.path(), 11, disabled));
    assert!(
        sstable.may_contain(&key(0, "not-there")),
        "a disabled filter admits every key in range"
    );
    assert_eq!(
        sstable
            .read(&key(0, "not-there"), &ReadFilter::all())
            .expect("read"),
        None
    );
    sstable
        .read(&key(-1, "k1"), &ReadFilter::all())
        .expect("read")
        .expect("k1 is there");
    let filter = sstable.filter_stats();
    assert_eq!((filter.false_positives, filter.true_positives), (1, 1));
}

/// A partition of cassandra-stress's `standard1`: a 10-byte key, one row of five 34-byte values
/// written together.
fn standard1(key: &[u8]) -> (PartitionKey, PartitionData) {
    let mut row = Row::new(Bytes::new());
    row.liveness = Some(LivenessInfo::new(1_700_000_000_000_000));
    row.columns = (0..5)
        .map(|i| {
            let value = Bytes::from(vec![i; 34]);
            ColumnData::simple(format!("C{i}"), Cell::live(1_700_000_000_000_000, value))
        })
        .collect();
    let mut data = PartitionData::default();
    data.apply(PartitionUpdate {
        rows: vec![row],
        ..Default::default()
    });
    let token = ring::murmur3_token(key);
    let key = PartitionKey {
        token,
        key: Bytes::copy_from_slice(key),
    };
    (key, data)
}

#[test]
fn a_standard1_partition_takes_195_data_bytes_and_13_or_14_index_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut partitions: Vec<_> = (0..1000u32)
        .map(|i| standard1(format!("{i:010}").as_bytes()))
        .collect();
    partitions.sort_by(|a, b| a.0.cmp(&b.0));
    let options = WriteOptions {
        compression: Compression::None,
        ..WriteOptions::default()
    };
    let mut writer = SstableWriter::create(dir.path(), 1, options).expect("create");
    for (key, data) in &partitions {
        writer.append(key, data).expect("append");
    }
    let sstable = open(&writer.finish().expect("finish"));
    // Header record 13 (length, flags, key length, key), row record 2 + 179 (its timestamp the
    // base's: one byte; no names nor lengths), end marker 1.
    assert_eq!(sstable.stats().uncompressed_size, 1000 * 195);
    let names: Vec<_> = (0..5).map(|i| b(&format!("C{i}"))).collect();
    assert_eq!(sstable.stats().numbering.names, names);
    assert_eq!(sstable.stats().numbering.lengths, vec![34; 5]);
    // Index: stream header, 32 blocks of count and CRC, entries of head, key and position.
    let index = fs::metadata(sstable.descriptor().path(Component::Index)).expect("index");
    let entries = index.len() - 10 - 32 * 8;
    assert!((13_000..=14_000).contains(&entries), "{entries}");
    for (key, data) in &partitions {
        let read = sstable.read(key, &ReadFilter::all()).expect("read");
        assert_eq!(read.as_ref(), Some(data));
    }
}
