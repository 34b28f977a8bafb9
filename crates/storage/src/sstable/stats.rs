//! The Statistics component: what compaction strategies and the read path need to know about an
//! SSTable without reading its data — timestamps, clustering and token bounds, tombstone counts,
//! drop-time and partition-size histograms, and the rewritable level and repair time.

use std::ops::Bound;
use std::path::Path;

use bytes::{BufMut, Bytes};

use crate::error::Result;
use crate::sstable::format::{put_bytes, seal, unseal, Decoder, STATS_MAGIC};
use crate::sstable::histogram::{EstimatedHistogram, StreamingHistogram};
use crate::sstable::records::RowRecord;
use crate::sstable::summary::{get_key, put_key};
use mutation::codec::{visit_decoded, CellView, Numbering, RowVisitor};
use mutation::partition::PartitionData;
use mutation::row_map::RowMap;
use mutation::{DeletionTime, LivenessInfo, PartitionKey};
use uuid::Uuid;

/// Bounds every row clustering and range-tombstone bound of the SSTable lies within.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusteringRange {
    /// Smallest clustering (empty when some range tombstone is open at the start).
    pub min: Bytes,
    /// Largest clustering; `None` when some range tombstone is open at the end.
    pub max: Option<Bytes>,
}

/// Statistics of one SSTable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SstableStats {
    pub partitions: u64,
    pub rows: u64,
    /// Every cell, tombstones and expiring cells included.
    pub cells: u64,
    pub expiring_cells: u64,
    pub cell_tombstones: u64,
    /// Row deletions and whole-collection deletions.
    pub row_tombstones: u64,
    pub range_tombstones: u64,
    pub partition_tombstones: u64,
    /// Smallest and largest timestamp of any cell, marker or deletion (`i64::MAX`/`MIN` if none).
    pub min_timestamp: i64,
    pub max_timestamp: i64,
    /// Smallest local deletion time of a tombstone or expiring cell (`i32::MAX` if none).
    pub min_local_deletion_time: i32,
    /// Largest local deletion time, `i32::MAX` when some cell or row marker never expires (as
    /// Cassandra's `maxLocalDeletionTime`, so "fully expired" never drops live data).
    pub max_local_deletion_time: i32,
    pub clustering: Option<ClusteringRange>,
    pub first_key: Option<PartitionKey>,
    pub last_key: Option<PartitionKey>,
    /// Local deletion times of tombstones and expiry times of TTL'd data.
    pub tombstone_drop_times: StreamingHistogram,
    /// Uncompressed partition sizes in bytes.
    pub partition_sizes: EstimatedHistogram,
    /// Length of the uncompressed Data stream.
    pub uncompressed_size: u64,
    /// Length of the Data file.
    pub compressed_size: u64,
    /// Level for leveled compaction (0 for a flush).
    pub level: u32,
    /// When the data was repaired (milliseconds; 0 = unrepaired).
    pub repaired_at: u64,
    /// The incremental repair session whose data this is until it ends (Cassandra's
    /// `pendingRepair`); never set together with `repaired_at`.
    pub pending_repair: Option<Uuid>,
    /// Cells per partition (Cassandra's `estimatedCellPerPartitionCount`); empty for
    /// SSTables written before it was recorded.
    pub cell_counts: EstimatedHistogram,
    /// What the rows of the Data component are numbered with (format version 2; empty in
    /// version 1, whose rows spell their names).
    pub numbering: RowNumbering,
}

/// An SSTable's repair state (Cassandra's `repairedAt` and `pendingRepair`): unrepaired,
/// repaired at some time, or in an incremental repair session not yet ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RepairMark {
    /// Milliseconds since the epoch; 0 = not repaired.
    pub repaired_at: u64,
    pub pending_repair: Option<Uuid>,
}

impl RepairMark {
    pub const UNREPAIRED: RepairMark = RepairMark {
        repaired_at: 0,
        pending_repair: None,
    };

    pub fn repaired(at_ms: u64) -> RepairMark {
        RepairMark {
            repaired_at: at_ms,
            pending_repair: None,
        }
    }

    pub fn pending(session: Uuid) -> RepairMark {
        RepairMark {
            repaired_at: 0,
            pending_repair: Some(session),
        }
    }

    pub fn is_repaired(&self) -> bool {
        self.repaired_at > 0 && self.pending_repair.is_none()
    }
}

