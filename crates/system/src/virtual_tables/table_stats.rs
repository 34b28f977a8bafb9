//! Per-table figures, one row per table: the per-read histograms `rows_per_read` and
//! `tombstones_per_read`, and the sizes `disk_usage` (live SSTables on disk) and
//! `max_partition_size` (largest partition in the SSTables), in mebibytes rounded up.
use std::sync::Arc;

use mutation::TableId;
use query::virtual_tables::{all_tables, row, text, NodeView, VirtualTable};
use schema::{Row as ValueRow, TableMetadata};
use storage::{Percentiles, Storage};
use types::{CqlResult, Value};

/// What a per-table virtual table shows.
#[derive(Clone, Copy)]
enum Figure {
    RowsPerRead,
    TombstonesPerRead,
    DiskUsage,
    MaxPartitionSize,
}

struct TableStat {
    storage: Arc<Storage>,
    name: &'static str,
    figure: Figure,
}

pub(super) fn tables(storage: &Arc<Storage>) -> Vec<Box<dyn VirtualTable>> {
    let all = [
        ("rows_per_read", Figure::RowsPerRead),
        ("tombstones_per_read", Figure::TombstonesPerRead),
        ("disk_usage", Figure::DiskUsage),
        ("max_partition_size", Figure::MaxPartitionSize),
    ];
    all.into_iter()
        .map(|(name, figure)| {
            Box::new(TableStat {
                storage: storage.clone(),
                name,
                figure,
            }) as Box<dyn VirtualTable>
        })
        .collect()
}

const MEBIBYTE: u64 = 1024 * 1024;

impl VirtualTable for TableStat {
    fn name(&self) -> (&'static str, &'static str) {
        ("system_views", self.name)
    }

    fn rows(&self, node: &NodeView) -> CqlResult<Vec<ValueRow>> {
        // A table dropped while the rows are computed has no figures: it is left out.
        Ok(all_tables(node.schema)
            .filter_map(|t| self.row(&self.storage, t))
            .collect())
    }
}

impl TableStat {
    fn row(&self, storage: &Storage, table: &TableMetadata) -> Option<ValueRow> {
        let id = TableId(table.id);
        let mut values = vec![
            ("keyspace_name", text(&table.keyspace)),
            ("table_name", text(&table.name)),
        ];
        match self.figure {
            Figure::RowsPerRead => values.extend(histogram(
                &storage.table_metrics(id).ok()?.live_rows_per_read,
            )),
            Figure::TombstonesPerRead => values.extend(histogram(
                &storage.table_metrics(id).ok()?.tombstones_per_read,
            )),
            Figure::DiskUsage => values.push((
                "mebibytes",
                mebibytes(storage.table_usage(id).ok()?.disk_bytes),
            )),
            Figure::MaxPartitionSize => values.push((
                "mebibytes",
                mebibytes(storage.table_usage(id).ok()?.partition_bytes_max),
            )),
        }
        Some(row(values))
    }
}

fn mebibytes(bytes: u64) -> Option<Value> {
    Some(Value::Bigint(
        i64::try_from(bytes.div_ceil(MEBIBYTE)).unwrap_or(i64::MAX),
    ))
}

fn histogram(p: &Percentiles) -> Vec<(&'static str, Option<Value>)> {
    let double = |v: u64| Some(Value::Double(v as f64));
    vec![
        (
            "count",
            Some(Value::Bigint(i64::try_from(p.count).unwrap_or(i64::MAX))),
        ),
        ("max", double(p.max)),
        ("p50th", double(p.p50)),
        ("p99th", double(p.p99)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_up_to_whole_mebibytes() {
        assert_eq!(mebibytes(0), Some(Value::Bigint(0)));
        assert_eq!(mebibytes(1), Some(Value::Bigint(1)));
        assert_eq!(mebibytes(MEBIBYTE), Some(Value::Bigint(1)));
        assert_eq!(mebibytes(MEBIBYTE + 1), Some(Value::Bigint(2)));
    }
}
