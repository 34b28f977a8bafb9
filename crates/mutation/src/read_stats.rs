//! What one read did, returned with every read and added up across the reads of a statement
//! and the replicas of a read.

/// What one read did. Counted without allocating; add two with [`ReadStats::add`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// SSTables whose index or data was read: those the key range and Bloom filter did not
    /// rule out, and that the timestamp early exit did not skip.
    pub sstables: u32,
    /// Tombstones met while resolving the merged data, counted as Cassandra counts them for
    /// `tombstone_warn_threshold`: every cell that is not live (deleted or expired), a row
    /// deletion when the row has no such cell, and two per range tombstone (its open and close
    /// markers). Partition deletions are not counted (nor does Cassandra count them).
    pub tombstones: u64,
    /// Rows (static row included) with live data, read up to the row limit.
    pub live_rows: u64,
}

impl ReadStats {
    /// Accumulates `other` into `self` (a statement reading several partitions).
    pub fn add(&mut self, other: ReadStats) {
        self.sstables = self.sstables.saturating_add(other.sstables);
        self.tombstones = self.tombstones.saturating_add(other.tombstones);
        self.live_rows = self.live_rows.saturating_add(other.live_rows);
    }
}