/// What the rows of an SSTable of format version 2 are numbered with: the column names in the
/// order numbered, each one's usual value length, the timestamp row markers are written from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowNumbering {
    pub names: Vec<Bytes>,
    pub lengths: Vec<u32>,
    pub timestamp_base: i64,
}

impl RowNumbering {
    /// The form the row decoder takes.
    pub(crate) fn as_codec(&self) -> Numbering<'_> {
        Numbering {
            names: &self.names,
            lengths: &self.lengths,
            timestamp_base: self.timestamp_base,
        }
    }
}

impl Default for SstableStats {
    fn default() -> Self {
        SstableStats {
            partitions: 0,
            rows: 0,
            cells: 0,
            expiring_cells: 0,
            cell_tombstones: 0,
            row_tombstones: 0,
            range_tombstones: 0,
            partition_tombstones: 0,
            min_timestamp: i64::MAX,
            max_timestamp: i64::MIN,
            min_local_deletion_time: i32::MAX,
            max_local_deletion_time: i32::MIN,
            clustering: None,
            first_key: None,
            last_key: None,
            tombstone_drop_times: StreamingHistogram::default(),
            partition_sizes: EstimatedHistogram::default(),
            uncompressed_size: 0,
            compressed_size: 0,
            level: 0,
            repaired_at: 0,
            pending_repair: None,
            cell_counts: EstimatedHistogram::default(),
            numbering: RowNumbering::default(),
        }
    }
}

impl SstableStats {
    pub fn min_token(&self) -> Option<i64> {
        self.first_key.as_ref().map(|k| k.token)
    }

    pub fn max_token(&self) -> Option<i64> {
        self.last_key.as_ref().map(|k| k.token)
    }

    /// Whether and how the data was repaired.
    pub fn repair(&self) -> RepairMark {
        RepairMark {
            repaired_at: self.repaired_at,
            pending_repair: self.pending_repair,
        }
    }

    pub fn set_repair(&mut self, repair: RepairMark) {
        self.repaired_at = repair.repaired_at;
        self.pending_repair = repair.pending_repair;
    }

    /// All tombstones of every kind.
    pub fn tombstones(&self) -> u64 {
        self.cell_tombstones
            + self.row_tombstones
            + self.range_tombstones
            + self.partition_tombstones
    }

    /// Estimated tombstones and expired cells purgeable when `gc_before` (seconds) is the
    /// deletion time before which tombstones may be dropped.
    pub fn droppable_tombstones(&self, gc_before: i32) -> u64 {
        self.tombstone_drop_times.count_below(i64::from(gc_before))
    }

    /// Cassandra's `getEstimatedDroppableTombstoneRatio`: droppable tombstones over all cells
    /// and deletions, the input of `tombstone_threshold`.
    pub fn droppable_tombstone_ratio(&self, gc_before: i32) -> f64 {
        let total =
            self.cells + self.row_tombstones + self.range_tombstones + self.partition_tombstones;
        self.droppable_tombstones(gc_before) as f64 / total.max(1) as f64
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for n in [
            self.partitions,
            self.rows,
            self.cells,
            self.expiring_cells,
            self.cell_tombstones,
            self.row_tombstones,
            self.range_tombstones,
            self.partition_tombstones,
        ] {
            out.put_u64(n);
        }
        out.put_i64(self.min_timestamp);
        out.put_i64(self.max_timestamp);
        out.put_i32(self.min_local_deletion_time);
        out.put_i32(self.max_local_deletion_time);
        encode_clustering(&mut out, &self.clustering);
        for key in [&self.first_key, &self.last_key] {
            match key {
                Some(key) => {
                    out.put_u8(1);
                    put_key(&mut out, key);
                }
                None => out.put_u8(0),
            }
        }
        self.tombstone_drop_times.encode(&mut out);
        self.partition_sizes.encode(&mut out);
        out.put_u64(self.uncompressed_size);
        out.put_u64(self.compressed_size);
        out.put_u32(self.level);
        out.put_u64(self.repaired_at);
        self.cell_counts.encode(&mut out);
        out.put_u32(self.numbering.names.len() as u32);
        let numbering = &self.numbering;
        for (name, length) in numbering.names.iter().zip(&numbering.lengths) {
            put_bytes(&mut out, name);
            out.put_u32(*length);
        }
        out.put_i64(numbering.timestamp_base);
        match self.pending_repair {
            Some(session) => {
                out.put_u8(1);
                out.put_slice(session.as_bytes());
            }
            None => out.put_u8(0),
        }
        seal(STATS_MAGIC, &out)
    }

