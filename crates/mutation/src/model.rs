//! The schema-agnostic data model: keys, cells, rows, deletions, partition updates and mutations.
//!
//! Storage knows tables only by id; partition keys, clustering keys, column names and values are
//! opaque bytes encoded by the layer above. Timestamps are microseconds, local times are seconds.

use std::fmt;
use std::ops::Bound;

use bytes::Bytes;
use uuid::Uuid;

/// `local_deletion_time` of a cell that is neither expiring nor a tombstone.
pub const NO_DELETION_TIME: i32 = i32::MAX;

/// Identifies a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableId(pub Uuid);

impl fmt::Display for TableId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A partition key: its Murmur3 token and serialized bytes, ordered by (token, key).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartitionKey {
    pub token: i64,
    pub key: Bytes,
}

/// When something was deleted: the write timestamp it shadows up to, and the wall-clock second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeletionTime {
    pub marked_for_delete_at: i64,
    pub local_deletion_time: i32,
}

impl DeletionTime {
    /// Cassandra's `DeletionTime.dataSize`: the timestamp and the local deletion time.
    pub const DATA_SIZE: u64 = 12;

    /// "Not deleted".
    pub const LIVE: DeletionTime = DeletionTime {
        marked_for_delete_at: i64::MIN,
        local_deletion_time: NO_DELETION_TIME,
    };

    /// A deletion at `timestamp` (micros) performed at `now` (seconds).
    pub fn new(timestamp: i64, now: i32) -> Self {
        DeletionTime {
            marked_for_delete_at: timestamp,
            local_deletion_time: now,
        }
    }

    pub fn is_live(&self) -> bool {
        *self == DeletionTime::LIVE
    }

    /// Whether data written at `timestamp` is shadowed by this deletion.
    pub fn deletes(&self, timestamp: i64) -> bool {
        timestamp <= self.marked_for_delete_at
    }

    /// Cassandra's `DeletionTime.supersedes`.
    pub fn supersedes(&self, other: &DeletionTime) -> bool {
        self.marked_for_delete_at > other.marked_for_delete_at
            || (self.marked_for_delete_at == other.marked_for_delete_at
                && self.local_deletion_time > other.local_deletion_time)
    }

    /// The stronger of two deletions.
    pub fn merge(self, other: DeletionTime) -> DeletionTime {
        if other.supersedes(&self) {
            other
        } else {
            self
        }
    }
}

/// The primary-key liveness (row marker) written by INSERT; may expire with a TTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LivenessInfo {
    pub timestamp: i64,
    pub ttl: i32,
    pub local_expiration_time: i32,
}

impl LivenessInfo {
    /// A marker that never expires.
    pub fn new(timestamp: i64) -> Self {
        LivenessInfo {
            timestamp,
            ttl: 0,
            local_expiration_time: NO_DELETION_TIME,
        }
    }

    /// A marker written at `now` that expires after `ttl` seconds.
    pub fn expiring(timestamp: i64, ttl: i32, now: i32) -> Self {
        LivenessInfo {
            timestamp,
            ttl,
            local_expiration_time: now.saturating_add(ttl),
        }
    }

    pub fn is_expiring(&self) -> bool {
        self.ttl > 0
    }

    pub fn is_live(&self, now: i32) -> bool {
        !self.is_expiring() || now < self.local_expiration_time
    }

    /// Cassandra's `LivenessInfo.supersedes`.
    pub fn supersedes(&self, other: &LivenessInfo) -> bool {
        if self.timestamp != other.timestamp {
            return self.timestamp > other.timestamp;
        }
        if self.is_expiring() == other.is_expiring() {
            // Equal expiry: the greater TTL wins, as Cassandra documents, so merges do
            // not depend on their order.
            return (self.local_expiration_time, self.ttl)
                > (other.local_expiration_time, other.ttl);
        }
        self.is_expiring()
    }
}

/// One cell: a value (or tombstone) with its write metadata.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    pub timestamp: i64,
    /// Seconds to live; 0 when the cell does not expire.
    pub ttl: i32,
    /// Expiry second for TTL cells, deletion second for tombstones, [`NO_DELETION_TIME`] otherwise.
    pub local_deletion_time: i32,
    /// `None` for a tombstone.
    pub value: Option<Bytes>,
    /// Element key inside a non-frozen collection or UDT.
    pub path: Option<Bytes>,
    /// The value is a counter context (see [`crate::counter_context`]): the cell reconciles by merging
    /// shards. Unflagged counter cells are legacy 8-byte totals.
    pub counter: bool,
}

