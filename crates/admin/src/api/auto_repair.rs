//! The repair scheduler's loop on this node and its API (`nodetool autorepairstatus`,
//! `setautorepairconfig`). The plan — which range is due, which goes first, when to hold off
//! — is `repair::schedule`'s; this runs it: every `repair_check_interval`, when
//! `auto_repair.enabled` is set in cassandra.yaml, it looks at the tables to repair, this
//! node's primary ranges of each and when they were last repaired, and repairs the range due
//! longest as `nodetool repair -pr -st -et ks table` would, unless the node's load holds it
//! off or another node's scheduled repair runs.
//!
//! - **Which tables.** A table whose `auto_repair` option is set (Cassandra 5.1's CEP-37
//!   property) is repaired on every node when its `incremental_enabled` or `full_enabled` is
//!   true (incremental when incremental is on, else full), never when both are false; a table
//!   that never set it is repaired (incremental) on the nodes where `nodetool
//!   setautorepairconfig` turned it on, kept in `auto_repair.json`.
//! - **One at a time across the cluster.** Each repair holds a scheduled lease in the metadata
//!   log (`repair_lease`), which the log grants to one scheduled repair at a time.
//! - **History.** A scheduled repair that succeeds records its range in the log with its
//!   lease's end, so every node — a restarted or replacing one too — sees when each range of
//!   each table was last repaired.

use std::sync::Arc;
use std::time::Duration;

use coordinator::metrics::LatencySnapshot;
use coordinator::RequestKind;
use mutation::TableId;
use parking_lot::Mutex;
use repair::schedule::{self, Limits, Load, RangeState, TableState};

use super::repair::run as run_repair;
use super::repair_lease::{self, now_ms};
use super::snapshots::latency_percentiles;
use super::tables::select;
use super::types::{
    AutoRepairConfigRequest, AutoRepairStatus, AutoRepairTable, RepairRequest, TableSelection,
};
use crate::auto_repair::{Store, TableName};
use crate::error::{ApiError, ApiResult};
use crate::node::AdminNode;

/// The scheduler: its persisted state and what it is doing.
pub struct AutoRepair {
    store: Store,
    activity: Mutex<Activity>,
    /// Set once this node dropped the repair leases it held before it started.
    pub(crate) leases_cleared: tokio::sync::OnceCell<()>,
}

#[derive(Default)]
struct Activity {
    running: Option<String>,
    held_off: Option<String>,
    last_failure: Option<String>,
    /// Client latencies at the last check, and the p99 seen while no repair ran.
    latencies: LatencySnapshot,
    baseline_p99_ms: f64,
}

impl AutoRepair {
    /// The scheduler's state from `auto_repair.json` in `dir` (in memory only without one).
    pub fn open(dir: Option<&std::path::Path>) -> AutoRepair {
        AutoRepair {
            store: Store::open(dir.map(|d| d.join("auto_repair.json"))),
            activity: Mutex::default(),
            leases_cleared: tokio::sync::OnceCell::new(),
        }
    }
}

/// Drops the repair leases this node held before it started, and starts the scheduler's loop
/// when cassandra.yaml turns it on.
pub fn start(node: &Arc<AdminNode>) {
    tokio::spawn(clear_leases(Arc::downgrade(node)));
    let settings = &node.config.auto_repair;
    if !settings.enabled {
        return;
    }
    tracing::info!(
        "auto-repair enabled: checking every {:?}",
        settings.repair_check_interval
    );
    let every = settings
        .repair_check_interval
        .max(Duration::from_millis(100));
    let weak = Arc::downgrade(node);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(node) = weak.upgrade() else { return };
            check(&node).await;
        }
    });
}

