//! `HintsWriter`: appends records to one hints file.
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::descriptor::{HintsDescriptor, HEADER_LEN};

pub struct HintsWriter {
    descriptor: HintsDescriptor,
    file: BufWriter<File>,
    size: u64,
    records: u64,
}

impl HintsWriter {
    /// Creates the file (it must not exist) with its header, and makes its name durable.
    pub fn create(dir: &Path, descriptor: HintsDescriptor) -> io::Result<HintsWriter> {
        let path = descriptor.path(dir);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        let mut writer = HintsWriter {
            descriptor,
            file: BufWriter::with_capacity(256 * 1024, file),
            size: 0,
            records: 0,
        };
        writer.file.write_all(&descriptor.encode())?;
        writer.size = HEADER_LEN as u64;
        writer.sync()?;
        sync_dir(dir)?;
        Ok(writer)
    }

    pub fn descriptor(&self) -> HintsDescriptor {
        self.descriptor
    }

    /// Bytes in the file once buffered writes reach it.
    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn records(&self) -> u64 {
        self.records
    }

    /// Appends one framed record (see `record::encode`); durable after the next `sync`.
    pub fn append(&mut self, record: &[u8]) -> io::Result<()> {
        self.file.write_all(record)?;
        self.size += record.len() as u64;
        self.records += 1;
        Ok(())
    }

    pub fn sync(&mut self) -> io::Result<()> {
        self.file.flush()?;
        self.file.get_ref().sync_data()
    }
}

/// Makes the creation or removal of files in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}
