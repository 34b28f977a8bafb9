//! `system_views.sstable_tasks`: the compactions running now, with their progress in bytes
//! (the source of `nodetool compactionstats`).
use std::sync::Arc;

use query::virtual_tables::{row, text, NodeView, VirtualTable};
use schema::Row as ValueRow;
use storage::{CompactionProgress, Storage, TaskKind};
use types::{CqlResult, Value};
use uuid::Uuid;

/// Reads the compactions of the node's storage.
pub(super) struct SstableTasks(pub Arc<Storage>);

impl VirtualTable for SstableTasks {
    fn name(&self) -> (&'static str, &'static str) {
        ("system_views", "sstable_tasks")
    }

    fn rows(&self, _node: &NodeView) -> CqlResult<Vec<ValueRow>> {
        Ok(self.0.compactions().iter().map(task_row).collect())
    }
}

/// Cassandra's `OperationType` name of a compaction, lower-cased as this table shows it.
fn kind(kind: TaskKind) -> &'static str {
    match kind {
        TaskKind::Normal | TaskKind::Uplevel => "compaction",
        TaskKind::Tombstone => "tombstone compaction",
        TaskKind::Major => "major compaction",
        TaskKind::GarbageCollect => "remove deleted data",
        TaskKind::Scrub => "scrub",
        TaskKind::Verify => "verify",
        TaskKind::Cleanup => "cleanup",
        TaskKind::Anticompaction => "anticompaction after repair",
    }
}

/// A stable time-based id for a task: version-1 layout, the task's number as the node part.
fn task_id(task: &CompactionProgress) -> Uuid {
    let node = task.id.to_be_bytes();
    let mut bytes = [0u8; 16];
    bytes[6] = 0x10;
    bytes[8] = 0x80;
    bytes[10..].copy_from_slice(&node[2..]);
    Uuid::from_bytes(bytes)
}

fn task_row(task: &CompactionProgress) -> ValueRow {
    let bigint = |v: u64| Some(Value::Bigint(i64::try_from(v).unwrap_or(i64::MAX)));
    // Cassandra reports a task with nothing to do as complete.
    let ratio = if task.bytes_total == 0 {
        1.0
    } else {
        task.bytes_done as f64 / task.bytes_total as f64
    };
    row(vec![
        ("keyspace_name", text(&task.keyspace)),
        ("table_name", text(&task.table)),
        ("task_id", Some(Value::Timeuuid(task_id(task)))),
        ("completion_ratio", Some(Value::Double(ratio))),
        ("kind", text(kind(task.kind))),
        ("progress", bigint(task.bytes_done)),
        ("total", bigint(task.bytes_total)),
        ("unit", text("bytes")),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_reports_its_progress_in_bytes() {
        let task = CompactionProgress {
            id: 7,
            keyspace: "ks".into(),
            table: "t".into(),
            kind: TaskKind::Normal,
            bytes_done: 25,
            bytes_total: 100,
        };
        let r = task_row(&task);
        assert_eq!(r.get("completion_ratio"), Some(&Some(Value::Double(0.25))));
        assert_eq!(r.get("unit"), Some(&text("bytes")));
        assert_eq!(r.get("kind"), Some(&text("compaction")));
        let major = CompactionProgress {
            kind: TaskKind::Major,
            bytes_total: 0,
            ..task.clone()
        };
        assert_eq!(
            task_row(&major).get("kind"),
            Some(&text("major compaction"))
        );
        assert_eq!(
            task_row(&major).get("completion_ratio"),
            Some(&Some(Value::Double(1.0)))
        );
        assert_eq!(task_id(&task).get_version_num(), 1);
        assert_ne!(
            task_id(&task),
            task_id(&CompactionProgress { id: 8, ..task })
        );
    }
}