/// Drops this node's leases of before its start, retrying while the metadata log has no
/// majority.
async fn clear_leases(node: std::sync::Weak<AdminNode>) {
    loop {
        let Some(node) = node.upgrade() else { return };
        match repair_lease::clear_own(&node).await {
            Ok(()) => return,
            Err(e) => tracing::debug!("could not drop the repair leases of before start: {e}"),
        }
        drop(node);
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}

/// One check: repairs the range due longest, unless nothing is due, the load holds it off or
/// another node's scheduled repair runs.
async fn check(node: &Arc<AdminNode>) {
    let scheduler = &node.auto_repair;
    let load = load(node);
    let held =
        schedule::hold_off(&load, &Limits::default()).or_else(|| other_scheduled_repair(node));
    scheduler.activity.lock().held_off = held.clone();
    if let Some(why) = held {
        tracing::info!("auto-repair holds off: {why}");
        return;
    }
    let tables = tables(node);
    let states: Vec<TableState> = tables.iter().map(|t| t.state.clone()).collect();
    let min = node.config.auto_repair.min_repair_interval;
    let Some(next) = schedule::next(&states, min, now_ms()) else {
        return;
    };
    let (table, full) = (&states[next.table], tables[next.table].full);
    let (left, right) = next.range;
    let what = format!("{}.{} ({left},{right}]", table.keyspace, table.table);
    scheduler.activity.lock().running = Some(what.clone());
    let request = RepairRequest {
        keyspace: Some(table.keyspace.clone()),
        tables: vec![table.table.clone()],
        primary_range: true,
        full,
        start_token: Some(left),
        end_token: Some(right),
        ..RepairRequest::default()
    };
    let failure = match run_repair(node, &request, true).await {
        Ok(report) => report.error,
        Err(e) => Some(e.message),
    };
    let mut activity = scheduler.activity.lock();
    activity.running = None;
    match failure {
        None => {
            tracing::info!("auto-repair repaired {what}");
        }
        Some(why) => {
            tracing::warn!("auto-repair of {what} failed: {why}");
            activity.last_failure = Some(format!("{what}: {why}"));
        }
    }
}

/// Why this node waits for its turn: another node's scheduled repair holds its lease.
fn other_scheduled_repair(node: &AdminNode) -> Option<String> {
    let me = node.metadata.host_id();
    let meta = node.metadata.current();
    let lease = meta
        .repair
        .live(now_ms())
        .find(|l| l.scheduled && l.holder != me)?;
    let holder = meta
        .nodes
        .get(&lease.holder)
        .map_or_else(|| lease.holder.to_string(), |n| n.addr.ip().to_string());
    Some(format!(
        "node {holder} runs the scheduled repair of {} (one at a time across the cluster)",
        lease.what
    ))
}

/// A table the scheduler repairs, and whether fully (`full`) or incrementally.
struct Scheduled {
    state: TableState,
    full: bool,
}

/// The tables to repair, each with this node's primary ranges and when each was last
/// repaired (from the metadata log).
fn tables(node: &AdminNode) -> Vec<Scheduled> {
    let turned_on = node.auto_repair.store.get().tables;
    let schema = node.processor.schema();
    let meta = node.metadata.current();
    let local = node.coordinator.topology().local().addr;
    let mut out = Vec::new();
    for keyspace in schema.schema.keyspaces().values() {
        let name = &keyspace.name;
        if schema::is_system_keyspace(name) || schema::is_virtual_keyspace(name) {
            continue;
        }
        let Ok(ranges) = node.processor.ranges(name) else {
            continue;
        };
        for table in keyspace.tables.values() {
            let here = turned_on.contains(&(name.clone(), table.name.clone()));
            let setting = schema::auto_repair_setting(&table.options.auto_repair);
            let Some(full) = repair_kind(setting, here) else {
                continue;
            };
            let ranges = ranges
                .iter()
                .filter(|r| r.replicas.len() > 1)
                .filter(|r| r.replicas.first().is_some_and(|e| e.addr == local))
                .map(|r| RangeState {
                    range: (r.start, r.end),
                    repaired_ms: meta.repair.repaired(table.id, (r.start, r.end)),
                })
                .collect();
            let state = TableState {
                keyspace: name.clone(),
                table: table.name.clone(),
                gc_grace_seconds: u32::try_from(table.options.gc_grace_seconds).unwrap_or(0),
                priority: setting.map_or(0, |s| s.priority),
                ranges,
            };
            out.push(Scheduled { state, full });
        }
    }
    out
}

/// Whether the scheduler repairs a table, and how (`Some(true)`: full): its `auto_repair`
/// decides when set; else `nodetool setautorepairconfig` on this node (`here`), incremental.
fn repair_kind(setting: Option<schema::AutoRepairSetting>, here: bool) -> Option<bool> {
    match setting {
        Some(s) if s.incremental => Some(false),
        Some(s) if s.full => Some(true),
        Some(_) => None,
        None => here.then_some(false),
    }
}

/// The node's load now: pending compactions, and the client p99 since the last check (the
/// baseline follows it while no repair runs).
fn load(node: &AdminNode) -> Load {
    let pending = select(node, &TableSelection::default())
        .unwrap_or_default()
        .iter()
        .filter_map(|t| node.storage.table_usage(TableId(t.id)).ok())
        .map(|u| u.pending_compactions as u64)
        .sum();
    let now = client_latencies(node);
    let mut activity = node.auto_repair.activity.lock();
    let recent = difference(&now, &activity.latencies);
    activity.latencies = now;
    let p99_ms = latency_percentiles(&recent).p99 / 1000.0;
    let repairing = node.repair.as_ref().is_some_and(|r| {
        r.statuses()
            .iter()
            .any(|s| s.state == repair::RepairState::Running)
    });
    if !repairing && recent.count > 0 {
        activity.baseline_p99_ms = if activity.baseline_p99_ms == 0.0 {
            p99_ms
        } else {
            activity.baseline_p99_ms * 0.8 + p99_ms * 0.2
        };
    }
    Load {
        pending_compactions: pending,
        client_p99_ms: p99_ms,
        baseline_p99_ms: activity.baseline_p99_ms,
    }
}

/// Every client read and write latency recorded so far, in one histogram.
fn client_latencies(node: &AdminNode) -> LatencySnapshot {
    let metrics = node.coordinator.metrics();
    let mut total = LatencySnapshot::default();
    for kind in [RequestKind::Read, RequestKind::Write] {
        for (_, one) in metrics.requests(kind) {
            super::proxy::add(&mut total, &one);
        }
    }
    total
}

/// What `now` recorded since `before`.
fn difference(now: &LatencySnapshot, before: &LatencySnapshot) -> LatencySnapshot {
    let mut recent = now.clone();
    recent.count = now.count.saturating_sub(before.count);
    recent.sum_micros = now.sum_micros.saturating_sub(before.sum_micros);
    for (n, b) in recent.buckets.iter_mut().zip(&before.buckets) {
        *n = n.saturating_sub(*b);
    }
    recent
}

/// `nodetool autorepairstatus`.
pub fn status(node: &AdminNode) -> AutoRepairStatus {
    let settings = &node.config.auto_repair;
    let activity = node.auto_repair.activity.lock();
    let (running, held_off, last_failure) = (
        activity.running.clone(),
        activity.held_off.clone(),
        activity.last_failure.clone(),
    );
    drop(activity);
    let min = settings.min_repair_interval;
    let tables = tables(node)
        .iter()
        .map(|Scheduled { state: t, .. }| {
            let (last_full, next_due) = schedule::table_summary(t, min);
            AutoRepairTable {
                keyspace: t.keyspace.clone(),
                table: t.table.clone(),
                ranges: t.ranges.len(),
                repaired_ranges: t.ranges.iter().filter(|r| r.repaired_ms.is_some()).count(),
                last_full_repair_ms: last_full,
                next_due_ms: next_due,
            }
        })
        .collect();
    AutoRepairStatus {
        enabled: settings.enabled,
        repair_check_interval_ms: settings.repair_check_interval.as_millis() as u64,
        min_repair_interval_ms: min.as_millis() as u64,
        running,
        held_off,
        last_failure,
        tables,
    }
}

/// `nodetool setautorepairconfig enabled true|false <keyspace> [tables]`.
pub fn configure(
    node: &AdminNode,
    request: &AutoRepairConfigRequest,
) -> ApiResult<AutoRepairStatus> {
    let schema = node.processor.schema();
    let keyspace = schema.schema.keyspace(&request.keyspace).ok_or_else(|| {
        ApiError::bad_request(format!("Keyspace [{}] does not exist.", request.keyspace))
    })?;
    let mut names: Vec<TableName> = Vec::new();
    for table in &request.tables {
        if !keyspace.tables.contains_key(table.as_str()) {
            return Err(ApiError::bad_request(format!(
                "Unknown keyspace/cf pair ({}.{table})",
                request.keyspace
            )));
        }
        names.push((request.keyspace.clone(), table.clone()));
    }
    if request.tables.is_empty() {
        names = keyspace
            .tables
            .values()
            .map(|t| (request.keyspace.clone(), t.name.clone()))
            .collect();
    }
    drop(schema);
    node.auto_repair.store.change(|s| {
        for name in names {
            if request.enabled {
                s.tables.insert(name);
            } else {
                s.tables.remove(&name);
            }
        }
    });
    Ok(status(node))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_option_decides_where_set_and_nodetool_elsewhere() {
        let setting = |incremental, full| {
            Some(schema::AutoRepairSetting {
                full,
                incremental,
                priority: 0,
            })
        };
        assert_eq!(repair_kind(setting(true, true), false), Some(false));
        assert_eq!(repair_kind(setting(false, true), false), Some(true));
        assert_eq!(repair_kind(setting(false, false), true), None);
        assert_eq!(repair_kind(None, true), Some(false));
        assert_eq!(repair_kind(None, false), None);
    }
}