    pub(crate) fn decode(bytes: &[u8], file: &Path) -> Result<SstableStats> {
        let body = unseal(bytes, STATS_MAGIC, file)?;
        let mut d = Decoder::new(body, file, 6);
        let mut counts = [0u64; 8];
        for count in &mut counts {
            *count = d.u64()?;
        }
        let [partitions, rows, cells, expiring_cells, cell_tombstones, row_tombstones, range_tombstones, partition_tombstones] =
            counts;
        let mut stats = SstableStats {
            partitions,
            rows,
            cells,
            expiring_cells,
            cell_tombstones,
            row_tombstones,
            range_tombstones,
            partition_tombstones,
            min_timestamp: d.i64()?,
            max_timestamp: d.i64()?,
            min_local_deletion_time: d.i32()?,
            max_local_deletion_time: d.i32()?,
            clustering: decode_clustering(&mut d)?,
            first_key: decode_key(&mut d)?,
            last_key: decode_key(&mut d)?,
            tombstone_drop_times: StreamingHistogram::decode(&mut d)?,
            partition_sizes: EstimatedHistogram::decode(&mut d)?,
            uncompressed_size: d.u64()?,
            compressed_size: d.u64()?,
            level: d.u32()?,
            repaired_at: d.u64()?,
            pending_repair: None,
            cell_counts: if d.is_empty() {
                EstimatedHistogram::default()
            } else {
                EstimatedHistogram::decode(&mut d)?
            },
            numbering: RowNumbering::default(),
        };
        if !d.is_empty() {
            stats.numbering = decode_numbering(&mut d)?;
        }
        if !d.is_empty() && decode_flag(&mut d)? {
            stats.pending_repair = Some(Uuid::from_bytes(d.array()?));
        }
        d.finish()?;
        Ok(stats)
    }
}

/// The column names (each shared with every row decoded: interned when they are text, as the
/// names of rows written are), their usual lengths and the timestamp base.
fn decode_numbering(d: &mut Decoder<'_>) -> Result<RowNumbering> {
    let count = d.count(8)?;
    let mut numbering = RowNumbering::default();
    for _ in 0..count {
        let name = d.slice()?;
        numbering.names.push(match std::str::from_utf8(name) {
            Ok(text) => mutation::column_name(text),
            Err(_) => Bytes::copy_from_slice(name),
        });
        numbering.lengths.push(d.u32()?);
    }
    numbering.timestamp_base = d.i64()?;
    Ok(numbering)
}

fn encode_clustering(out: &mut Vec<u8>, range: &Option<ClusteringRange>) {
    let Some(range) = range else {
        out.put_u8(0);
        return;
    };
    out.put_u8(1);
    put_bytes(out, &range.min);
    match &range.max {
        Some(max) => {
            out.put_u8(1);
            put_bytes(out, max);
        }
        None => out.put_u8(0),
    }
}

fn decode_clustering(d: &mut Decoder<'_>) -> Result<Option<ClusteringRange>> {
    if !decode_flag(d)? {
        return Ok(None);
    }
    let min = d.bytes()?;
    let max = if decode_flag(d)? {
        Some(d.bytes()?)
    } else {
        None
    };
    Ok(Some(ClusteringRange { min, max }))
}

fn decode_key(d: &mut Decoder<'_>) -> Result<Option<PartitionKey>> {
    Ok(if decode_flag(d)? {
        Some(get_key(d)?)
    } else {
        None
    })
}

fn decode_flag(d: &mut Decoder<'_>) -> Result<bool> {
    match d.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(d.corrupt("invalid flag byte")),
    }
}

/// Accumulates statistics while partitions are written.
#[derive(Default)]
pub(crate) struct StatsCollector {
    stats: SstableStats,
}

impl StatsCollector {
    /// Records the last partition key written (not tracked per partition, which would clone
    /// every key).
    pub fn set_last_key(&mut self, key: Option<PartitionKey>) {
        self.stats.last_key = key;
    }

