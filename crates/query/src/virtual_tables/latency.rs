//! The six latency tables, one row per table: `local_{read,scan,write}_latency` and
//! `coordinator_{read,scan,write}_latency`. On a single node the coordinator and the replica
//! are the same process and Helenus times each request once, so both families show the same
//! per-table histograms. Percentiles are bucket upper bounds; `per_second` is the mean rate
//! since the node started.
use coordinator::metrics::{LatencySnapshot, TableMetrics};
use mutation::TableId;
use schema::{Row as ValueRow, TableMetadata};
use types::{CqlResult, Value};

use super::{all_tables, per_second, row, text, NodeView, VirtualTable};

/// Which of a table's histograms a latency table shows.
#[derive(Clone, Copy)]
enum Operation {
    Read,
    Scan,
    Write,
}

struct Latency {
    name: &'static str,
    operation: Operation,
}

pub(super) fn tables() -> Vec<Box<dyn VirtualTable>> {
    let all = [
        ("local_read_latency", Operation::Read),
        ("local_scan_latency", Operation::Scan),
        ("local_write_latency", Operation::Write),
        ("coordinator_read_latency", Operation::Read),
        ("coordinator_scan_latency", Operation::Scan),
        ("coordinator_write_latency", Operation::Write),
    ];
    all.into_iter()
        .map(|(name, operation)| Box::new(Latency { name, operation }) as Box<dyn VirtualTable>)
        .collect()
}

impl VirtualTable for Latency {
    fn name(&self) -> (&'static str, &'static str) {
        ("system_views", self.name)
    }

    fn rows(&self, node: &NodeView) -> CqlResult<Vec<ValueRow>> {
        let metrics = node.coordinator.metrics();
        Ok(all_tables(node.schema)
            .map(|t| {
                let used = metrics.table_if_used(TableId(t.id));
                let snapshot = used.map(|m| self.histogram(&m)).unwrap_or_default();
                latency_row(t, &snapshot, node.uptime_seconds)
            })
            .collect())
    }
}

impl Latency {
    fn histogram(&self, metrics: &TableMetrics) -> LatencySnapshot {
        match self.operation {
            Operation::Read => metrics.reads.snapshot(),
            Operation::Scan => metrics.range_reads.snapshot(),
            Operation::Write => metrics.writes.snapshot(),
        }
    }
}

fn millis(micros: u64) -> Option<Value> {
    Some(Value::Double(micros as f64 / 1000.0))
}

fn latency_row(table: &TableMetadata, s: &LatencySnapshot, uptime: f64) -> ValueRow {
    row(vec![
        ("keyspace_name", text(&table.keyspace)),
        ("table_name", text(&table.name)),
        (
            "count",
            Some(Value::Bigint(i64::try_from(s.count).unwrap_or(i64::MAX))),
        ),
        ("max_ms", millis(s.max_micros())),
        ("p50th_ms", millis(s.quantile_micros(0.5))),
        ("p99th_ms", millis(s.quantile_micros(0.99))),
        (
            "per_second",
            Some(Value::Double(per_second(s.count, uptime))),
        ),
    ])
}
