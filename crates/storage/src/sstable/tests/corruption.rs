//! Flipping any byte of any component is reported as corruption naming that file; nothing
//! panics and nothing is silently returned.

use std::fs;
use std::path::Path;

use super::{flush, sample_memtable};
use crate::error::StorageError;
use crate::filter::{KeyRange, ReadFilter};
use crate::sstable::{Component, Compression, Descriptor, Sstable, WriteOptions};

/// Opens the SSTable and reads everything it holds through every access path.
fn read_everything(desc: &Descriptor) -> crate::Result<()> {
    let sstable = Sstable::open(desc)?;
    let keys = sstable
        .scan_keys(&KeyRange::all())
        .collect::<crate::Result<Vec<_>>>()?;
    for key in &keys {
        sstable.read(key, &ReadFilter::all())?;
    }
    for partition in sstable.iter() {
        partition?;
    }
    Ok(())
}

fn assert_flips_detected(desc: &Descriptor, component: Component, step: usize) {
    let path = desc.path(component);
    let original = fs::read(&path).expect("read component");
    for offset in (0..original.len()).step_by(step) {
        let mut bad = original.clone();
        bad[offset] ^= 0x5a;
        fs::write(&path, &bad).expect("write corrupt copy");
        match read_everything(desc) {
            Err(StorageError::Corrupt { file, .. }) => assert_eq!(file, path, "flip at {offset}"),
            other => panic!("flip at {offset} of {component:?}: expected Corrupt, got {other:?}"),
        }
    }
    fs::write(&path, &original).expect("restore");
    assert!(read_everything(desc).is_ok());
}

fn write_sample(dir: &Path, compression: Compression) -> Descriptor {
    let options = WriteOptions {
        compression,
        chunk_length: 512,
        row_index_block: 256,
        ..WriteOptions::default()
    };
    flush(&sample_memtable(), dir, 1, options)
}

#[test]
fn every_flipped_byte_of_every_component_is_detected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let desc = write_sample(dir.path(), Compression::Lz4);
    assert!(read_everything(&desc).is_ok());
    for component in Component::ALL {
        let len = fs::metadata(desc.path(component)).expect("metadata").len() as usize;
        assert_flips_detected(&desc, component, (len / 400).max(1));
    }
}

#[test]
fn data_corruption_names_the_chunk_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    let desc = write_sample(dir.path(), Compression::None);
    let path = desc.path(Component::Data);
    let mut bytes = fs::read(&path).expect("read");
    let target = bytes.len() - 10;
    bytes[target] ^= 1;
    fs::write(&path, &bytes).expect("write");
    let sstable = Sstable::open(&desc).expect("Data bodies are checked on read, not at open");
    match sstable.iter().find_map(|p| p.err()) {
        Some(StorageError::Corrupt {
            file,
            offset,
            reason,
        }) => {
            assert_eq!(file, path);
            assert!(offset <= target as u64 && offset > 0, "offset {offset}");
            assert!(reason.contains("checksum"), "{reason}");
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn truncated_or_missing_components_fail_to_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let desc = write_sample(dir.path(), Compression::Zstd { level: 3 });
    let data = desc.path(Component::Data);
    let bytes = fs::read(&data).expect("read");
    fs::write(&data, &bytes[..bytes.len() - 1]).expect("truncate");
    assert!(
        matches!(Sstable::open(&desc), Err(StorageError::Corrupt { file, .. }) if file == data)
    );
    fs::write(&data, &bytes).expect("restore");
    fs::remove_file(desc.path(Component::Filter)).expect("remove");
    assert!(matches!(Sstable::open(&desc), Err(StorageError::Io { .. })));
}
