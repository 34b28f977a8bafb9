//! The concurrent in-memory write buffer of one table: its partitions in token order (a
//! [`PartitionMap`]), their rows in an arena, with a filter of the tokens written (point reads
//! of absent partitions skip the search), an allocation counter, the oldest commit-log
//! position of its data and its oldest timestamp.

use std::mem::size_of;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use bytes::Bytes;

use crate::arena::Arena;
use crate::commitlog::Position;
use crate::engine::PartitionSource;
use crate::error::Result;
use crate::filter::{KeyRange, ReadFilter};
use crate::mem_partition::MemPartition;
use crate::partition_map::PartitionMap;
use crate::stripes::StripedCounter;
use crate::token_filter::TokenFilter;
use mutation::partition::SourceRows;
use mutation::{ColumnValue, PartitionKey, PartitionUpdate, Row};

/// What a partition takes besides its rows: its key and partition in a B-tree node (two
/// thirds full on average), and the header `Bytes` allocates when a key buffer it owns alone
/// is first shared.
const PARTITION_OVERHEAD: usize =
    (size_of::<PartitionKey>() + size_of::<MemPartition>()) * 3 / 2 + 3 * size_of::<usize>();

/// A memtable: writers on different partitions never contend.
pub struct Memtable {
    partitions: PartitionMap<MemPartition>,
    /// Every token written. Not counted in `allocated`: at most 1 MiB, sized from the
    /// previous memtable's partition count (about 0.5% of the data it describes).
    tokens: TokenFilter,
    allocated: StripedCounter,
    /// Packed [`Position`] of the oldest logged write applied (`u64::MAX`: none).
    min_position: AtomicU64,
    /// Smallest timestamp of any write applied (`i64::MAX`: none).
    min_timestamp: AtomicI64,
    /// The rows' encodings, which live as long as the memtable.
    arena: Arena,
}

impl Default for Memtable {
    fn default() -> Self {
        Memtable::for_partitions(0)
    }
}

impl Memtable {
    pub fn new() -> Self {
        Memtable::default()
    }

    /// A memtable expected to receive about `partitions` partitions (sizes its token filter).
    pub fn for_partitions(partitions: usize) -> Self {
        Memtable {
            partitions: PartitionMap::for_partitions(partitions),
            tokens: TokenFilter::for_partitions(partitions),
            allocated: StripedCounter::default(),
            min_position: AtomicU64::new(u64::MAX),
            min_timestamp: AtomicI64::new(i64::MAX),
            arena: Arena::default(),
        }
    }

    /// Partitions held.
    pub fn partition_count(&self) -> usize {
        self.partitions.len()
    }

    /// Applies a write logged at `position`.
    pub fn apply_logged(
        &self,
        key: &PartitionKey,
        update: PartitionUpdate,
        position: Position,
    ) -> usize {
        // Positions and timestamps mostly grow: a load first spares the shared line a write.
        let packed = position.pack();
        if packed < self.min_position.load(Ordering::Relaxed) {
            self.min_position.fetch_min(packed, Ordering::Relaxed);
        }
        self.apply(key, update)
    }

    /// The oldest commit-log position of the data held, if any write was logged.
    pub fn min_position(&self) -> Option<Position> {
        let packed = self.min_position.load(Ordering::Relaxed);
        (packed != u64::MAX).then(|| Position::unpack(packed))
    }

    /// The smallest timestamp of the data held (`i64::MAX` when empty).
    pub fn min_timestamp(&self) -> i64 {
        self.min_timestamp.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.partitions.len() == 0
    }

    /// Whether the memtable holds partition `key`.
    pub fn contains(&self, key: &PartitionKey) -> bool {
        self.tokens.may_contain(key.token) && self.partitions.contains(key)
    }

    /// Visits every partition in (token, key) order by reference, without copying it (for a
    /// flush). Writers wait while `visit` runs on a partition of theirs, so `visit` must not
    /// write to this memtable; the first error stops the walk and is returned.
    pub(crate) fn try_for_each<E>(
        &self,
        visit: impl FnMut(&PartitionKey, &MemPartition) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        self.partitions.try_for_each(visit)
    }

    /// Reconciles `update` into the partition `key`; returns the bytes it added to the
    /// memtable's estimate.
    pub fn apply(&self, key: &PartitionKey, update: PartitionUpdate) -> usize {
        let oldest = min_timestamp(&update);
        // Before the partition is visible: a reader that finds it also finds its token.
        self.tokens.insert(key.token);
        let mut added = 0;
        let new = || {
            added += PARTITION_OVERHEAD + key.key.len();
            own_copy(key)
        };
        let apply = |partition: &mut MemPartition| partition.apply(update, &self.arena);
        let grown = self
            .partitions
            .upsert(key, new, MemPartition::default, apply);
        self.allocated.add(added + grown);
        if oldest < self.min_timestamp.load(Ordering::Relaxed) {
            self.min_timestamp.fetch_min(oldest, Ordering::Relaxed);
        }
        added + grown
    }

    /// Bytes allocated by writes so far (an estimate; never decreases).
    pub fn allocated_bytes(&self) -> usize {
        self.allocated.sum()
    }
}

impl PartitionSource for Memtable {
    fn read_capped(
        &self,
        key: &PartitionKey,
        filter: &ReadFilter,
        cap: usize,
    ) -> Result<Option<SourceRows>> {
        if !self.tokens.may_contain(key.token) {
            return Ok(None);
        }
        let selected = self.partitions.read(key, |p| p.select(filter, cap));
        selected.transpose()
    }

