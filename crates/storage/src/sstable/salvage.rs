//! [`Salvage`]: every partition of an SSTable that can still be read, for `nodetool scrub`. It
//! walks the Data stream as [`PartitionIter`](super::PartitionIter) does; a partition that
//! fails to decode (a chunk whose checksum does not match, bytes that make no sense) is
//! dropped and the walk goes on at the next partition the Index knows of after it. Partitions
//! out of key order are dropped too. What was dropped is recorded in a shared [`Loss`].

use std::collections::VecDeque;

use parking_lot::Mutex;

use crate::error::{Result, StorageError};
use crate::sstable::data_reader::DataCursor;
use crate::sstable::reader::Sstable;
use crate::sstable::scan::{read_partition, PartitionStream};
use mutation::partition::PartitionData;
use mutation::PartitionKey;

/// Problems a [`Loss`] keeps the description of (the count goes on).
const KEPT_PROBLEMS: usize = 20;

/// What salvaging could not read back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Loss {
    /// Partitions dropped (undecodable or out of order).
    pub partitions: u64,
    /// The first problems met, each naming its file and offset.
    pub problems: Vec<String>,
}

impl Loss {
    fn note(&mut self, problem: String) {
        if self.problems.len() < KEPT_PROBLEMS {
            self.problems.push(problem);
        }
    }
}

/// The readable partitions of one SSTable, ascending.
pub struct Salvage<'a> {
    sstable: &'a Sstable,
    cursor: DataCursor<'a>,
    buf: Vec<u8>,
    /// The next Index block to read when a resynchronization needs more partition starts.
    next_block: usize,
    /// Stream positions of partitions, from the Index blocks read so far, ascending.
    starts: VecDeque<u64>,
    last_key: Option<PartitionKey>,
    loss: &'a Mutex<Loss>,
    done: bool,
}

impl<'a> Salvage<'a> {
    pub(crate) fn new(sstable: &'a Sstable, loss: &'a Mutex<Loss>) -> Salvage<'a> {
        Salvage {
            sstable,
            cursor: DataCursor::new(&sstable.data),
            buf: Vec::new(),
            next_block: 0,
            starts: VecDeque::new(),
            last_key: None,
            loss,
            done: false,
        }
    }

    /// Moves to the first partition the Index places after stream position `failed`;
    /// `false` when there is none (what follows `failed` is lost).
    fn resync(&mut self, failed: u64) -> bool {
        loop {
            while let Some(&start) = self.starts.front() {
                if start > failed {
                    self.cursor.seek(start);
                    return true;
                }
                self.starts.pop_front();
            }
            let Some(block) = self.sstable.summary.blocks.get(self.next_block) else {
                return false;
            };
            self.next_block += 1;
            match self.sstable.index.block(block) {
                Ok(entries) => self
                    .starts
                    .extend(entries.iter().map(|e| e.location.position)),
                Err(error) => self.loss.lock().note(error.to_string()),
            }
        }
    }

    fn drop_partition(&mut self, problem: String) {
        let mut loss = self.loss.lock();
        loss.partitions += 1;
        loss.note(problem);
    }
}

impl Iterator for Salvage<'_> {
    type Item = Result<(PartitionKey, PartitionData)>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done && !self.cursor.at_end() {
            let position = self.cursor.position();
            match read_partition(&mut self.cursor, &mut self.buf) {
                Ok((key, data)) if self.last_key.as_ref().is_none_or(|last| key > *last) => {
                    self.last_key = Some(key.clone());
                    return Some(Ok((key, data)));
                }
                Ok((key, _)) => self.drop_partition(format!(
                    "{}: partition of token {} out of order at stream position {position}",
                    self.cursor.file().display(),
                    key.token
                )),
                Err(error @ StorageError::Corrupt { .. }) => {
                    self.drop_partition(error.to_string());
                    self.done = !self.resync(position);
                }
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            }
        }
        None
    }
}

impl PartitionStream for Salvage<'_> {
    fn bytes_read(&self) -> u64 {
        self.cursor.position()
    }
}
