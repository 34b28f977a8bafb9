//! The binary form of what replicas answer — [`SourceRows`], [`ScanSource`] — on the encoding
//! of partition content (`put_content`/`partition_update`). Decoding checks every length and
//! tag and never panics on bad input. Also the digest of an answer.

use md5::{Digest, Md5};

use super::{
    counted, key, option, partition_update, put_content, put_key, put_option, Content, Decoded,
};
use crate::codec::{put_bytes, put_len, Reader};
use crate::partition::{PartitionData, SourceRows};
use crate::scan::ScanSource;
use crate::shadow::{remove_shadowed, Granularity};

pub fn put_source_rows(out: &mut Vec<u8>, rows: &SourceRows) {
    put_partition_data(out, &rows.data);
    put_option(out, rows.stopped_at.as_ref(), |out, stop| {
        put_bytes(out, stop)
    });
}

pub fn source_rows(r: &mut Reader<'_>) -> Decoded<SourceRows> {
    Ok(SourceRows {
        data: partition_data(r)?,
        stopped_at: option(r, Reader::bytes)?,
    })
}

pub fn put_scan_source(out: &mut Vec<u8>, scan: &ScanSource) {
    put_len(out, scan.partitions.len());
    for (key, data) in &scan.partitions {
        put_key(out, key);
        put_partition_data(out, data);
    }
    put_option(out, scan.stopped_at.as_ref(), put_key);
}

pub fn scan_source(r: &mut Reader<'_>) -> Decoded<ScanSource> {
    Ok(ScanSource {
        partitions: counted(r, |r| Ok((key(r)?, partition_data(r)?)))?,
        stopped_at: option(r, key)?,
    })
}

pub fn put_partition_data(out: &mut Vec<u8>, data: &PartitionData) {
    let content = Content {
        partition_deletion: &data.partition_deletion,
        static_row: data.static_row.as_ref(),
        rows: data.rows.len(),
        range_tombstones: &data.range_tombstones,
    };
    put_content(out, &content, data.rows.values());
}

pub fn partition_data(r: &mut Reader<'_>) -> Decoded<PartitionData> {
    let mut data = PartitionData::default();
    data.apply(partition_update(r)?);
    Ok(data)
}

impl SourceRows {
    /// A 128-bit MD5 hash (as Cassandra's digests) of this answer's canonical encoding: data
    /// shadowed by its own deletions is left out and tombstones are sorted, so replicas holding
    /// the same data digest the same whatever their memtables and SSTables.
    pub fn digest(&self) -> [u8; 16] {
        let canonical = SourceRows {
            data: remove_shadowed(self.data.clone(), &self.data, Granularity::Row)
                .unwrap_or_default(),
            stopped_at: self.stopped_at.clone(),
        };
        let mut encoded = Vec::new();
        put_source_rows(&mut encoded, &canonical);
        Md5::digest(&encoded).into()
    }
}
