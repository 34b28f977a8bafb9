//! The LSM engine's read path: every memtable, then the SSTables that may hold the key in
//! decreasing order of maximum timestamp, stopping early when older ones cannot change the
//! result (see `early_exit`); Index lookups and Data chunks go through the node's caches
//! ([`ReadCaches`]). Counts SSTables touched and tombstones met into [`ReadStats`].

use std::cmp::Reverse;

use super::{early_exit, PartitionSource, View};
use crate::error::Result;
use crate::filter::{KeyRange, ReadFilter};
use crate::metrics::ReadStats;
use crate::sstable::{ReadCaches, Sstable};
use mutation::partition::SourceRows;
use mutation::rounds::{self, Round};
use mutation::{Partition, PartitionKey};

/// Reads partition `key` from `view` at `now`, in rounds when the read is row-limited.
pub(super) fn read(
    view: &View,
    key: &PartitionKey,
    filter: &ReadFilter,
    now: i32,
    caches: ReadCaches<'_>,
    stats: &mut ReadStats,
) -> Result<Option<Partition>> {
    let mut candidates: Vec<&Sstable> = view
        .sstables
        .iter()
        .map(|s| &s.sstable)
        .filter(|s| s.may_contain(key))
        .collect();
    candidates.sort_by_key(|s| Reverse(s.stats().max_timestamp));
    // Every round reads a prefix of `candidates`: the longest is the SSTables touched.
    let mut touched = 0;
    let found = rounds::read(key, filter, now, stats, |round_filter, cap| {
        let mut round = Round::new(round_filter);
        for memtable in view.memtables() {
            round.add(memtable.read_capped(key, round_filter, cap)?);
        }
        for (i, sstable) in candidates.iter().enumerate() {
            let max_timestamp = sstable.stats().max_timestamp;
            if round
                .data()
                .is_some_and(|m| early_exit::complete(m, round_filter, max_timestamp))
            {
                break;
            }
            touched = touched.max(i + 1);
            round.add(sstable.read_cached(key, round_filter, cap, caches)?);
        }
        Ok(round)
    })?;
    stats.sstables += u32::try_from(touched).unwrap_or(u32::MAX);
    Ok(found)
}

/// An SSTable read through the node's caches, as a source of the generic scan.
pub(super) struct CachedSstable<'a> {
    pub sstable: &'a Sstable,
    pub caches: ReadCaches<'a>,
}

impl PartitionSource for CachedSstable<'_> {
    fn read_capped(
        &self,
        key: &PartitionKey,
        filter: &ReadFilter,
        cap: usize,
    ) -> Result<Option<SourceRows>> {
        if !self.sstable.may_contain(key) {
            return Ok(None);
        }
        self.sstable.read_cached(key, filter, cap, self.caches)
    }

    fn keys<'a>(&'a self, range: &KeyRange) -> Box<dyn Iterator<Item = Result<PartitionKey>> + 'a> {
        Box::new(self.sstable.scan_keys(range))
    }
}