    fn keys<'a>(&'a self, range: &KeyRange) -> Box<dyn Iterator<Item = Result<PartitionKey>> + 'a> {
        let Some(seek) = range.seek_key() else {
            return Box::new(std::iter::empty());
        };
        let (start, end) = (range.clone(), range.clone());
        let keys = self
            .partitions
            .keys_from(seek)
            .skip_while(move |key| !start.after_start(key))
            .take_while(move |key| end.before_end(key))
            .map(Ok);
        Box::new(keys)
    }
}

/// `key` in a buffer of its own: a key the query layer decoded points into the request's
/// buffer, which it would keep in memory until the flush.
fn own_copy(key: &PartitionKey) -> PartitionKey {
    PartitionKey {
        token: key.token,
        key: Bytes::copy_from_slice(&key.key),
    }
}

/// The smallest timestamp written by `update` (cells, markers and deletions).
fn min_timestamp(update: &PartitionUpdate) -> i64 {
    let deletions = std::iter::once(update.partition_deletion)
        .chain(update.range_tombstones.iter().map(|t| t.deletion))
        .filter(|d| !d.is_live())
        .map(|d| d.marked_for_delete_at);
    let rows = update
        .rows
        .iter()
        .chain(&update.static_row)
        .map(row_min_timestamp);
    deletions.chain(rows).min().unwrap_or(i64::MAX)
}

/// The smallest timestamp in `row` (`i64::MAX` when it holds none).
fn row_min_timestamp(row: &Row) -> i64 {
    let marker = row.liveness.map_or(i64::MAX, |l| l.timestamp);
    let deletion = if row.deletion.is_live() {
        i64::MAX
    } else {
        row.deletion.marked_for_delete_at
    };
    let cells = row.columns.iter().map(|column| match &column.value {
        ColumnValue::Simple(cell) => cell.timestamp,
        ColumnValue::Complex(complex) => {
            let deletion = if complex.deletion.is_live() {
                i64::MAX
            } else {
                complex.deletion.marked_for_delete_at
            };
            let cells = complex.cells.iter().map(|c| c.timestamp).min();
            cells.unwrap_or(i64::MAX).min(deletion)
        }
    });
    cells.min().unwrap_or(i64::MAX).min(marker).min(deletion)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem_partition::ROW_OVERHEAD;
    use mutation::{Cell, ColumnData};
    use std::ops::Bound;

    use mutation::testing::keyed_by_token as key;

    #[test]
    fn point_reads_find_every_partition_of_an_undersized_filter_and_no_other() {
        let memtable = Memtable::for_partitions(0);
        let written = |n: i64| n.wrapping_mul(0x9e37_79b9_7f4a_7c15_u64 as i64);
        for n in 0..20_000 {
            memtable.apply(&key(written(n)), update());
        }
        assert_eq!(memtable.partition_count(), 20_000);
        for n in 0..20_000 {
            let found = memtable.partition(&key(written(n)), &ReadFilter::all());
            assert!(found.expect("read").is_some(), "partition {n}");
            assert!(memtable.contains(&key(written(n))));
        }
        let same_token = PartitionKey {
            token: written(7),
            key: Bytes::from_static(b"another key"),
        };
        let found = memtable.partition(&same_token, &ReadFilter::all());
        assert!(found.expect("read").is_none());
        assert!(!memtable.contains(&same_token));
        let absent = (20_000..40_000).filter(|&n| memtable.contains(&key(written(n))));
        assert_eq!(absent.count(), 0);
    }

    fn update() -> PartitionUpdate {
        let mut row = Row::new(Bytes::from_static(b"c"));
        row.columns = vec![ColumnData::simple(
            "v",
            Cell::live(1, Bytes::from_static(b"xyz")),
        )];
        PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        }
    }

    #[test]
    fn apply_tracks_allocation_and_keys_come_back_in_token_order() {
        let memtable = Memtable::new();
        for token in [5, -3, 9, 0] {
            memtable.apply(&key(token), update());
        }
        assert!(memtable.allocated_bytes() > 4 * (PARTITION_OVERHEAD + ROW_OVERHEAD));
        let range = KeyRange {
            start: Bound::Excluded(crate::filter::PartitionPosition::Token(-3)),
            end: Bound::Included(crate::filter::PartitionPosition::Token(5)),
        };
        let tokens: Vec<i64> = memtable
            .keys(&range)
            .map(|k| k.expect("memtable keys never fail").token)
            .collect();
        assert_eq!(tokens, vec![0, 5]);
        assert!(matches!(
            memtable.partition(&key(9), &ReadFilter::all()),
            Ok(Some(_))
        ));
        assert!(matches!(
            memtable.partition(&key(1), &ReadFilter::all()),
            Ok(None)
        ));
    }

    #[test]
    fn min_timestamp_covers_cells_markers_and_deletions() {
        let memtable = Memtable::new();
        assert_eq!(memtable.min_timestamp(), i64::MAX);
        memtable.apply(&key(1), update());
        assert_eq!(memtable.min_timestamp(), 1);
        let mut row = Row::new(Bytes::from_static(b"d"));
        row.deletion = mutation::DeletionTime {
            marked_for_delete_at: -7,
            local_deletion_time: 0,
        };
        row.columns = vec![ColumnData::simple("v", Cell::live(3, Bytes::new()))];
        let deleted = PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        };
        memtable.apply(&key(2), deleted);
        assert_eq!(memtable.min_timestamp(), -7);
    }

    #[test]
    fn concurrent_writers_on_different_partitions_all_land() {
        let memtable = Memtable::new();
        std::thread::scope(|scope| {
            for thread in 0..4i64 {
                let memtable = &memtable;
                scope.spawn(move || {
                    for n in 0..250 {
                        memtable.apply(&key(thread * 1000 + n), update());
                    }
                });
            }
        });
        assert_eq!(memtable.keys(&KeyRange::all()).count(), 1000);
    }
}
