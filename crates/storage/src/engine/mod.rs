//! The per-table storage engine interface, and the read path shared by implementations: a
//! merge over data sources (memtables and SSTables). [`LsmEngine`] is the engine `Storage` uses;
//! [`MemtableEngine`] keeps everything in memory (tests and models).

pub mod conformance;
mod early_exit;
mod lsm;
mod memtable_engine;
mod placement;
mod point_read;
mod pool;
mod replica_scan;
mod table_dir;
mod work;

pub use lsm::{FlushReport, LsmEngine, View};
pub use memtable_engine::MemtableEngine;
pub use placement::{disk_space, DiskSpace};
pub use pool::MemtableUsage;
pub use table_dir::{table_dir, LiveSstable};
pub use work::{Cancel, Pause, Task, Work};

use std::iter::Peekable;

use crate::error::Result;
use crate::filter::{KeyRange, ReadFilter};
use crate::metrics::ReadStats;
use mutation::partition::{PartitionData, SourceRows};
use mutation::rounds::{self, Round};
use mutation::{Partition, PartitionKey, PartitionUpdate};

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

/// One sorted source of partition data (a memtable or an SSTable). Sources on disk can fail,
/// so every access returns a [`Result`].
pub trait PartitionSource: Send + Sync {
    /// This source's version of partition `key` restricted to `filter`, with at most `cap`
    /// rows: the first ones in the filter's read order (see [`SourceRows`]).
    fn read_capped(
        &self,
        key: &PartitionKey,
        filter: &ReadFilter,
        cap: usize,
    ) -> Result<Option<SourceRows>>;

    /// This source's version of partition `key`, restricted to `filter`.
    fn partition(&self, key: &PartitionKey, filter: &ReadFilter) -> Result<Option<PartitionData>> {
        Ok(self.read_capped(key, filter, usize::MAX)?.map(|r| r.data))
    }

    /// Keys this source holds in `range`, ascending; a failed read ends the stream with an error.
    fn keys<'a>(&'a self, range: &KeyRange) -> Box<dyn Iterator<Item = Result<PartitionKey>> + 'a>;
}

/// Reads `key` by merging every source's version, then resolving at `now`; tombstones and
/// live rows met are counted into `stats`. A row-limited read reads about as many rows as it
/// returns (see [`rounds`]).
pub fn read_sources(
    sources: &[&dyn PartitionSource],
    key: &PartitionKey,
    filter: &ReadFilter,
    now: i32,
    stats: &mut ReadStats,
) -> Result<Option<Partition>> {
    rounds::read(key, filter, now, stats, |round_filter, cap| {
        read_round(sources, key, round_filter, cap)
    })
}

/// Every source's answer to one round of `key` (at most `cap` rows each), merged.
fn read_round(
    sources: &[&dyn PartitionSource],
    key: &PartitionKey,
    filter: &ReadFilter,
    cap: usize,
) -> Result<Round> {
    let mut round = Round::new(filter);
    for source in sources {
        round.add(source.read_capped(key, filter, cap)?);
    }
    Ok(round)
}

/// Scans `range` across all sources, returning up to `limit` live partitions in key order
/// (and at most `filter.total_row_limit` live rows in all); tombstones and live rows met are
/// counted into `stats`.
pub fn scan_sources(
    sources: &[&dyn PartitionSource],
    range: &KeyRange,
    filter: &ReadFilter,
    now: i32,
    limit: usize,
    stats: &mut ReadStats,
) -> Result<Vec<Partition>> {
    let mut found = Vec::new();
    let mut rows_left = filter.total_row_limit.unwrap_or(usize::MAX);
    let mut partition_filter = filter.clone();
    for key in merged_keys(sources, range) {
        if found.len() >= limit || rows_left == 0 {
            break;
        }
        partition_filter.row_limit = Some(filter.row_limit.unwrap_or(usize::MAX).min(rows_left));
        if let Some(partition) = read_sources(sources, &key?, &partition_filter, now, stats)? {
            rows_left -= partition.rows.len();
            found.push(partition);
        }
    }
    Ok(found)
}

/// The keys every source holds in `range`, ascending, each once.
fn merged_keys<'a>(sources: &[&'a dyn PartitionSource], range: &KeyRange) -> MergedKeys<'a> {
    let iters = sources.iter().map(|s| s.keys(range).peekable()).collect();
    MergedKeys { iters }
}

/// The ascending union of several ascending key streams; the first error met is passed on.
struct MergedKeys<'a> {
    iters: Vec<Peekable<Box<dyn Iterator<Item = Result<PartitionKey>> + 'a>>>,
}

impl Iterator for MergedKeys<'_> {
    type Item = Result<PartitionKey>;

    fn next(&mut self) -> Option<Result<PartitionKey>> {
        for iter in &mut self.iters {
            if let Some(error) = iter.next_if(|item| item.is_err()) {
                return Some(error);
            }
        }
        let smallest = self
            .iters
            .iter_mut()
            .filter_map(|i| i.peek().and_then(|item| item.as_ref().ok()))
            .min()?
            .clone();
        for iter in &mut self.iters {
            iter.next_if(|item| item.as_ref().is_ok_and(|k| *k == smallest));
        }
        Some(Ok(smallest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memtable::Memtable;
    use bytes::Bytes;
    use mutation::testing::token_key as key;
    use mutation::{Cell, ColumnData, Row};

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
        m.apply(&key(token), update);
    }

    #[test]
    fn reads_and_scans_merge_several_sources() {
        let (old, new) = (Memtable::new(), Memtable::new());
        write(&old, 1, 1, "old");
        write(&old, 3, 1, "only-old");
        write(&new, 1, 2, "new");
        write(&new, 2, 2, "only-new");
        let sources: [&dyn PartitionSource; 2] = [&old, &new];
        let mut stats = ReadStats::default();
        let p = read_sources(&sources, &key(1), &ReadFilter::all(), 0, &mut stats)
            .expect("read")
            .expect("live");
        assert_eq!((stats.live_rows, stats.tombstones), (1, 0));
        assert_eq!(
            p.rows[0].columns[0],
            ColumnData::simple("v", Cell::live(2, Bytes::from_static(b"new")))
        );
        let all = scan_sources(
            &sources,
            &KeyRange::all(),
            &ReadFilter::all(),
            0,
            10,
            &mut stats,
        )
        .expect("scan");
        let tokens: Vec<i64> = all.iter().map(|p| p.key.token).collect();
        assert_eq!(tokens, vec![1, 2, 3]);
        assert_eq!(
            scan_sources(
                &sources,
                &KeyRange::all(),
                &ReadFilter::all(),
                0,
                2,
                &mut stats
            )
            .expect("scan")
            .len(),
            2
        );
    }
}