    /// Adds a partition: `data`'s deletion, static row and range tombstones, and `rows`.
    pub fn add_partition<R: RowRecord>(
        &mut self,
        key: &PartitionKey,
        data: &PartitionData,
        rows: &RowMap<R>,
        size: u64,
    ) -> Result<()> {
        let cells_before = self.stats.cells;
        let s = &mut self.stats;
        s.partitions += 1;
        s.partition_sizes.add(size);
        if s.first_key.is_none() {
            s.first_key = Some(key.clone());
        }
        if !data.partition_deletion.is_live() {
            s.partition_tombstones += 1;
            self.deletion(data.partition_deletion);
        }
        if let Some(row) = &data.static_row {
            visit_decoded(row, self);
        }
        for (clustering, row) in rows.iter() {
            self.stats.rows += 1;
            self.clustering(Bound::Included(clustering), Bound::Included(clustering));
            row.add_stats(self)?;
        }
        for tombstone in &data.range_tombstones {
            self.stats.range_tombstones += 1;
            self.deletion(tombstone.deletion);
            self.clustering(tombstone.start.as_ref(), tombstone.end.as_ref());
        }
        let cells = self.stats.cells - cells_before;
        self.stats.cell_counts.add(cells);
        Ok(())
    }

    fn cell(&mut self, cell: CellView<'_>) {
        self.stats.cells += 1;
        self.timestamp(cell.timestamp);
        if cell.is_tombstone() {
            self.stats.cell_tombstones += 1;
            self.drop_time(cell.local_deletion_time);
        } else if cell.is_expiring() {
            self.stats.expiring_cells += 1;
            self.drop_time(cell.local_deletion_time);
        } else {
            self.never_expires();
        }
    }

    fn never_expires(&mut self) {
        self.stats.max_local_deletion_time = i32::MAX;
    }

    fn deletion(&mut self, deletion: DeletionTime) {
        self.timestamp(deletion.marked_for_delete_at);
        self.drop_time(deletion.local_deletion_time);
    }

    fn timestamp(&mut self, timestamp: i64) {
        self.stats.min_timestamp = self.stats.min_timestamp.min(timestamp);
        self.stats.max_timestamp = self.stats.max_timestamp.max(timestamp);
    }

    fn drop_time(&mut self, local_deletion_time: i32) {
        self.stats.min_local_deletion_time =
            self.stats.min_local_deletion_time.min(local_deletion_time);
        self.stats.max_local_deletion_time =
            self.stats.max_local_deletion_time.max(local_deletion_time);
        self.stats
            .tombstone_drop_times
            .add(i64::from(local_deletion_time));
    }

    /// Widens the clustering range to cover `start..end` (an unbounded start is the empty
    /// clustering, an unbounded end leaves no maximum). Clones a bound only when it widens the
    /// range: most rows do not.
    fn clustering(&mut self, start: Bound<&Bytes>, end: Bound<&Bytes>) {
        let empty = Bytes::new();
        let start = match start {
            Bound::Unbounded => &empty,
            Bound::Included(b) | Bound::Excluded(b) => b,
        };
        let end = match end {
            Bound::Unbounded => None,
            Bound::Included(b) | Bound::Excluded(b) => Some(b),
        };
        let Some(range) = &mut self.stats.clustering else {
            self.stats.clustering = Some(ClusteringRange {
                min: start.clone(),
                max: end.cloned(),
            });
            return;
        };
        if *start < range.min {
            range.min = start.clone();
        }
        match (&range.max, end) {
            (Some(max), Some(end)) if end > max => range.max = Some(end.clone()),
            (Some(_), None) => range.max = None,
            _ => {}
        }
    }

    /// The statistics, completed with the file sizes and the options' level and repair time.
    pub fn finish(
        mut self,
        uncompressed_size: u64,
        compressed_size: u64,
        level: u32,
        repair: RepairMark,
    ) -> SstableStats {
        self.stats.uncompressed_size = uncompressed_size;
        self.stats.compressed_size = compressed_size;
        self.stats.level = level;
        self.stats.set_repair(repair);
        self.stats
    }
}

/// A row's statistics: its marker, deletions and cells (its clustering is recorded by the
/// caller, which knows a static row from the others).
impl<'a> RowVisitor<'a> for StatsCollector {
    fn head(
        &mut self,
        _clustering: &'a [u8],
        liveness: Option<LivenessInfo>,
        deletion: DeletionTime,
    ) {
        if let Some(liveness) = liveness {
            self.timestamp(liveness.timestamp);
            if liveness.is_expiring() {
                self.drop_time(liveness.local_expiration_time);
            } else {
                self.never_expires();
            }
        }
        if !deletion.is_live() {
            self.stats.row_tombstones += 1;
            self.deletion(deletion);
        }
    }

