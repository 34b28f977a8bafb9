//! Snapshots (`nodetool snapshot`, `listsnapshots`, `clearsnapshot`) and per-table histograms
//! (`nodetool tablehistograms`).

use std::sync::Arc;

use coordinator::metrics::{LatencySnapshot, LATENCY_BOUNDS_MICROS};
use mutation::TableId;
use schema::TableMetadata;
use storage::sstable::EstimatedHistogram;
use storage::{SnapshotTable, StorageError};

use super::tables::{blocking, select};
use super::types::{
    ClearSnapshotRequest, HistogramPercentiles, SnapshotEntry, SnapshotRequest, SnapshotsCleared,
    TableHistograms, TableSelection, TablesDone,
};
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

/// `POST /v1/snapshots`: flushes and snapshots every table (with storage) of the keyspaces.
pub async fn create(node: &AdminNode, request: &SnapshotRequest) -> ApiResult<TablesDone> {
    let mut tables = Vec::new();
    if request.keyspaces.is_empty() {
        tables = select(node, &TableSelection::default())?;
    } else {
        for keyspace in &request.keyspaces {
            tables.extend(select(
                node,
                &TableSelection {
                    keyspace: Some(keyspace.clone()),
                    tables: Vec::new(),
                },
            )?);
        }
    }
    tables.retain(|t| node.storage.table_usage(TableId(t.id)).is_ok());
    take(node, &tables, &request.tag).await?;
    Ok(TablesDone {
        tables: tables
            .iter()
            .map(|t| format!("{}.{}", t.keyspace, t.name))
            .collect(),
    })
}

/// Flushes `tables` and snapshots them as `tag`, each with its `CREATE TABLE` statement.
pub async fn take(node: &AdminNode, tables: &[Arc<TableMetadata>], tag: &str) -> ApiResult<()> {
    let targets: Vec<SnapshotTable> = tables
        .iter()
        .map(|t| SnapshotTable {
            id: TableId(t.id),
            schema: Some(schema::describe_table(t, true)),
        })
        .collect();
    let storage = node.storage.clone();
    let tag = tag.to_string();
    let done = tokio::task::spawn_blocking(move || storage.snapshot(&tag, &targets))
        .await
        .map_err(|e| ApiError::internal(format!("task failed: {e}")))?;
    match done {
        Ok(()) => Ok(()),
        Err(StorageError::Invalid(message)) => Err(ApiError::bad_request(message)),
        Err(e) => Err(e.into()),
    }
}

/// `GET /v1/snapshots`: every snapshot of every table, by tag, keyspace and table.
pub async fn list(node: &AdminNode) -> ApiResult<Vec<SnapshotEntry>> {
    let storage = node.storage.clone();
    let found = blocking(move || storage.list_snapshots()).await?;
    Ok(found
        .into_iter()
        .map(|s| SnapshotEntry {
            created_at: manifest_field(&s.directory, "created_at"),
            expires_at: manifest_field(&s.directory, "expires_at"),
            tag: s.tag,
            keyspace: s.keyspace,
            table: s.table,
            true_size: s.true_size,
            size_on_disk: s.size_on_disk,
        })
        .collect())
}