impl Cell {
    /// What Cassandra's `Cell.dataSize` counts besides the value and the path: timestamp (8),
    /// TTL (4) and local deletion time (8).
    pub const DATA_OVERHEAD: u64 = 20;

    /// Cassandra's `Cell.dataSize`, which its guardrails and batch sizes measure.
    pub fn data_size(&self) -> u64 {
        let value = self.value.as_ref().map_or(0, Bytes::len);
        let path = self.path.as_ref().map_or(0, Bytes::len);
        Cell::DATA_OVERHEAD + (value + path) as u64
    }

    /// A regular live cell.
    pub fn live(timestamp: i64, value: Bytes) -> Self {
        Cell {
            timestamp,
            ttl: 0,
            local_deletion_time: NO_DELETION_TIME,
            value: Some(value),
            path: None,
            counter: false,
        }
    }

    /// A live cell written at `now` that expires after `ttl` seconds.
    pub fn expiring(timestamp: i64, ttl: i32, now: i32, value: Bytes) -> Self {
        Cell {
            timestamp,
            ttl,
            local_deletion_time: now.saturating_add(ttl),
            value: Some(value),
            path: None,
            counter: false,
        }
    }

    /// A cell tombstone written at `now`.
    pub fn tombstone(timestamp: i64, now: i32) -> Self {
        Cell {
            timestamp,
            ttl: 0,
            local_deletion_time: now,
            value: None,
            path: None,
            counter: false,
        }
    }

    /// A live counter cell holding `context`.
    pub fn counter(timestamp: i64, context: &crate::counter_context::CounterContext) -> Self {
        Cell {
            counter: true,
            ..Cell::live(timestamp, context.encode())
        }
    }

    /// The same cell addressed to a collection element.
    pub fn with_path(mut self, path: Bytes) -> Self {
        self.path = Some(path);
        self
    }

    pub fn is_tombstone(&self) -> bool {
        self.value.is_none()
    }

    /// A live cell holding a counter context.
    pub fn is_counter(&self) -> bool {
        self.counter && self.value.is_some()
    }

    pub fn is_expiring(&self) -> bool {
        self.ttl > 0 && self.value.is_some()
    }

    /// Live at `now`: not a tombstone and not expired.
    pub fn is_live(&self, now: i32) -> bool {
        self.value.is_some() && (self.ttl == 0 || now < self.local_deletion_time)
    }
}

/// The cells of a multi-cell (non-frozen collection or UDT) column.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ComplexColumn {
    /// Deletion of the whole collection (e.g. overwriting a list).
    pub deletion: DeletionTime,
    /// Cells sorted by path.
    pub cells: Vec<Cell>,
}

/// What a column holds in a row.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ColumnValue {
    Simple(Cell),
    Complex(ComplexColumn),
}

/// One column of a row.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ColumnData {
    pub name: Bytes,
    pub value: ColumnValue,
}

impl ColumnData {
    pub fn simple(name: impl Into<Bytes>, cell: Cell) -> Self {
        ColumnData {
            name: name.into(),
            value: ColumnValue::Simple(cell),
        }
    }

    pub fn complex(name: impl Into<Bytes>, deletion: DeletionTime, cells: Vec<Cell>) -> Self {
        ColumnData {
            name: name.into(),
            value: ColumnValue::Complex(ComplexColumn { deletion, cells }),
        }
    }
}

/// A row: clustering key, optional row marker, row deletion and columns sorted by name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Row {
    pub clustering: Bytes,
    pub liveness: Option<LivenessInfo>,
    pub deletion: DeletionTime,
    pub columns: Vec<ColumnData>,
}

impl Row {
    /// A row with nothing in it yet.
    pub fn new(clustering: impl Into<Bytes>) -> Self {
        Row {
            clustering: clustering.into(),
            liveness: None,
            deletion: DeletionTime::LIVE,
            columns: Vec::new(),
        }
    }

    /// Looks a column up by name.
    pub fn column(&self, name: &[u8]) -> Option<&ColumnData> {
        self.columns
            .binary_search_by(|c| c.name.as_ref().cmp(name))
            .ok()
            .map(|i| &self.columns[i])
    }
}

