//! Repair's way in: the partitions of a token range as Cassandra's validation compaction sees
//! them — every source merged, then purged as a compaction at `now` would purge them (shadowed
//! data dropped, expired cells made tombstones, tombstones past `gc_grace_seconds` gone) — so
//! that two replicas holding the same data hash it alike whatever its SSTable layout.

use super::Storage;
use crate::compaction::exec::Purger;
use crate::engine::ScanSource;
use crate::error::Result;
use crate::filter::{KeyRange, ReadFilter};
use mutation::TableId;

impl Storage {
    /// Up to `limit` partitions of `range` as validation sees them at `now` (seconds), in
    /// token order; `stopped_at` says where to go on from when the limit cut the page.
    pub fn validation_page(
        &self,
        table: TableId,
        range: &KeyRange,
        now: i32,
        limit: usize,
    ) -> Result<ScanSource> {
        let engine = self.engine(table)?;
        let settings = engine.settings();
        let page = self.checked_read(
            &engine,
            engine.scan_source(range, &ReadFilter::all(), limit),
        )?;
        // Every source is merged here, so no older data can hide elsewhere: the purge
        // horizon is the end of time.
        let purger = Purger::new(now, settings.gc_before(now), || i64::MAX)
            .with_dropped(&settings.dropped_columns);
        let partitions = page
            .partitions
            .into_iter()
            .filter_map(|(key, data)| purger.partition(data).map(|data| (key, data)))
            .collect();
        Ok(ScanSource {
            partitions,
            stopped_at: page.stopped_at,
        })
    }
}
