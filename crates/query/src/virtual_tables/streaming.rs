//! `system_views.streaming`: the node's stream sessions, running and recently ended, with
//! Cassandra 5.0.4's columns. This node is the `follower` of the sessions it sends (the
//! receiver starts each one).
use schema::Row as ValueRow;
use types::{CqlResult, Value};
use uuid::Uuid;

use super::{row, text, NodeView, VirtualTable};

/// One session as the streaming service reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamState {
    pub id: Uuid,
    /// "Rebuild", ...
    pub operation: String,
    pub peer: String,
    pub sending: bool,
    /// Finished: its failure, if it failed.
    pub finished: Option<Option<String>>,
    pub files_total: u64,
    pub files_done: u64,
    pub bytes_total: u64,
    pub bytes_done: u64,
    pub started_ms: i64,
    pub duration_ms: i64,
}

pub(super) struct Streaming;

impl VirtualTable for Streaming {
    fn name(&self) -> (&'static str, &'static str) {
        ("system_views", "streaming")
    }

    fn rows(&self, node: &NodeView) -> CqlResult<Vec<ValueRow>> {
        let Some(streams) = &node.sources.streams else {
            return Ok(Vec::new());
        };
        Ok(streams().iter().map(state_row).collect())
    }
}

fn bigint(v: u64) -> Option<Value> {
    Some(Value::Bigint(i64::try_from(v).unwrap_or(i64::MAX)))
}

fn state_row(s: &StreamState) -> ValueRow {
    let ended_ms = s.started_ms + s.duration_ms;
    let at = |ms: i64| Some(Value::Timestamp(ms));
    let (status, failure) = match &s.finished {
        None if s.bytes_total == 0 && s.files_total == 0 => ("init", None),
        None => ("start", None),
        Some(None) => ("success", None),
        Some(Some(why)) => ("failure", Some(why.as_str())),
    };
    let progress = if s.bytes_total == 0 {
        if s.finished.is_some() {
            100.0
        } else {
            0.0
        }
    } else {
        (s.bytes_done as f64 * 10_000.0 / s.bytes_total as f64).round() / 100.0
    };
    let counts = [s.bytes_done, s.bytes_total, s.files_done, s.files_total];
    let (sent, received) = if s.sending {
        (counts, [0; 4])
    } else {
        ([0; 4], counts)
    };
    row(vec![
        ("id", Some(Value::Timeuuid(s.id))),
        ("bytes_received", bigint(received[0])),
        ("bytes_sent", bigint(sent[0])),
        ("bytes_to_receive", bigint(received[1])),
        ("bytes_to_send", bigint(sent[1])),
        ("duration_millis", Some(Value::Bigint(s.duration_ms))),
        ("failure_cause", failure.and_then(text)),
        ("files_received", bigint(received[2])),
        ("files_sent", bigint(sent[2])),
        ("files_to_receive", bigint(received[3])),
        ("files_to_send", bigint(sent[3])),
        ("follower", Some(Value::Boolean(s.sending))),
        ("last_updated_at", at(ended_ms)),
        ("operation", text(&s.operation)),
        (
            "peers",
            Some(Value::List(vec![Value::Text(s.peer.clone())])),
        ),
        ("progress_percentage", Some(Value::Float(progress as f32))),
        ("status", text(status)),
        (
            "status_failure_timestamp",
            (status == "failure").then_some(ended_ms).and_then(at),
        ),
        ("status_init_timestamp", at(s.started_ms)),
        (
            "status_start_timestamp",
            (status != "init").then_some(s.started_ms).and_then(at),
        ),
        (
            "status_success_timestamp",
            (status == "success").then_some(ended_ms).and_then(at),
        ),
    ])
}