    fn simple(&mut self, _name: &'a [u8], cell: CellView<'a>) {
        self.cell(cell);
    }

    fn complex(&mut self, _name: &'a [u8], deletion: DeletionTime) {
        if !deletion.is_live() {
            self.stats.row_tombstones += 1;
            self.deletion(deletion);
        }
    }

    fn complex_cell(&mut self, cell: CellView<'a>) {
        self.cell(cell);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics_written_before_cell_counts_or_column_names_still_read() {
        let mut stats = SstableStats {
            partitions: 3,
            ..SstableStats::default()
        };
        stats.cell_counts.add(12);
        stats.numbering = RowNumbering {
            names: vec![Bytes::from_static(b"C0"), Bytes::from_static(b"v")],
            lengths: vec![34, mutation::codec::NO_USUAL_LENGTH],
            timestamp_base: 1_700_000_000_000_000,
        };
        let file = Path::new("Statistics.db");
        let encoded = stats.encode();
        let decoded = SstableStats::decode(&encoded, file).expect("decode");
        assert_eq!(decoded, stats);
        let body = unseal(&encoded, STATS_MAGIC, file).expect("unseal");
        let names = 4 + (4 + 2 + 4) + (4 + 1 + 4) + 8 + 1;
        let version_1 = seal(STATS_MAGIC, &body[..body.len() - names]);
        let old = SstableStats::decode(&version_1, file).expect("decode a version 1 file");
        assert_eq!(old.numbering, RowNumbering::default());
        assert_eq!(old.cell_counts, stats.cell_counts);
        let mut histogram = Vec::new();
        stats.cell_counts.encode(&mut histogram);
        let older = seal(STATS_MAGIC, &body[..body.len() - names - histogram.len()]);
        let old = SstableStats::decode(&older, file).expect("decode an older file");
        assert_eq!(old.cell_counts.count(), 0);
        assert_eq!(old.partitions, 3);
        let no_pending = seal(STATS_MAGIC, &body[..body.len() - 1]);
        let old = SstableStats::decode(&no_pending, file).expect("decode without pending repair");
        assert_eq!(
            (old.numbering, old.pending_repair),
            (stats.numbering.clone(), None)
        );
    }

    #[test]
    fn a_pending_repair_session_round_trips() {
        let stats = SstableStats {
            pending_repair: Some(Uuid::from_u128(42)),
            ..SstableStats::default()
        };
        let file = Path::new("Statistics.db");
        let decoded = SstableStats::decode(&stats.encode(), file).expect("decode");
        assert_eq!(decoded.repair(), RepairMark::pending(Uuid::from_u128(42)));
        let mut bad = unseal(&stats.encode(), STATS_MAGIC, file)
            .expect("unseal")
            .to_vec();
        let flag = bad.len() - 17;
        bad[flag] = 7;
        assert!(SstableStats::decode(&seal(STATS_MAGIC, &bad), file).is_err());
    }

    #[test]
    fn the_clustering_range_covers_every_row_and_tombstone() {
        let b = |s: &'static str| Bytes::from_static(s.as_bytes());
        let mut collector = StatsCollector::default();
        let range = |c: &StatsCollector| c.stats.clustering.clone().expect("a range");
        collector.clustering(Bound::Included(&b("m")), Bound::Included(&b("m")));
        assert_eq!(
            range(&collector),
            ClusteringRange {
                min: b("m"),
                max: Some(b("m"))
            }
        );
        collector.clustering(Bound::Included(&b("c")), Bound::Included(&b("c")));
        collector.clustering(Bound::Included(&b("x")), Bound::Included(&b("x")));
        collector.clustering(Bound::Included(&b("n")), Bound::Included(&b("n")));
        assert_eq!(
            range(&collector),
            ClusteringRange {
                min: b("c"),
                max: Some(b("x"))
            }
        );
        collector.clustering(Bound::Excluded(&b("d")), Bound::Unbounded);
        assert_eq!(
            range(&collector),
            ClusteringRange {
                min: b("c"),
                max: None
            }
        );
        collector.clustering(Bound::Unbounded, Bound::Included(&b("z")));
        assert_eq!(
            range(&collector),
            ClusteringRange {
                min: b(""),
                max: None
            }
        );
    }
}
