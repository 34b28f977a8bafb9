//! `system_views.repairs`: the repairs this node coordinates, running and recently ended, with
//! Cassandra 5.0.4's columns. A running repair is in state `repair_start` and its `sessions`
//! grow as its sessions start (one per group of `ranges`); an ended one is `success` or
//! `failure`. Options Helenus does not have (pull, force, trace, optimised streams) are false.
use schema::Row as ValueRow;
use types::{CqlResult, Value};
use uuid::Uuid;

use super::{row, text, NodeView, VirtualTable};

/// One repair command as the repair service reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairRow {
    pub id: Uuid,
    pub command: i32,
    pub keyspace: String,
    /// `full`, `incremental`, `preview unrepaired`, `preview full` or `preview repaired`.
    pub kind: String,
    pub tables: Vec<String>,
    /// Ended: its failure, if it failed.
    pub finished: Option<Option<String>>,
    pub success_message: Option<String>,
    pub sequential: bool,
    pub incremental: bool,
    pub job_threads: i32,
    /// `NONE`, `ALL`, `UNREPAIRED` or `REPAIRED`.
    pub preview_kind: String,
    /// Internode addresses as Cassandra prints them (`/127.0.0.1:7000`).
    pub participants: Vec<String>,
    /// Each session's ranges as Cassandra prints a range (`(-5,3]`).
    pub ranges: Vec<Vec<String>>,
    pub sessions: Vec<Uuid>,
    pub started_ms: i64,
    pub duration_ms: i64,
}

pub(super) struct Repairs;

impl VirtualTable for Repairs {
    fn name(&self) -> (&'static str, &'static str) {
        ("system_views", "repairs")
    }

    fn rows(&self, node: &NodeView) -> CqlResult<Vec<ValueRow>> {
        let Some(repairs) = &node.sources.repairs else {
            return Ok(Vec::new());
        };
        Ok(repairs().iter().map(repair_row).collect())
    }
}

fn texts(items: &[String]) -> Vec<Value> {
    items.iter().map(|t| Value::Text(t.clone())).collect()
}

fn repair_row(r: &RepairRow) -> ValueRow {
    let ended_ms = r.started_ms + r.duration_ms;
    let at = |ms: i64| Some(Value::Timestamp(ms));
    let (status, failure) = match &r.finished {
        None => ("repair_start", None),
        Some(None) => ("success", None),
        Some(Some(why)) => ("failure", Some(why.as_str())),
    };
    let ended = r.finished.is_some();
    let ranges = r.ranges.iter().map(|g| Value::List(texts(g))).collect();
    let flag = |b: bool| Some(Value::Boolean(b));
    row(vec![
        ("id", Some(Value::Timeuuid(r.id))),
        ("command_id", Some(Value::Int(r.command))),
        ("completed", flag(ended)),
        ("duration_millis", Some(Value::Bigint(r.duration_ms))),
        ("failure_cause", failure.and_then(text)),
        ("keyspace_name", text(&r.keyspace)),
        ("last_updated_at", at(ended_ms)),
        (
            "options_column_families",
            Some(Value::Set(texts(&r.tables))),
        ),
        ("options_force_repair", flag(false)),
        ("options_ignore_unreplicated_keyspaces", flag(false)),
        ("options_incremental", flag(r.incremental)),
        ("options_job_threads", Some(Value::Int(r.job_threads))),
        ("options_optimise_streams", flag(false)),
        (
            "options_parallelism",
            text(if r.sequential {
                "SEQUENTIAL"
            } else {
                "PARALLEL"
            }),
        ),
        ("options_preview_kind", text(&r.preview_kind)),
        ("options_pull_repair", flag(false)),
        ("options_subrange_repair", flag(false)),
        ("options_trace", flag(false)),
        ("participants", Some(Value::List(texts(&r.participants)))),
        ("ranges", Some(Value::List(ranges))),
        (
            "sessions",
            Some(Value::Set(
                r.sessions.iter().map(|s| Value::Timeuuid(*s)).collect(),
            )),
        ),
        (
            "state_failure_timestamp",
            (status == "failure").then_some(ended_ms).and_then(at),
        ),
        ("state_init_timestamp", at(r.started_ms)),
        ("state_repair_start_timestamp", at(r.started_ms)),
        ("state_setup_timestamp", at(r.started_ms)),
        ("state_start_timestamp", at(r.started_ms)),
        (
            "state_success_timestamp",
            (status == "success").then_some(ended_ms).and_then(at),
        ),
        ("status", text(status)),
        (
            "success_message",
            r.success_message.as_deref().and_then(text),
        ),
        ("table_names", Some(Value::List(texts(&r.tables)))),
        ("type", text(&r.kind)),
    ])
}