/// A string field of the snapshot's `manifest.json`, if present.
fn manifest_field(directory: &std::path::Path, field: &str) -> Option<String> {
    let text = std::fs::read(directory.join("manifest.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_slice(&text).ok()?;
    manifest.get(field)?.as_str().map(str::to_string)
}

/// `POST /v1/snapshots/clear`: removes snapshot `tag` (or all) of the keyspaces (or all).
pub async fn clear(
    node: &AdminNode,
    request: &ClearSnapshotRequest,
) -> ApiResult<SnapshotsCleared> {
    let storage = node.storage.clone();
    let request = request.clone();
    let cleared = blocking(move || {
        if request.keyspaces.is_empty() {
            return storage.clear_snapshot(request.tag.as_deref());
        }
        let mut cleared = 0;
        for snapshot in storage.list_snapshots()? {
            let tag_matches = request.tag.as_ref().is_none_or(|t| *t == snapshot.tag);
            if tag_matches && request.keyspaces.contains(&snapshot.keyspace) {
                for dir in &snapshot.directories {
                    std::fs::remove_dir_all(dir).map_err(|e| StorageError::io(dir, e))?;
                }
                cleared += 1;
            }
        }
        Ok(cleared)
    })
    .await?;
    Ok(SnapshotsCleared {
        cleared: cleared as u64,
    })
}

/// `GET /v1/tables/{keyspace}/{table}/histograms`.
pub fn histograms(node: &AdminNode, keyspace: &str, table: &str) -> ApiResult<TableHistograms> {
    let selection = TableSelection {
        keyspace: Some(keyspace.to_string()),
        tables: vec![table.to_string()],
    };
    let metadata = select(node, &selection)?.remove(0);
    let id = TableId(metadata.id);
    let usage = node.storage.table_usage(id)?;
    let metrics = node.storage.table_metrics(id)?;
    let latencies = node.coordinator.metrics().table_if_used(id);
    let (reads, writes) = latencies
        .map(|m| (m.reads.snapshot(), m.writes.snapshot()))
        .unwrap_or_default();
    let s = metrics.sstables_per_read;
    Ok(TableHistograms {
        keyspace: metadata.keyspace.clone(),
        table: metadata.name.clone(),
        sstables: usage.sstables as u64,
        read_latency_micros: latency_percentiles(&reads),
        write_latency_micros: latency_percentiles(&writes),
        sstables_per_read: HistogramPercentiles {
            p50: s.p50 as f64,
            p75: s.p75 as f64,
            p95: s.p95 as f64,
            p98: s.p98 as f64,
            p99: s.p99 as f64,
            min: s.min as f64,
            max: s.max as f64,
        },
        partition_size_bytes: size_percentiles(&usage.partition_sizes),
        cell_count: size_percentiles(&usage.cell_counts),
    })
}

/// Percentiles of the live SSTables' partition sizes or cell counts (each the upper bound of
/// its bucket, as Cassandra's `EstimatedHistogram`); `None` without SSTables.
fn size_percentiles(sizes: &EstimatedHistogram) -> Option<HistogramPercentiles> {
    (sizes.count() > 0).then(|| {
        let at = |q: f64| sizes.percentile(q) as f64;
        HistogramPercentiles {
            p50: at(0.50),
            p75: at(0.75),
            p95: at(0.95),
            p98: at(0.98),
            p99: at(0.99),
            min: at(0.0),
            max: sizes.max() as f64,
        }
    })
}

/// Percentiles of a fixed-bucket latency histogram: each is the upper bound of the bucket
/// holding it (as Cassandra's `EstimatedHistogram`); the minimum is the lower bound of the
/// first bucket used. The overflow bucket reports the last bound. All zero when empty.
pub fn latency_percentiles(snapshot: &LatencySnapshot) -> HistogramPercentiles {
    if snapshot.count == 0 {
        return HistogramPercentiles::default();
    }
    let upper = |i: usize| LATENCY_BOUNDS_MICROS[i.min(LATENCY_BOUNDS_MICROS.len() - 1)] as f64;
    let at = |q: f64| {
        let rank = ((snapshot.count as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &n) in snapshot.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return upper(i);
            }
        }
        upper(snapshot.buckets.len())
    };
    let first = snapshot.buckets.iter().position(|&n| n > 0).unwrap_or(0);
    let last = snapshot.buckets.iter().rposition(|&n| n > 0).unwrap_or(0);
    HistogramPercentiles {
        p50: at(0.50),
        p75: at(0.75),
        p95: at(0.95),
        p98: at(0.98),
        p99: at(0.99),
        min: if first == 0 { 0.0 } else { upper(first - 1) },
        max: upper(last),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_percentiles_are_bucket_bounds() {
        let mut buckets = vec![0; LATENCY_BOUNDS_MICROS.len() + 1];
        buckets[1] = 90; // 100..=250 µs
        buckets[3] = 10; // 500..=1000 µs
        let p = latency_percentiles(&LatencySnapshot {
            count: 100,
            sum_micros: 0,
            buckets,
        });
        assert_eq!((p.p50, p.p75, p.p95, p.p99), (250.0, 250.0, 1000.0, 1000.0));
        assert_eq!((p.min, p.max), (100.0, 1000.0));
        assert_eq!(
            latency_percentiles(&LatencySnapshot::default()),
            HistogramPercentiles::default()
        );
    }
}
