//! `POST /v1/scrub` and `POST /v1/verify`: `nodetool scrub` (each SSTable of the selected
//! tables rewritten without what cannot be read, after a `pre-scrub-<ms>` snapshot unless
//! asked not to) and `nodetool verify` (every chunk and block checked, the corrupt SSTables
//! reported). Both run in the background pool and show in `GET /v1/compactions` meanwhile.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use mutation::TableId;
use schema::TableMetadata;
use storage::{ScrubReport, VerifyOptions, VerifyReport};

use super::snapshots;
use super::tables::{blocking, select};
use super::types::{
    CorruptFile, ScrubDone, ScrubRequest, TableScrubbed, TableVerified, VerifyDone, VerifyRequest,
};
use crate::error::ApiResult;
use crate::node::AdminNode;

pub async fn scrub(node: &AdminNode, request: &ScrubRequest) -> ApiResult<ScrubDone> {
    let tables = stored(node, select(node, &request.selection)?);
    let snapshot = match request.no_snapshot {
        true => None,
        false => {
            let tag = format!("pre-scrub-{}", now_millis());
            snapshots::take(node, &tables, &tag).await?;
            Some(tag)
        }
    };
    let storage = node.storage.clone();
    let ids: Vec<TableId> = tables.iter().map(|t| TableId(t.id)).collect();
    let reports: Vec<ScrubReport> =
        blocking(move || ids.iter().map(|id| storage.scrub(*id)).collect()).await?;
    Ok(ScrubDone {
        snapshot,
        tables: tables.iter().zip(reports).map(scrubbed).collect(),
    })
}

pub async fn verify(node: &AdminNode, request: &VerifyRequest) -> ApiResult<VerifyDone> {
    let tables = stored(node, select(node, &request.selection)?);
    let options = VerifyOptions {
        extended: request.extended,
        apply_policy: request.disk_failure_policy,
    };
    let storage = node.storage.clone();
    let ids: Vec<TableId> = tables.iter().map(|t| TableId(t.id)).collect();
    let reports: Vec<VerifyReport> =
        blocking(move || ids.iter().map(|id| storage.verify(*id, options)).collect()).await?;
    Ok(VerifyDone {
        tables: tables.iter().zip(reports).map(verified).collect(),
    })
}

/// The tables with storage behind them.
fn stored(node: &AdminNode, mut tables: Vec<Arc<TableMetadata>>) -> Vec<Arc<TableMetadata>> {
    tables.retain(|t| node.storage.table_usage(TableId(t.id)).is_ok());
    tables
}

fn scrubbed((table, report): (&Arc<TableMetadata>, ScrubReport)) -> TableScrubbed {
    TableScrubbed {
        table: format!("{}.{}", table.keyspace, table.name),
        sstables: report.sstables,
        skipped: report.skipped,
        partitions: report.partitions,
        dropped_partitions: report.dropped.partitions,
        problems: report.dropped.problems,
    }
}

fn verified((table, report): (&Arc<TableMetadata>, VerifyReport)) -> TableVerified {
    TableVerified {
        table: format!("{}.{}", table.keyspace, table.name),
        sstables: report.sstables,
        corrupt: report
            .corrupt
            .into_iter()
            .map(|c| CorruptFile {
                data_file: c.data_file.display().to_string(),
                problems: c.problems,
            })
            .collect(),
    }
}

fn now_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}
