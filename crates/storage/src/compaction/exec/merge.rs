//! The k-way merge of SSTable partition streams by key: each key's versions from every input
//! are reconciled into one [`PartitionData`].

use crate::error::Result;
use crate::sstable::PartitionStream;
use mutation::partition::PartitionData;
use mutation::PartitionKey;

type Item = Result<(PartitionKey, PartitionData)>;

/// One input stream and its next, already decoded, partition.
struct Input<'a> {
    iter: Box<dyn PartitionStream + 'a>,
    head: Option<Item>,
}

/// Merges ascending partition streams into one ascending stream.
pub struct MergedPartitions<'a> {
    inputs: Vec<Input<'a>>,
}

impl<'a> MergedPartitions<'a> {
    pub fn new(inputs: Vec<Box<dyn PartitionStream + 'a>>) -> Self {
        let inputs = inputs
            .into_iter()
            .map(|mut iter| Input {
                head: iter.next(),
                iter,
            })
            .collect();
        MergedPartitions { inputs }
    }

    /// Uncompressed bytes consumed across all inputs.
    pub fn bytes_read(&self) -> u64 {
        self.inputs.iter().map(|i| i.iter.bytes_read()).sum()
    }
}

impl Iterator for MergedPartitions<'_> {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        if let Some(input) = self
            .inputs
            .iter_mut()
            .find(|i| matches!(i.head, Some(Err(_))))
        {
            return input.head.take();
        }
        let smallest = self
            .inputs
            .iter()
            .filter_map(|i| match &i.head {
                Some(Ok((key, _))) => Some(key),
                _ => None,
            })
            .min()?
            .clone();
        let mut merged: Option<PartitionData> = None;
        for input in &mut self.inputs {
            if !matches!(&input.head, Some(Ok((key, _))) if *key == smallest) {
                continue;
            }
            if let Some(Ok((_, data))) = std::mem::replace(&mut input.head, input.iter.next()) {
                match &mut merged {
                    Some(m) => m.merge(data),
                    None => merged = Some(data),
                }
            }
        }
        merged.map(|data| Ok((smallest, data)))
    }
}
