//! The LSM engine's read path: every memtable, then the SSTables that may hold the key in
//! decreasing order of maximum timestamp, stopping early when older ones cannot change the
//! result (see `early_exit`); Index lookups and Data chunks go through the node's caches
//! ([`ReadCaches`]). Counts SSTables touched and tombstones met into [`ReadStats`].

use std::cmp::Reverse;

use super::{early_exit, merge_into, PartitionSource, View};
use crate::error::Result;
use crate::filter::{KeyRange, ReadFilter};
use crate::metrics::ReadStats;
use crate::partition::PartitionData;
use crate::resolve::resolve;
use crate::sstable::{ReadCaches, Sstable};
use mutation::{Partition, PartitionKey};

/// Reads partition `key` from `view` at `now`.
pub(super) fn read(
    view: &View,
    key: &PartitionKey,
    filter: &ReadFilter,
    now: i32,
    caches: ReadCaches<'_>,
    stats: &mut ReadStats,
) -> Result<Option<Partition>> {
    let mut merged: Option<PartitionData> = None;
    for memtable in view.memtables() {
        merge_into(&mut merged, memtable.partition(key, filter)?);
    }
    let mut candidates: Vec<&Sstable> = view
        .sstables
        .iter()
        .map(|s| &s.sstable)
        .filter(|s| s.may_contain(key))
        .collect();
    candidates.sort_by_key(|s| Reverse(s.stats().max_timestamp));
    for sstable in candidates {
        let max_timestamp = sstable.stats().max_timestamp;
        if merged
            .as_ref()
            .is_some_and(|m| early_exit::complete(m, filter, max_timestamp))
        {
            break;
        }
        stats.sstables += 1;
        merge_into(&mut merged, sstable.read_cached(key, filter, caches)?);
    }
    Ok(merged.and_then(|data| resolve(key, &data, filter, now, stats)))
}

/// An SSTable read through the node's caches, as a source of the generic scan.
pub(super) struct CachedSstable<'a> {
    pub sstable: &'a Sstable,
    pub caches: ReadCaches<'a>,
}

impl PartitionSource for CachedSstable<'_> {
    fn partition(&self, key: &PartitionKey, filter: &ReadFilter) -> Result<Option<PartitionData>> {
        if !self.sstable.may_contain(key) {
            return Ok(None);
        }
        self.sstable.read_cached(key, filter, self.caches)
    }

    fn keys<'a>(&'a self, range: &KeyRange) -> Box<dyn Iterator<Item = Result<PartitionKey>> + 'a> {
        Box::new(self.sstable.scan_keys(range))
    }
}
