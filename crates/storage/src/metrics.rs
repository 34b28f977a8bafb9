//! Read metrics: [`ReadStats`], what one read did (SSTables touched, tombstones and live rows
//! met), returned with every read; and the per-table recorder behind
//! [`Storage::table_metrics`](crate::Storage::table_metrics), which keeps histograms of
//! SSTables and tombstones per read (Cassandra's `SSTablesPerReadHistogram` and
//! `TombstoneScannedHistogram`), exposed as [`TableMetrics`]. Read and write counts and
//! latencies are the coordinator's (`coordinator::metrics`), their one source.

use std::sync::atomic::{AtomicU64, Ordering};

use hdrhistogram::Histogram;
use parking_lot::Mutex;

pub(crate) use mutation::ReadStats;

/// Percentiles of one histogram, as `nodetool tablehistograms` prints them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Percentiles {
    /// Number of values recorded.
    pub count: u64,
    pub min: u64,
    pub p50: u64,
    pub p75: u64,
    pub p95: u64,
    pub p98: u64,
    pub p99: u64,
    pub max: u64,
    pub mean: f64,
}

impl Percentiles {
    fn of(histogram: &Histogram<u64>) -> Percentiles {
        if histogram.is_empty() {
            return Percentiles::default();
        }
        Percentiles {
            count: histogram.len(),
            min: histogram.min(),
            p50: histogram.value_at_quantile(0.50),
            p75: histogram.value_at_quantile(0.75),
            p95: histogram.value_at_quantile(0.95),
            p98: histogram.value_at_quantile(0.98),
            p99: histogram.value_at_quantile(0.99),
            max: histogram.max(),
            mean: histogram.mean(),
        }
    }
}

/// One table's read histograms since it was opened (or last registered).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TableMetrics {
    /// SSTables touched per single-partition read.
    pub sstables_per_read: Percentiles,
    /// Tombstones met per read, single-partition and range reads alike.
    pub tombstones_per_read: Percentiles,
    /// Live rows per read, single-partition and range reads alike.
    pub live_rows_per_read: Percentiles,
    /// Reads that failed on corrupt SSTable data (a checksum mismatch or undecodable bytes).
    pub corrupt_reads: u64,
}

/// Lock shards of a recorder: each thread records into its own shard, so concurrent reads
/// rarely wait on one another's lock; a snapshot merges them.
const SHARDS: usize = 8;

/// The recorder of one table; cheap to update from many threads.
pub(crate) struct MetricsRecorder {
    /// Created on first use, so idle tables cost no histograms.
    shards: [Mutex<Option<Histograms>>; SHARDS],
    corrupt_reads: AtomicU64,
}

struct Histograms {
    sstables: Histogram<u64>,
    tombstones: Histogram<u64>,
    live_rows: Histogram<u64>,
}

impl Histograms {
    fn new() -> Self {
        Histograms {
            sstables: histogram(),
            tombstones: histogram(),
            live_rows: histogram(),
        }
    }

    fn add(&mut self, other: &Histograms) {
        merge(&mut self.sstables, &other.sstables);
        merge(&mut self.tombstones, &other.tombstones);
        merge(&mut self.live_rows, &other.live_rows);
    }
}

/// Significant decimal digits kept by the histograms (values within 1%).
const PRECISION: u8 = 2;

/// An auto-resizing histogram: no value is ever out of range.
#[expect(
    clippy::expect_used,
    reason = "PRECISION is a valid number of significant digits"
)]
fn histogram() -> Histogram<u64> {
    Histogram::new(PRECISION).expect("PRECISION is a valid number of significant digits")
}

#[expect(
    clippy::expect_used,
    reason = "auto-resizing histograms of one precision always add up"
)]
fn merge(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    into.add(from)
        .expect("auto-resizing histograms of one precision always add up");
}

