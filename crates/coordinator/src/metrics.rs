//! Request metrics: client-request latency per kind and consistency level (Cassandra's
//! `ClientRequest` metrics) and local reads and writes per table (its `Table` metrics), kept
//! in atomic counters and fixed-bucket latency histograms so recording never takes a lock (the
//! per-table map is replaced whole when a table is first used).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use mutation::TableId;
use types::Consistency;

pub use crate::latency::{LatencyHistogram, LatencySnapshot, LATENCY_BOUNDS_MICROS};
use crate::proxy_metrics::ProxyMetrics;
pub use crate::proxy_metrics::RequestKind;

/// Every consistency level, in protocol-code order (the index of its histograms).
pub const CONSISTENCY_LEVELS: [Consistency; 11] = [
    Consistency::Any,
    Consistency::One,
    Consistency::Two,
    Consistency::Three,
    Consistency::Quorum,
    Consistency::All,
    Consistency::LocalQuorum,
    Consistency::EachQuorum,
    Consistency::Serial,
    Consistency::LocalSerial,
    Consistency::LocalOne,
];

/// Local reads and writes of one table.
#[derive(Debug, Default)]
pub struct TableMetrics {
    /// Single-partition reads.
    pub reads: LatencyHistogram,
    /// Partition-range reads (scans).
    pub range_reads: LatencyHistogram,
    /// Mutations applied (one per partition written).
    pub writes: LatencyHistogram,
    /// Lightweight transactions: SERIAL reads and compare-and-sets.
    pub cas_reads: LatencyHistogram,
    pub cas_writes: LatencyHistogram,
}

/// The coordinator's request metrics.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: [[LatencyHistogram; CONSISTENCY_LEVELS.len()]; RequestKind::ALL.len()],
    tables: ArcSwap<HashMap<TableId, Arc<TableMetrics>>>,
    proxy: Arc<ProxyMetrics>,
}

impl Metrics {
    /// The storage proxy's cluster-path counters.
    pub fn proxy(&self) -> &Arc<ProxyMetrics> {
        &self.proxy
    }

    pub fn record_request(&self, kind: RequestKind, cl: Consistency, elapsed: Duration) {
        let level = CONSISTENCY_LEVELS
            .iter()
            .position(|&c| c == cl)
            .unwrap_or(0);
        self.requests[kind as usize][level].record(elapsed);
    }

    /// Latencies of one kind of client request, per consistency level used at least once.
    pub fn requests(&self, kind: RequestKind) -> Vec<(Consistency, LatencySnapshot)> {
        CONSISTENCY_LEVELS
            .iter()
            .zip(&self.requests[kind as usize])
            .map(|(&cl, h)| (cl, h.snapshot()))
            .filter(|(_, s)| s.count > 0)
            .collect()
    }

    /// The metrics of `table`, created on first use.
    pub fn table(&self, table: TableId) -> Arc<TableMetrics> {
        if let Some(metrics) = self.tables.load().get(&table) {
            return metrics.clone();
        }
        let created = Arc::new(TableMetrics::default());
        self.tables.rcu(|tables| {
            let mut tables = HashMap::clone(tables);
            tables.entry(table).or_insert_with(|| created.clone());
            tables
        });
        self.table_if_used(table).unwrap_or(created)
    }

    /// Records a request of `kind` on `table` that took `elapsed`.
    pub fn record_table(&self, table: TableId, kind: RequestKind, elapsed: Duration) {
        let record = |metrics: &TableMetrics| {
            let histogram = match kind {
                RequestKind::Read => &metrics.reads,
                RequestKind::Range => &metrics.range_reads,
                RequestKind::Write => &metrics.writes,
                RequestKind::CasRead => &metrics.cas_reads,
                RequestKind::CasWrite => &metrics.cas_writes,
            };
            histogram.record(elapsed);
        };
        match self.tables.load().get(&table) {
            Some(metrics) => record(metrics),
            None => record(&self.table(table)),
        }
    }

    /// The metrics of `table` if it was ever read or written.
    pub fn table_if_used(&self, table: TableId) -> Option<Arc<TableMetrics>> {
        self.tables.load().get(&table).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_kept_per_consistency_level() {
        let m = Metrics::default();
        m.record_request(
            RequestKind::Write,
            Consistency::Quorum,
            Duration::from_micros(5),
        );
        m.record_request(
            RequestKind::Write,
            Consistency::One,
            Duration::from_micros(5),
        );
        let levels: Vec<_> = m
            .requests(RequestKind::Write)
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        assert_eq!(levels, vec![Consistency::One, Consistency::Quorum]);
        assert!(m.requests(RequestKind::Read).is_empty());
    }
}
