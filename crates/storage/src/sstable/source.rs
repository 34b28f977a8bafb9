//! [`Sstable`] as a [`PartitionSource`] of the engine's merging read path.

use crate::engine::PartitionSource;
use crate::error::Result;
use crate::filter::{KeyRange, ReadFilter};
use crate::sstable::caches::ReadCaches;
use crate::sstable::reader::Sstable;
use mutation::partition::SourceRows;
use mutation::PartitionKey;

impl PartitionSource for Sstable {
    fn read_capped(
        &self,
        key: &PartitionKey,
        filter: &ReadFilter,
        cap: usize,
    ) -> Result<Option<SourceRows>> {
        if !self.may_contain(key) {
            return Ok(None);
        }
        self.read_cached(key, filter, cap, ReadCaches::default())
    }

    fn keys<'a>(&'a self, range: &KeyRange) -> Box<dyn Iterator<Item = Result<PartitionKey>> + 'a> {
        Box::new(self.scan_keys(range))
    }
}
