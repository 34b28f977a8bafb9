//! Reporting what flushes and compactions write past Cassandra's write-time guardrails:
//! partitions past a size or a number of tombstones (`partition_size`, `partition_tombstones`)
//! and non-frozen collections past a size or a number of items (`collection_size`,
//! `items_per_collection`), which Cassandra checks as it writes SSTables. Storage measures;
//! the node's [`PartitionWatch`] decides and reports.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::RwLock;

use mutation::partition::PartitionData;
use mutation::{ColumnValue, ComplexColumn, DeletionTime, PartitionKey, Row};

/// The smallest value of each measure worth reporting (`None`: never).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WatchThresholds {
    pub partition_size: Option<u64>,
    pub partition_tombstones: Option<u64>,
    pub collection_size: Option<u64>,
    pub collection_items: Option<u64>,
}

impl WatchThresholds {
    fn any(&self) -> bool {
        self.partition_size.is_some() || self.partition_tombstones.is_some() || self.collections()
    }

    fn collections(&self) -> bool {
        self.collection_size.is_some() || self.collection_items.is_some()
    }
}

/// A partition just written to an SSTable.
pub struct WrittenPartition<'a> {
    pub keyspace: &'a str,
    pub table: &'a str,
    pub key: &'a PartitionKey,
    /// Its bytes in the Data file, before compression.
    pub size: u64,
    /// Its tombstones, counted as Cassandra's SSTable metadata counts them (0 when the watch
    /// has no tombstone threshold).
    pub tombstones: u64,
    /// The SSTable's Data file.
    pub sstable: &'a Path,
}

/// A multi-cell column just written (a non-frozen collection, or a non-frozen user type, which
/// the watch tells apart), measured by its live cells as Cassandra measures a collection at
/// SSTable write: the cells not deleted, expired or shadowed by a deletion.
pub struct WrittenCollection<'a> {
    pub keyspace: &'a str,
    pub table: &'a str,
    pub key: &'a PartitionKey,
    /// The row's encoded clustering; `None` for the static row.
    pub clustering: Option<&'a [u8]>,
    pub column: &'a [u8],
    /// The live cells' data size plus a deletion time (`ComplexColumnData.dataSize`).
    pub size: u64,
    /// The live cells.
    pub items: u64,
}

