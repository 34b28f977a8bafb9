//! Streaming iteration over an SSTable: [`KeyScan`] walks the Index block by block for the keys
//! of a range; [`PartitionIter`] decodes the Data stream one partition at a time. Both hold at
//! most one Index block or one Data chunk plus one partition in memory, and end after an error.
//! [`PartitionStream`] is what compactions read their inputs through.

use std::collections::VecDeque;

use crate::error::Result;
use crate::filter::KeyRange;
use crate::sstable::data_reader::{DataCursor, DataFile};
use crate::sstable::reader::{next_row, read_header, Sstable};
use mutation::partition::PartitionData;
use mutation::PartitionKey;

/// The keys of a [`KeyRange`] in one SSTable, ascending.
pub struct KeyScan<'a> {
    sstable: &'a Sstable,
    range: KeyRange,
    next_block: usize,
    pending: VecDeque<PartitionKey>,
    done: bool,
}

impl<'a> KeyScan<'a> {
    pub(crate) fn new(sstable: &'a Sstable, range: KeyRange) -> Self {
        let (next_block, done) = match range.seek_key() {
            Some(seek) => (sstable.summary.first_block_from(&seek), false),
            None => (0, true),
        };
        KeyScan {
            sstable,
            range,
            next_block,
            pending: VecDeque::new(),
            done,
        }
    }

    /// Loads the next Index block's keys that are in range; `false` when none are left.
    fn load_block(&mut self) -> Result<bool> {
        let Some(block) = self.sstable.summary.blocks.get(self.next_block) else {
            return Ok(false);
        };
        self.next_block += 1;
        let entries = self.sstable.index.block(block)?;
        for entry in entries {
            if !self.range.before_end(&entry.key) {
                self.next_block = usize::MAX;
                break;
            }
            if self.range.after_start(&entry.key) {
                self.pending.push_back(entry.key);
            }
        }
        Ok(true)
    }
}

impl Iterator for KeyScan<'_> {
    type Item = Result<PartitionKey>;

    fn next(&mut self) -> Option<Result<PartitionKey>> {
        while !self.done {
            if let Some(key) = self.pending.pop_front() {
                return Some(Ok(key));
            }
            match self.load_block() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

/// Every partition of an SSTable in order, as written.
pub struct PartitionIter<'a> {
    cursor: DataCursor<'a>,
    buf: Vec<u8>,
    done: bool,
}

impl<'a> PartitionIter<'a> {
    pub(crate) fn new(data: &'a DataFile) -> Self {
        PartitionIter {
            cursor: DataCursor::new(data),
            buf: Vec::new(),
            done: false,
        }
    }

    /// Uncompressed Data bytes consumed so far (for compaction progress and throttling).
    pub fn bytes_read(&self) -> u64 {
        self.cursor.position()
    }
}

impl Iterator for PartitionIter<'_> {
    type Item = Result<(PartitionKey, PartitionData)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.cursor.at_end() {
            return None;
        }
        let item = read_partition(&mut self.cursor, &mut self.buf);
        self.done = item.is_err();
        Some(item)
    }
}

impl PartitionStream for PartitionIter<'_> {
    fn bytes_read(&self) -> u64 {
        PartitionIter::bytes_read(self)
    }
}

/// An SSTable's partitions in order, with the uncompressed Data bytes consumed so far (for
/// compaction progress and throttling): [`PartitionIter`], or a [`Salvage`] for a scrub.
///
/// [`Salvage`]: crate::sstable::Salvage
pub trait PartitionStream: Iterator<Item = Result<(PartitionKey, PartitionData)>> {
    fn bytes_read(&self) -> u64;
}

/// Decodes the partition starting at the cursor: its header, then its rows up to the end
/// marker, which must come in clustering order.
pub(crate) fn read_partition(
    cursor: &mut DataCursor<'_>,
    buf: &mut Vec<u8>,
) -> Result<(PartitionKey, PartitionData)> {
    let position = cursor.position();
    let (key, mut data) = read_header(cursor, buf, position)?.into_data();
    while let Some(row) = next_row(cursor, buf)? {
        if data
            .rows
            .last_key_value()
            .is_some_and(|(last, _)| *last >= row.clustering)
        {
            return Err(cursor.corrupt("rows out of clustering order"));
        }
        data.rows.insert(row.clustering.clone(), row);
    }
    Ok((key, data))
}
