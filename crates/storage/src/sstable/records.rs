//! What an [`super::SstableWriter`] writes a partition from: [`PartitionRecords`], whose rows
//! are [`RowRecord`]s — decoded rows (compaction's output), or rows still in their encoding
//! (a memtable's), which are copied as they are.

use std::borrow::Cow;

use crate::error::Result;
use crate::sstable::layout::ColumnNumbers;
use crate::sstable::stats::StatsCollector;
use mutation::codec::{visit_decoded, Reader};
use mutation::partition::PartitionData;
use mutation::row_map::RowMap;
use mutation::Row;

/// A row the writer can write and take statistics of.
pub(crate) trait RowRecord {
    /// Appends the row's record to `out`, its columns numbered by `numbers`.
    fn put_record(&self, out: &mut Vec<u8>, numbers: &mut ColumnNumbers) -> Result<()>;
    /// Adds the row's marker, deletions and cells to `stats`.
    fn add_stats(&self, stats: &mut StatsCollector) -> Result<()>;
    fn to_row(&self) -> Result<Row>;
}

impl RowRecord for Row {
    fn put_record(&self, out: &mut Vec<u8>, numbers: &mut ColumnNumbers) -> Result<()> {
        numbers.put_row_record(out, self)
    }

    fn add_stats(&self, stats: &mut StatsCollector) -> Result<()> {
        visit_decoded(self, stats);
        Ok(())
    }

    fn to_row(&self) -> Result<Row> {
        Ok(self.clone())
    }
}

/// A row in the compact row encoding, in its memtable's arena.
pub(crate) type EncodedRow = crate::arena::ArenaBytes;

impl RowRecord for EncodedRow {
    fn put_record(&self, out: &mut Vec<u8>, numbers: &mut ColumnNumbers) -> Result<()> {
        numbers.put_encoded_row_record(out, self)
    }

    fn add_stats(&self, stats: &mut StatsCollector) -> Result<()> {
        let mut reader = Reader { bytes: &self[..] };
        reader.visit_compact_row(stats).map_err(invalid)
    }

    fn to_row(&self) -> Result<Row> {
        Reader { bytes: &self[..] }.row().map_err(invalid)
    }
}

fn invalid(error: mutation::codec::DecodeError) -> crate::error::StorageError {
    crate::error::StorageError::Invalid(format!("a memtable row does not decode: {}", error.0))
}

/// A partition as the writer takes it.
pub(crate) trait PartitionRecords {
    type Row: RowRecord;
    /// The partition deletion, static row and range tombstones (its rows are not read).
    fn head(&self) -> &PartitionData;
    fn rows(&self) -> &RowMap<Self::Row>;

    /// The whole partition decoded (for the checks of large partitions).
    fn decoded(&self) -> Result<Cow<'_, PartitionData>> {
        let rows = self.rows().iter();
        let rows = rows.map(|(k, r)| Ok((k.clone(), r.to_row()?)));
        Ok(Cow::Owned(PartitionData {
            rows: rows.collect::<Result<RowMap>>()?,
            ..self.head().head_for(true)
        }))
    }
}

impl PartitionRecords for PartitionData {
    type Row = Row;

    fn head(&self) -> &PartitionData {
        self
    }

    fn rows(&self) -> &RowMap {
        &self.rows
    }

    fn decoded(&self) -> Result<Cow<'_, PartitionData>> {
        Ok(Cow::Borrowed(self))
    }
}
