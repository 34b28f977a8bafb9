//! `POST /v1/cleanup`: `nodetool cleanup` — each replicated table of the selected keyspaces
//! rewritten without the partitions this node no longer replicates (after ALTER KEYSPACE
//! lowered the RF, or after nodes joined). Refused, as Cassandra 5.0 refuses it, for a keyspace
//! in which this node is about to gain ranges (a node joining or leaving): the data streamed to
//! it for those ranges is not yet its own by the current ring and would be dropped.

use std::collections::BTreeMap;
use std::sync::Arc;

use mutation::{TableId, TokenRange};
use nodeops::{gains_ranges, owned_ranges, Rings};
use ring::ReplicationStrategy;
use schema::{is_system_keyspace, TableMetadata};
use storage::CleanupReport;

use super::tables::{blocking, select};
use super::types::{CleanupDone, CleanupRequest, TableCleaned};
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

/// Cassandra 5.0's refusal while this node has pending ranges.
pub const MEMBERSHIP_CHANGING: &str =
    "Node is involved in cluster membership changes. Not safe to run cleanup.";

pub async fn cleanup(node: &AdminNode, request: &CleanupRequest) -> ApiResult<CleanupDone> {
    let by_keyspace = replicated(select(node, &request.selection)?, node);
    let local = node.processor.node().listen_address;
    let ring = node.coordinator.topology().ring().clone();
    let future = node.coordinator.topology().future_ring().clone();
    let mut work = Vec::new();
    for (keyspace, tables) in by_keyspace {
        let strategy = node.processor.strategy(&keyspace);
        if let Some(future) = &future {
            let rings = Rings {
                strategy: &strategy,
                now: &ring,
                future,
            };
            if gains_ranges(rings, local) {
                return Err(ApiError::bad_request(MEMBERSHIP_CHANGING));
            }
        }
        let owned = owned_ranges(&strategy, &ring, local);
        work.extend(tables.into_iter().map(|t| (t, owned.clone())));
    }
    let storage = node.storage.clone();
    let jobs: Vec<(TableId, Vec<TokenRange>)> = work
        .iter()
        .map(|(t, owned)| (TableId(t.id), owned.clone()))
        .collect();
    let reports: Vec<CleanupReport> = blocking(move || {
        jobs.iter()
            .map(|(id, owned)| storage.cleanup(*id, owned))
            .collect()
    })
    .await?;
    Ok(CleanupDone {
        tables: work
            .iter()
            .zip(reports)
            .map(|((table, _), report)| cleaned(table, report))
            .collect(),
    })
}

/// The selected tables with storage behind them, by keyspace, leaving out the system keyspaces
/// and those not replicated over the ring (Cassandra's nodetool skips them).
fn replicated(
    tables: Vec<Arc<TableMetadata>>,
    node: &AdminNode,
) -> BTreeMap<String, Vec<Arc<TableMetadata>>> {
    let mut by_keyspace: BTreeMap<String, Vec<Arc<TableMetadata>>> = BTreeMap::new();
    for table in tables {
        let strategy = node.processor.strategy(&table.keyspace);
        let local_only = matches!(
            *strategy,
            ReplicationStrategy::Local | ReplicationStrategy::Everywhere
        );
        if is_system_keyspace(&table.keyspace)
            || local_only
            || node.storage.table_usage(TableId(table.id)).is_err()
        {
            continue;
        }
        by_keyspace
            .entry(table.keyspace.clone())
            .or_default()
            .push(table);
    }
    by_keyspace
}

fn cleaned(table: &TableMetadata, report: CleanupReport) -> TableCleaned {
    TableCleaned {
        table: format!("{}.{}", table.keyspace, table.name),
        sstables: report.sstables,
        skipped: report.skipped,
        partitions_kept: report.partitions_kept,
        partitions_dropped: report.partitions_dropped,
    }
}
