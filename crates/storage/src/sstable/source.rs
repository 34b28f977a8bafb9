//! [`Sstable`] as a [`PartitionSource`] of the engine's merging read path.

use crate::engine::PartitionSource;
use crate::error::Result;
use crate::filter::{KeyRange, ReadFilter};
use crate::partition::PartitionData;
use crate::sstable::reader::Sstable;
use mutation::PartitionKey;

impl PartitionSource for Sstable {
    fn partition(&self, key: &PartitionKey, filter: &ReadFilter) -> Result<Option<PartitionData>> {
        self.read(key, filter)
    }

    fn keys<'a>(&'a self, range: &KeyRange) -> Box<dyn Iterator<Item = Result<PartitionKey>> + 'a> {
        Box::new(self.scan_keys(range))
    }
}