/// Told about the written partitions and collections that reach its thresholds.
pub trait PartitionWatch: Send + Sync {
    fn thresholds(&self) -> WatchThresholds;
    fn written(&self, partition: &WrittenPartition<'_>);
    /// Told about each row's collections before about their partition, as Cassandra checks
    /// rows as it writes them.
    fn collection(&self, collection: &WrittenCollection<'_>);
}

/// The node's watch, shared by every table (installed once the node knows its schema).
#[derive(Clone, Default)]
pub struct WatchSlot(Arc<RwLock<Option<Arc<dyn PartitionWatch>>>>);

impl WatchSlot {
    pub fn install(&self, watch: Arc<dyn PartitionWatch>) {
        *self.0.write() = Some(watch);
    }

    pub fn current(&self) -> Option<Arc<dyn PartitionWatch>> {
        self.0.read().clone()
    }
}

/// A watch as one SSTable writer uses it: its thresholds read once.
pub(crate) struct Watcher {
    watch: Arc<dyn PartitionWatch>,
    thresholds: WatchThresholds,
    keyspace: String,
    table: String,
    /// Seconds since the epoch when the SSTable was started: cells expired by then count as
    /// tombstones, and not as collection items.
    now: i32,
}

impl Watcher {
    pub fn new(
        watch: Arc<dyn PartitionWatch>,
        keyspace: &str,
        table: &str,
        now: i32,
    ) -> Option<Watcher> {
        let thresholds = watch.thresholds();
        thresholds.any().then(|| Watcher {
            watch,
            thresholds,
            keyspace: keyspace.to_string(),
            table: table.to_string(),
            now,
        })
    }

    /// Reports the partition's collections, then the partition, past a threshold.
    pub fn check(
        &self,
        key: &PartitionKey,
        data: &PartitionData,
        size: u64,
        sstable: impl FnOnce() -> PathBuf,
    ) {
        if self.thresholds.collections() {
            self.check_collections(key, data);
        }
        let t = &self.thresholds;
        let tombstones = t
            .partition_tombstones
            .map_or(0, |_| count_tombstones(data, self.now));
        let big = t.partition_size.is_some_and(|t| size > t);
        let many = t.partition_tombstones.is_some_and(|t| tombstones > t);
        if !big && !many {
            return;
        }
        self.watch.written(&WrittenPartition {
            keyspace: &self.keyspace,
            table: &self.table,
            key,
            size,
            tombstones,
            sstable: &sstable(),
        });
    }

    fn check_collections(&self, key: &PartitionKey, data: &PartitionData) {
        let rows = data
            .static_row
            .iter()
            .map(|row| (None, row, data.partition_deletion));
        let rows = rows.chain(data.rows.values().map(|row| {
            let covering = data.deletion_covering(&row.clustering);
            (Some(row.clustering.as_ref()), row, covering)
        }));
        for (clustering, row, covering) in rows {
            self.check_row(key, clustering, row, covering.merge(row.deletion));
        }
    }

    fn check_row(
        &self,
        key: &PartitionKey,
        clustering: Option<&[u8]>,
        row: &Row,
        deletion: DeletionTime,
    ) {
        for column in &row.columns {
            let ColumnValue::Complex(complex) = &column.value else {
                continue;
            };
            let Some((size, items)) = measure(complex, deletion, self.now) else {
                continue;
            };
            let t = &self.thresholds;
            let large = t.collection_size.is_some_and(|t| size > t);
            let long = t.collection_items.is_some_and(|t| items > t);
            if large || long {
                self.watch.collection(&WrittenCollection {
                    keyspace: &self.keyspace,
                    table: &self.table,
                    key,
                    clustering,
                    column: &column.name,
                    size,
                    items,
                });
            }
        }
    }
}

/// A multi-cell column's live data size and cell count, `None` when nothing in it is live
/// (Cassandra's `ComplexColumnData.purge` then leaves nothing to measure).
fn measure(complex: &ComplexColumn, deletion: DeletionTime, now: i32) -> Option<(u64, u64)> {
    let deletion = deletion.merge(complex.deletion);
    let live = complex
        .cells
        .iter()
        .filter(|cell| cell.is_live(now) && !deletion.deletes(cell.timestamp));
    let (size, items) = live.fold((0, 0), |(size, items), cell| {
        (size + cell.data_size(), items + 1)
    });
    (items > 0).then_some((DeletionTime::DATA_SIZE + size, items))
}

/// Cassandra's `MetadataCollector` count for one partition: its deletion, each row's expired
/// liveness and deletion, each deleted or expired cell and collection deletion, and each range
/// tombstone's two bounds.
pub(crate) fn count_tombstones(data: &PartitionData, now: i32) -> u64 {
    let deletion = u64::from(!data.partition_deletion.is_live());
    let rows: u64 = data
        .static_row
        .iter()
        .chain(data.rows.values())
        .map(|row| row_tombstones(row, now))
        .sum();
    deletion + rows + 2 * data.range_tombstones.len() as u64
}

fn row_tombstones(row: &Row, now: i32) -> u64 {
    let liveness = row.liveness.is_some_and(|l| !l.is_live(now));
    let mut count = u64::from(liveness) + u64::from(!row.deletion.is_live());
    for column in &row.columns {
        match &column.value {
            ColumnValue::Simple(cell) => count += u64::from(!cell.is_live(now)),
            ColumnValue::Complex(complex) => {
                count += u64::from(!complex.deletion.is_live());
                count += complex.cells.iter().filter(|c| !c.is_live(now)).count() as u64;
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use std::ops::Bound;

    use bytes::Bytes;
    use parking_lot::Mutex;

    use super::*;
    use crate::sstable::{SstableWriter, WriteOptions};
    use mutation::{Cell, ColumnData, PartitionUpdate, RangeTombstone};

    const NOW: i32 = 1_700_000_000;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn deleted_row(clustering: &str) -> Row {
        let mut row = Row::new(b(clustering));
        row.deletion = DeletionTime::new(10, NOW);
        row
    }

    /// The partition of Cassandra 5.0.4's refcass run that reported "has 8 tombstones": three
    /// deleted rows, two range deletions and one deleted cell.
    fn tombstoned() -> PartitionData {
        let mut update = PartitionUpdate {
            rows: vec![deleted_row("1"), deleted_row("2"), deleted_row("3")],
            ..PartitionUpdate::default()
        };
        let mut cell_deleted = Row::new(b("9"));
        cell_deleted.columns = vec![ColumnData::simple(b("v"), Cell::tombstone(10, NOW))];
        update.rows.push(cell_deleted);
        for (start, end) in [("5", None), ("3", Some("4"))] {
            update.range_tombstones.push(RangeTombstone {
                start: Bound::Excluded(b(start)),
                end: end.map_or(Bound::Unbounded, |e| Bound::Excluded(b(e))),
                deletion: DeletionTime::new(10, NOW),
            });
        }
        let mut data = PartitionData::default();
        data.apply(update);
        data
    }

    #[test]
    fn tombstones_counted_as_cassandra_does() {
        assert_eq!(count_tombstones(&tombstoned(), NOW), 8);
        let mut expired = Row::new(b("1"));
        expired.columns = vec![ColumnData::simple(
            b("v"),
            Cell::expiring(10, 5, NOW - 10, b("x")),
        )];
        let update = PartitionUpdate {
            partition_deletion: DeletionTime::new(1, NOW),
            rows: vec![expired],
            ..PartitionUpdate::default()
        };
        let mut data = PartitionData::default();
        data.apply(update);
        assert_eq!(
            count_tombstones(&data, NOW),
            2,
            "partition deletion and expired cell"
        );
        assert_eq!(count_tombstones(&PartitionData::default(), NOW), 0);
    }

    /// Remembers what it is told, in order.
    struct Recorder {
        thresholds: WatchThresholds,
        seen: Mutex<Vec<String>>,
    }

    impl Recorder {
        fn new(thresholds: WatchThresholds) -> Arc<Recorder> {
            Arc::new(Recorder {
                thresholds,
                seen: Mutex::new(Vec::new()),
            })
        }
    }

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    impl PartitionWatch for Recorder {
        fn thresholds(&self) -> WatchThresholds {
            self.thresholds
        }

        fn written(&self, p: &WrittenPartition<'_>) {
            let data_file = p.sstable.to_string_lossy().ends_with("Data.db");
            let line = format!(
                "{}.{}:{} size {} tombstones {} data file {data_file}",
                p.keyspace,
                p.table,
                text(&p.key.key),
                p.size,
                p.tombstones
            );
            self.seen.lock().push(line);
        }

        fn collection(&self, c: &WrittenCollection<'_>) {
            let row = c.clustering.map_or_else(|| "static".to_string(), text);
            let line = format!(
                "{}:{} row {row} column {} size {} items {}",
                c.table,
                text(&c.key.key),
                text(c.column),
                c.size,
                c.items
            );
            self.seen.lock().push(line);
        }
    }

    fn write(recorder: Arc<Recorder>, partitions: &[(&str, PartitionData)]) {
        let dir = tempfile::tempdir().expect("temp dir");
        let watcher = Watcher::new(recorder, "ks", "t", NOW);
        let mut writer = SstableWriter::create(dir.path(), 1, WriteOptions::default())
            .expect("writer")
            .watched(watcher);
        for (i, (name, data)) in partitions.iter().enumerate() {
            let key = PartitionKey {
                token: i as i64,
                key: b(name),
            };
            writer.append(&key, data).expect("append");
        }
        writer.finish().expect("finish");
    }

    fn partition(update: PartitionUpdate) -> PartitionData {
        let mut data = PartitionData::default();
        data.apply(update);
        data
    }

    fn big() -> PartitionData {
        let mut row = Row::new(b("1"));
        row.columns = vec![ColumnData::simple(
            b("v"),
            Cell::live(10, Bytes::from(vec![b'x'; 2000])),
        )];
        partition(PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        })
    }

    fn sizes(size: u64, tombstones: u64) -> WatchThresholds {
        WatchThresholds {
            partition_size: Some(size),
            partition_tombstones: Some(tombstones),
            ..WatchThresholds::default()
        }
    }

    #[test]
    fn partitions_past_a_threshold_are_reported_with_their_sstable() {
        let recorder = Recorder::new(sizes(1024, 5));
        write(
            recorder.clone(),
            &[
                ("big", big()),
                ("small", PartitionData::default()),
                ("tomb", tombstoned()),
            ],
        );
        let seen = recorder.seen.lock();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(seen[0].starts_with("ks.t:big size 20"), "{}", seen[0]);
        assert!(seen[0].ends_with("tombstones 0 data file true"));
        assert!(seen[1].starts_with("ks.t:tomb size "));
        assert!(seen[1].ends_with("tombstones 8 data file true"));
    }

    #[test]
    fn a_watch_without_thresholds_is_not_consulted() {
        let recorder = Recorder::new(WatchThresholds::default());
        assert!(Watcher::new(recorder.clone(), "ks", "t", NOW).is_none());
        write(recorder.clone(), &[("big", big())]);
        assert!(recorder.seen.lock().is_empty());
    }

    /// A list element: a 4-byte value under a 16-byte path (40 bytes as Cassandra counts it).
    fn element(i: u8, timestamp: i64) -> Cell {
        Cell::live(timestamp, Bytes::from(vec![0, 0, 0, i])).with_path(Bytes::from(vec![i; 16]))
    }

    fn list_row(clustering: &str, deletion: DeletionTime, cells: Vec<Cell>) -> Row {
        let mut row = Row::new(b(clustering));
        row.columns = vec![ColumnData::complex(b("l"), deletion, cells)];
        row
    }

    /// Cassandra measures what is live once deletions apply: tombstones, expired cells and
    /// cells older than the collection's, the row's, a range's or the partition's deletion
    /// are not counted. Five live elements measure 12 + 5 x 40 = 212 bytes, the size Cassandra
    /// 5.0.4 logged for a five-element list<int> at flush.
    #[test]
    fn collections_are_measured_by_their_live_cells() {
        let mut cells: Vec<Cell> = (1..=5).map(|i| element(i, 20)).collect();
        cells.push(Cell::tombstone(20, NOW).with_path(Bytes::from(vec![9; 16])));
        let expired = Cell::expiring(20, 5, NOW - 10, Bytes::from(vec![0, 0, 0, 8]));
        cells.push(expired.with_path(Bytes::from(vec![8; 16])));
        cells.push(element(7, 5));
        let collection_deleted = DeletionTime::new(10, NOW);
        let mut static_row = list_row("", DeletionTime::LIVE, vec![element(1, 20), element(2, 20)]);
        static_row.clustering = Bytes::new();
        let mut row_deleted = list_row("3", DeletionTime::LIVE, vec![element(1, 5)]);
        row_deleted.deletion = DeletionTime::new(6, NOW);
        let update = PartitionUpdate {
            partition_deletion: DeletionTime::new(1, NOW),
            static_row: Some(static_row),
            rows: vec![
                list_row("1", collection_deleted, cells),
                list_row(
                    "2",
                    DeletionTime::LIVE,
                    vec![element(1, 20), element(2, 20)],
                ),
                row_deleted,
                list_row("4", DeletionTime::LIVE, vec![element(1, 20), element(2, 1)]),
                list_row(
                    "5",
                    DeletionTime::LIVE,
                    (1..=3).map(|i| element(i, 8)).collect(),
                ),
            ],
            range_tombstones: vec![RangeTombstone {
                start: Bound::Included(b("5")),
                end: Bound::Included(b("5")),
                deletion: DeletionTime::new(9, NOW),
            }],
        };
        let recorder = Recorder::new(WatchThresholds {
            collection_size: Some(100),
            collection_items: Some(1),
            ..WatchThresholds::default()
        });
        write(recorder.clone(), &[("p", partition(update))]);
        assert_eq!(
            *recorder.seen.lock(),
            [
                "t:p row static column l size 92 items 2",
                "t:p row 1 column l size 212 items 5",
                "t:p row 2 column l size 92 items 2",
            ]
        );
    }

    #[test]
    fn collections_within_the_thresholds_are_not_reported() {
        let update = PartitionUpdate {
            rows: vec![list_row("1", DeletionTime::LIVE, vec![element(1, 20)])],
            ..PartitionUpdate::default()
        };
        let recorder = Recorder::new(WatchThresholds {
            collection_size: Some(52),
            collection_items: Some(1),
            ..sizes(1 << 20, 100)
        });
        write(recorder.clone(), &[("p", partition(update))]);
        assert!(recorder.seen.lock().is_empty());
    }
}