impl Default for MetricsRecorder {
    fn default() -> Self {
        MetricsRecorder {
            shards: std::array::from_fn(|_| Mutex::new(None)),
            corrupt_reads: AtomicU64::new(0),
        }
    }
}

impl MetricsRecorder {
    fn record(&self, record: impl FnOnce(&mut Histograms)) {
        let mut shard = self.shards[crate::stripes::thread_stripe(SHARDS)].lock();
        record(shard.get_or_insert_with(Histograms::new));
    }

    /// Records a single-partition read.
    pub fn point_read(&self, stats: &ReadStats) {
        self.record(|h| {
            h.sstables.saturating_record(u64::from(stats.sstables));
            h.tombstones.saturating_record(stats.tombstones);
            h.live_rows.saturating_record(stats.live_rows);
        });
    }

    /// Records a replica's answer to a round of a read (see `LsmEngine::read_source`): only
    /// the SSTables it read, the coordinator resolving the answers counts the rest.
    pub fn source_read(&self, sstables: usize) {
        let sstables = u64::try_from(sstables).unwrap_or(u64::MAX);
        self.record(|h| h.sstables.saturating_record(sstables));
    }

    /// Records a range read.
    pub fn range_read(&self, stats: &ReadStats) {
        self.record(|h| {
            h.tombstones.saturating_record(stats.tombstones);
            h.live_rows.saturating_record(stats.live_rows);
        });
    }

    /// Counts a read that failed on corrupt data.
    pub fn count_corrupt_read(&self) {
        self.corrupt_reads.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> TableMetrics {
        let mut total = Histograms::new();
        for shard in &self.shards {
            if let Some(h) = shard.lock().as_ref() {
                total.add(h);
            }
        }
        TableMetrics {
            sstables_per_read: Percentiles::of(&total.sstables),
            tombstones_per_read: Percentiles::of(&total.tombstones),
            live_rows_per_read: Percentiles::of(&total.live_rows),
            corrupt_reads: self.corrupt_reads.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorder_keeps_counts_and_percentiles() {
        let recorder = MetricsRecorder::default();
        for sstables in 1..=100 {
            recorder.point_read(&ReadStats {
                sstables,
                tombstones: 10,
                live_rows: 1,
            });
        }
        recorder.range_read(&ReadStats::default());
        recorder.count_corrupt_read();
        let m = recorder.snapshot();
        assert_eq!(m.corrupt_reads, 1);
        assert_eq!(m.sstables_per_read.count, 100);
        assert_eq!((m.sstables_per_read.min, m.sstables_per_read.max), (1, 100));
        assert_eq!(m.sstables_per_read.p50, 50);
        assert_eq!(m.tombstones_per_read.count, 101);
        assert_eq!(m.tombstones_per_read.p99, 10);
    }

    #[test]
    fn reads_recorded_on_many_threads_all_count() {
        let recorder = MetricsRecorder::default();
        std::thread::scope(|scope| {
            for thread in 0..SHARDS as u64 + 3 {
                let recorder = &recorder;
                scope.spawn(move || {
                    for _ in 0..100 {
                        recorder.point_read(&ReadStats {
                            sstables: 1,
                            tombstones: thread,
                            live_rows: 1,
                        });
                    }
                });
            }
        });
        let m = recorder.snapshot();
        assert_eq!(m.sstables_per_read.count, 100 * (SHARDS as u64 + 3));
        assert_eq!(m.tombstones_per_read.max, SHARDS as u64 + 2);
        assert_eq!(m.live_rows_per_read.p50, 1);
    }

    #[test]
    fn stats_add_up() {
        let mut total = ReadStats::default();
        total.add(ReadStats {
            sstables: 2,
            tombstones: 5,
            live_rows: 1,
        });
        total.add(ReadStats {
            sstables: 1,
            tombstones: 1,
            live_rows: 0,
        });
        assert_eq!(
            total,
            ReadStats {
                sstables: 3,
                tombstones: 6,
                live_rows: 1
            }
        );
    }
}