/// Deletion of the clustering range between `start` and `end`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RangeTombstone {
    pub start: Bound<Bytes>,
    pub end: Bound<Bytes>,
    pub deletion: DeletionTime,
}

impl RangeTombstone {
    /// Whether `clustering` falls inside the range.
    pub fn covers(&self, clustering: &[u8]) -> bool {
        in_slice(&self.start, &self.end, clustering)
    }
}

/// Everything one write does to one partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionUpdate {
    pub partition_deletion: DeletionTime,
    pub static_row: Option<Row>,
    pub rows: Vec<Row>,
    pub range_tombstones: Vec<RangeTombstone>,
}

impl Default for PartitionUpdate {
    fn default() -> Self {
        PartitionUpdate {
            partition_deletion: DeletionTime::LIVE,
            static_row: None,
            rows: Vec::new(),
            range_tombstones: Vec::new(),
        }
    }
}

/// A partition update addressed to a table and key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutation {
    pub table: TableId,
    pub key: PartitionKey,
    pub update: PartitionUpdate,
}

/// The live content of a partition as returned by reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    pub key: PartitionKey,
    pub static_row: Option<Row>,
    pub rows: Vec<Row>,
}

/// Whether `value` lies between `start` and `end`.
pub fn in_slice(start: &Bound<Bytes>, end: &Bound<Bytes>, value: &[u8]) -> bool {
    let after_start = match start {
        Bound::Included(s) => value >= s.as_ref(),
        Bound::Excluded(s) => value > s.as_ref(),
        Bound::Unbounded => true,
    };
    let before_end = match end {
        Bound::Included(e) => value <= e.as_ref(),
        Bound::Excluded(e) => value < e.as_ref(),
        Bound::Unbounded => true,
    };
    after_start && before_end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletion_time_supersedes_by_timestamp_then_local_time() {
        let a = DeletionTime::new(10, 5);
        let b = DeletionTime::new(10, 6);
        assert!(b.supersedes(&a));
        assert!(!a.supersedes(&b));
        assert_eq!(a.merge(b), b);
        assert_eq!(DeletionTime::LIVE.merge(a), a);
        assert!(a.deletes(10) && !a.deletes(11));
        assert!(!DeletionTime::LIVE.deletes(i64::MIN + 1));
    }

    #[test]
    fn liveness_supersedes_prefers_expiring_on_tie() {
        let plain = LivenessInfo::new(5);
        let ttl = LivenessInfo::expiring(5, 10, 100);
        assert!(ttl.supersedes(&plain));
        assert!(!plain.supersedes(&ttl));
        assert!(LivenessInfo::new(6).supersedes(&ttl));
        assert!(ttl.is_live(109) && !ttl.is_live(110));
    }

    #[test]
    fn cell_liveness_respects_expiry_and_tombstones() {
        let c = Cell::expiring(1, 10, 100, Bytes::from_static(b"v"));
        assert!(c.is_live(109));
        assert!(!c.is_live(110));
        assert!(!Cell::tombstone(1, 100).is_live(0));
        assert!(Cell::live(1, Bytes::new()).is_live(i32::MAX));
    }

    /// Cassandra 5.0.4 reports a list<int> element (4-byte value, 16-byte timeuuid path) as 40
    /// bytes and a text value of 146 bytes as 166.
    #[test]
    fn cell_data_size_counts_as_cassandra_does() {
        let element = Cell::live(1, Bytes::from_static(&[0, 0, 0, 1]))
            .with_path(Bytes::from_static(&[0; 16]));
        assert_eq!(element.data_size(), 40);
        assert_eq!(Cell::live(1, Bytes::from(vec![b'x'; 146])).data_size(), 166);
        assert_eq!(Cell::tombstone(1, 2).data_size(), Cell::DATA_OVERHEAD);
    }

    #[test]
    fn row_column_lookup_uses_sorted_names() {
        let mut row = Row::new("c");
        row.columns = vec![
            ColumnData::simple("a", Cell::live(1, Bytes::from_static(b"1"))),
            ColumnData::simple("b", Cell::live(1, Bytes::from_static(b"2"))),
        ];
        assert!(row.column(b"b").is_some());
        assert!(row.column(b"z").is_none());
    }
}
