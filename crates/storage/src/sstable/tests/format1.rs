//! SSTables of format version 1 (`ha`) stay readable: a version 1 SSTable of the sample
//! memtable, written by the last build that wrote version 1 (with 256-byte row-index blocks, so
//! its partitions have row indexes) and kept in `tests/fixtures/ha`, reads as the memtable does,
//! by point reads, slices, scans and iteration, and rewrites as version 2.

use std::fs;
use std::ops::Bound;
use std::path::{Path, PathBuf};

use super::{open, sample_memtable};
use crate::engine::PartitionSource;
use crate::filter::{KeyRange, ReadFilter, Slice};
use crate::sstable::{list, Component, Descriptor, SstableWriter, WriteOptions, FORMAT_VERSION};
use mutation::partition::PartitionData;

/// A copy of the fixture in a directory of its own (`list` may clean the directory it reads).
fn fixture_copy() -> (tempfile::TempDir, PathBuf) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ha");
    let dir = tempfile::tempdir().expect("tempdir");
    for entry in fs::read_dir(&from).expect("fixture directory") {
        let path = entry.expect("entry").path();
        let name = path.file_name().expect("file name");
        fs::copy(&path, dir.path().join(name)).expect("copy");
    }
    let path = dir.path().to_path_buf();
    (dir, path)
}

/// Slices within the first row-index block and across several, descending.
fn filters() -> Vec<ReadFilter> {
    let slice = |start: u8, end: u8| -> Slice {
        (
            Bound::Included(vec![start].into()),
            Bound::Excluded(vec![end].into()),
        )
    };
    let slices = |slices| ReadFilter {
        slices,
        ..ReadFilter::all()
    };
    vec![
        slices(vec![slice(2, 5)]),
        slices(vec![slice(0, 1), slice(12, 19)]),
        ReadFilter {
            reversed: true,
            ..slices(vec![slice(3, 17)])
        },
    ]
}

#[test]
fn a_format_1_sstable_reads_as_it_was_written_and_rewrites_as_format_2() {
    let (_dir, path) = fixture_copy();
    let found = list(&path).expect("list");
    assert_eq!(found, vec![Descriptor::of_version(&path, 1, 1)]);
    assert!(found[0].path(Component::Data).ends_with("ha-1-Data.db"));
    let old = open(&found[0]);
    let memtable = sample_memtable();
    let keys: Vec<_> = memtable
        .keys(&KeyRange::all())
        .map(|k| k.expect("key"))
        .collect();
    assert_eq!(keys.len(), 6);
    for key in &keys {
        let expected = memtable
            .partition(key, &ReadFilter::all())
            .expect("memtable");
        assert_eq!(old.read(key, &ReadFilter::all()).expect("read"), expected);
        for filter in filters() {
            let expected = memtable.partition(key, &filter).expect("memtable");
            let read = old.read(key, &filter).expect("read");
            let rows = |p: Option<PartitionData>| p.expect("present").rows;
            assert_eq!(rows(read), rows(expected), "{key:?} {filter:?}");
        }
    }
    let scanned: Vec<_> = old
        .scan_keys(&KeyRange::all())
        .map(|k| k.expect("scanned key"))
        .collect();
    assert_eq!(scanned, keys);

    let mut writer = SstableWriter::create(&path, 2, WriteOptions::default()).expect("writer");
    for partition in old.iter() {
        let (key, data) = partition.expect("partition of the old file");
        writer.append(&key, &data).expect("append");
    }
    let new = open(&writer.finish().expect("finish"));
    assert_eq!(new.descriptor().version, FORMAT_VERSION);
    assert!(new
        .descriptor()
        .path(Component::Data)
        .ends_with("hb-2-Data.db"));
    for key in &keys {
        let expected = memtable
            .partition(key, &ReadFilter::all())
            .expect("memtable");
        assert_eq!(new.read(key, &ReadFilter::all()).expect("read"), expected);
    }
    assert!(new.size_on_disk() < old.size_on_disk());
}
