//! Repair's way in: the partitions of a token range as Cassandra's validation compaction sees
//! them — every source of a [`RepairScope`] merged, then purged as a compaction at `now` would
//! purge them (shadowed data dropped, expired cells made tombstones, tombstones past
//! `gc_grace_seconds` gone where compaction would drop them) — so that two replicas holding the
//! same data hash it alike whatever its SSTable layout.

use super::Storage;
use crate::compaction::exec::Purger;
use crate::error::Result;
use crate::facade::RepairScope;
use crate::filter::KeyRange;
use mutation::scan::ScanSource;
use mutation::TableId;

impl Storage {
    /// Up to `limit` partitions of `range` in `scope` as validation sees them at `now`
    /// (seconds), in token order; `stopped_at` says where to go on from when the limit cut the
    /// page.
    pub fn validation_page(
        &self,
        table: TableId,
        range: &KeyRange,
        scope: RepairScope,
        now: i32,
        limit: usize,
    ) -> Result<ScanSource> {
        let engine = self.engine(table)?;
        let settings = engine.settings();
        let page = self.scoped_page(&engine, range, scope, limit)?;
        // Every source of the scope is merged here: the purge horizon is the end of time (a
        // tombstone purged here is purged alike on every replica holding the same data). Under
        // `only_purge_repaired_tombstones` only repaired data loses its tombstones, as in a
        // compaction: a replica that missed a delete then differs from the others and gets
        // the tombstone, rather than giving them the row back.
        let gc_before = settings.compaction_gc_before(now, scope == RepairScope::Repaired);
        let purger =
            Purger::new(now, gc_before, || i64::MAX).with_dropped(&settings.dropped_columns);
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
