//! The per-table storage engine interface, and the read path shared by implementations: a
//! merge over data sources (the memtable today; immutable sorted runs once the LSM lands).

pub mod conformance;
mod memtable_engine;

pub use memtable_engine::MemtableEngine;

use std::iter::Peekable;

use crate::error::Result;
use crate::filter::{KeyRange, ReadFilter};
use crate::model::{Partition, PartitionKey, PartitionUpdate};
use crate::partition::PartitionData;
use crate::resolve::resolve;

/// The store of one table. Synchronous: callers run it on whatever thread they like.
pub trait TableEngine: Send + Sync {
    /// Reconciles `update` into partition `key`.
    fn apply(&self, key: &PartitionKey, update: &PartitionUpdate) -> Result<()>;

    /// The live content of one partition at `now` (seconds), or `None` if nothing is live.
    fn read(&self, key: &PartitionKey, filter: &ReadFilter, now: i32) -> Result<Option<Partition>>;

    /// Live partitions in `range`, in (token, key) order, at most `limit` of them.
    fn scan(
        &self,
        range: &KeyRange,
        filter: &ReadFilter,
        now: i32,
        limit: usize,
    ) -> Result<Vec<Partition>>;

    /// Removes all data.
    fn truncate(&self) -> Result<()>;

    /// Memory held by in-memory structures, in bytes.
    fn memory_bytes(&self) -> usize;
}

/// One sorted source of partition data.
pub trait PartitionSource: Send + Sync {
    /// This source's version of partition `key`, restricted to `filter`.
    fn partition(&self, key: &PartitionKey, filter: &ReadFilter) -> Option<PartitionData>;

    /// Keys this source holds in `range`, ascending.
    fn keys<'a>(&'a self, range: &KeyRange) -> Box<dyn Iterator<Item = PartitionKey> + 'a>;
}

/// Reads `key` by merging every source's version, then resolving at `now`.
pub fn read_sources(
    sources: &[&dyn PartitionSource],
    key: &PartitionKey,
    filter: &ReadFilter,
    now: i32,
) -> Option<Partition> {
    let mut merged: Option<PartitionData> = None;
    for data in sources.iter().filter_map(|s| s.partition(key, filter)) {
        match &mut merged {
            Some(m) => m.merge(data),
            None => merged = Some(data),
        }
    }
    resolve(key, &merged?, filter, now)
}

/// Scans `range` across all sources, returning up to `limit` live partitions in key order.
pub fn scan_sources(
    sources: &[&dyn PartitionSource],
    range: &KeyRange,
    filter: &ReadFilter,
    now: i32,
    limit: usize,
) -> Vec<Partition> {
    let iters = sources.iter().map(|s| s.keys(range).peekable()).collect();
    MergedKeys { iters }
        .filter_map(|key| read_sources(sources, &key, filter, now))
        .take(limit)
        .collect()
}

/// The ascending union of several ascending key streams.
struct MergedKeys<'a> {
    iters: Vec<Peekable<Box<dyn Iterator<Item = PartitionKey> + 'a>>>,
}

impl Iterator for MergedKeys<'_> {
    type Item = PartitionKey;

    fn next(&mut self) -> Option<PartitionKey> {
        let smallest = self
            .iters
            .iter_mut()
            .filter_map(|i| i.peek())
            .min()?
            .clone();
        for iter in &mut self.iters {
            iter.next_if_eq(&smallest);
        }
        Some(smallest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memtable::Memtable;
    use crate::model::{Cell, ColumnData, Row};
    use bytes::Bytes;

    fn key(token: i64) -> PartitionKey {
        PartitionKey {
            token,
            key: Bytes::from_static(b"k"),
        }
    }

    fn write(m: &Memtable, token: i64, ts: i64, value: &'static str) {
        let mut row = Row::new(Bytes::from_static(b"c"));
        row.columns = vec![ColumnData::simple(
            "v",
            Cell::live(ts, Bytes::from_static(value.as_bytes())),
        )];
        let update = PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        };
        m.apply(&key(token), &update);
    }

    #[test]
    fn reads_and_scans_merge_several_sources() {
        let (old, new) = (Memtable::new(), Memtable::new());
        write(&old, 1, 1, "old");
        write(&old, 3, 1, "only-old");
        write(&new, 1, 2, "new");
        write(&new, 2, 2, "only-new");
        let sources: [&dyn PartitionSource; 2] = [&old, &new];
        let p = read_sources(&sources, &key(1), &ReadFilter::all(), 0).expect("live");
        assert_eq!(
            p.rows[0].columns[0],
            ColumnData::simple("v", Cell::live(2, Bytes::from_static(b"new")))
        );
        let all = scan_sources(&sources, &KeyRange::all(), &ReadFilter::all(), 0, 10);
        let tokens: Vec<i64> = all.iter().map(|p| p.key.token).collect();
        assert_eq!(tokens, vec![1, 2, 3]);
        assert_eq!(
            scan_sources(&sources, &KeyRange::all(), &ReadFilter::all(), 0, 2).len(),
            2
        );
    }
}
