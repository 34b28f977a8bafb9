//! What compactions are doing and have done: live [`CompactionProgress`] per running task and a
//! bounded history of [`CompactionRecord`]s.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::compaction::TaskKind;

/// Finished compactions kept in the history.
const HISTORY_LEN: usize = 100;

/// A running compaction as `nodetool compactionstats` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionProgress {
    pub id: u64,
    pub keyspace: String,
    pub table: String,
    pub kind: TaskKind,
    /// Uncompressed input bytes processed so far.
    pub bytes_done: u64,
    pub bytes_total: u64,
}

/// A finished compaction as `nodetool compactionhistory` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionRecord {
    pub id: u64,
    pub keyspace: String,
    pub table: String,
    pub kind: TaskKind,
    /// Milliseconds since the epoch at completion.
    pub finished_at_ms: i64,
    pub duration_ms: u64,
    pub sstables_in: usize,
    pub sstables_out: usize,
    /// Bytes on disk of the inputs and outputs.
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub partitions_out: u64,
}

/// The live counters of one running compaction.
pub struct Tracker {
    pub id: u64,
    pub keyspace: String,
    pub table: String,
    pub kind: TaskKind,
    pub bytes_done: AtomicU64,
    pub bytes_total: u64,
}

/// Running and finished compactions of a node.
#[derive(Default)]
pub struct Registry {
    next_id: AtomicU64,
    running: Mutex<Vec<Arc<Tracker>>>,
    history: Mutex<VecDeque<CompactionRecord>>,
    completed: AtomicU64,
    bytes_compacted: AtomicU64,
}

/// Totals over every compaction completed since the node started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactionTotals {
    pub completed: u64,
    /// Bytes on disk of the inputs of completed compactions.
    pub bytes_compacted: u64,
}

impl Registry {
    /// Registers a starting compaction.
    pub fn start(
        &self,
        keyspace: &str,
        table: &str,
        kind: TaskKind,
        bytes_total: u64,
    ) -> Arc<Tracker> {
        let tracker = Arc::new(Tracker {
            id: self.next_id.fetch_add(1, Ordering::Relaxed) + 1,
            keyspace: keyspace.to_string(),
            table: table.to_string(),
            kind,
            bytes_done: AtomicU64::new(0),
            bytes_total,
        });
        self.running.lock().push(tracker.clone());
        tracker
    }

    /// Removes a compaction from the running list, recording it when it completed.
    pub fn finish(&self, tracker: &Tracker, record: Option<CompactionRecord>) {
        self.running.lock().retain(|t| t.id != tracker.id);
        if let Some(record) = record {
            self.completed.fetch_add(1, Ordering::Relaxed);
            self.bytes_compacted
                .fetch_add(record.bytes_in, Ordering::Relaxed);
            let mut history = self.history.lock();
            if history.len() == HISTORY_LEN {
                history.pop_front();
            }
            history.push_back(record);
        }
    }

    pub fn running(&self) -> Vec<CompactionProgress> {
        self.running
            .lock()
            .iter()
            .map(|t| CompactionProgress {
                id: t.id,
                keyspace: t.keyspace.clone(),
                table: t.table.clone(),
                kind: t.kind,
                bytes_done: t.bytes_done.load(Ordering::Relaxed).min(t.bytes_total),
                bytes_total: t.bytes_total,
            })
            .collect()
    }

    pub fn totals(&self) -> CompactionTotals {
        CompactionTotals {
            completed: self.completed.load(Ordering::Relaxed),
            bytes_compacted: self.bytes_compacted.load(Ordering::Relaxed),
        }
    }

    /// Finished compactions, oldest first.
    pub fn history(&self) -> Vec<CompactionRecord> {
        self.history.lock().iter().cloned().collect()
    }
}
