//! Reading one partition's rows from an SSTable: the header, then each slice of the filter in
//! read order through the row index, forward or backward, until a cap of rows is kept.

use bytes::Bytes;

use crate::error::Result;
use crate::filter::{ReadFilter, Slice};
use crate::sstable::data_reader::DataCursor;
use crate::sstable::index::Location;
use crate::sstable::layout::{after_end, before_start};
use crate::sstable::reader::{next_row, read_header};
use mutation::filter::ranges_overlap;
use mutation::partition::{last_read, SourceRows};
use mutation::row_map::RowMap;
use mutation::{PartitionKey, Row};

/// One partition read of at most `cap` rows of `filter`, in its read order.
pub(crate) struct PartitionRead<'a> {
    location: &'a Location,
    filter: &'a ReadFilter,
    cap: usize,
    buf: Vec<u8>,
    rows: RowMap,
    stopped_at: Option<Bytes>,
}

impl<'a> PartitionRead<'a> {
    pub fn new(location: &'a Location, filter: &'a ReadFilter, cap: usize) -> Self {
        PartitionRead {
            location,
            filter,
            cap,
            buf: Vec::new(),
            rows: RowMap::new(),
            stopped_at: None,
        }
    }

    /// Reads the header, then the slices in read order until `cap` rows are kept.
    pub fn run(mut self, cursor: &mut DataCursor<'_>, key: &PartitionKey) -> Result<SourceRows> {
        let header = read_header(cursor, &mut self.buf, self.location.position)?;
        if header.key != *key {
            return Err(cursor.corrupt("index entry points at another partition"));
        }
        let rows_start = cursor.position();
        let (_, mut data) = header.into_data();
        if !self.filter.include_static {
            data.static_row = None;
        }
        let filter = self.filter;
        data.range_tombstones.retain(|t| {
            filter
                .non_empty_slices()
                .any(|(s, e)| ranges_overlap((&t.start, &t.end), (s, e)))
        });
        for slice in filter.slices_in_read_order() {
            let stopped = if filter.reversed {
                self.read_slice_backward(cursor, slice, rows_start)?
            } else {
                self.read_slice_forward(cursor, slice, rows_start)?
            };
            if stopped {
                break;
            }
        }
        data.rows = self.rows;
        Ok(SourceRows {
            data,
            stopped_at: self.stopped_at,
        })
    }

    /// Keeps `row`, or returns `true` (and records where the read stopped) when `cap` rows are
    /// already kept.
    fn keep(&mut self, row: Row) -> bool {
        if self.rows.len() >= self.cap {
            self.stopped_at = last_read(&self.rows, self.filter.reversed);
            return true;
        }
        self.rows.insert(row.clustering.clone(), row);
        false
    }

    /// Reads `slice` ascending from the row-index block where it starts; `true` if stopped at
    /// the cap.
    fn read_slice_forward(
        &mut self,
        cursor: &mut DataCursor<'_>,
        (start, end): &Slice,
        rows_start: u64,
    ) -> Result<bool> {
        let Some(position) = self.location.seek_rows(start, rows_start) else {
            return Ok(false);
        };
        cursor.seek(position);
        let mut previous: Option<Bytes> = None;
        while let Some(row) = next_row(cursor, &mut self.buf)? {
            check_order(cursor, &mut previous, &row)?;
            if after_end(&row.clustering, end) {
                break;
            }
            if !before_start(&row.clustering, start) && self.keep(row) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Reads `slice` descending, one row-index block at a time from the last one it meets
    /// (each block is decoded forward, then kept backward); `true` if stopped at the cap.
    fn read_slice_backward(
        &mut self,
        cursor: &mut DataCursor<'_>,
        (start, end): &Slice,
        rows_start: u64,
    ) -> Result<bool> {
        for (from, until) in self.location.blocks_meeting(start, end, rows_start).rev() {
            cursor.seek(from);
            let mut block = Vec::new();
            let mut previous: Option<Bytes> = None;
            while until.is_none_or(|u| cursor.position() < u) {
                let Some(row) = next_row(cursor, &mut self.buf)? else {
                    break;
                };
                check_order(cursor, &mut previous, &row)?;
                if after_end(&row.clustering, end) {
                    break;
                }
                if !before_start(&row.clustering, start) {
                    block.push(row);
                }
            }
            for row in block.into_iter().rev() {
                if self.keep(row) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

/// Fails unless `row` comes after the previous row decoded.
fn check_order(cursor: &DataCursor<'_>, previous: &mut Option<Bytes>, row: &Row) -> Result<()> {
    if previous.as_ref().is_some_and(|p| *p >= row.clustering) {
        return Err(cursor.corrupt("rows out of clustering order"));
    }
    *previous = Some(row.clustering.clone());
    Ok(())
}
