//! The progress of the repairs this node coordinates: the running ones and the last finished.

use std::collections::VecDeque;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use uuid::Uuid;

use crate::preview::{PreviewKind, PreviewStream};

/// Finished repairs kept.
const KEPT: usize = 100;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RepairState {
    Running,
    Success,
    /// Failed, with the reason.
    Failed(String),
}

/// One repair command as it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairStatus {
    pub command: u32,
    pub id: Uuid,
    pub keyspace: String,
    pub tables: Vec<String>,
    pub state: RepairState,
    pub sessions_total: usize,
    pub sessions_done: usize,
    pub ranges: usize,
    /// Sub-ranges found to differ between two replicas of a table (each pair counts).
    pub ranges_out_of_sync: u64,
    /// Bytes and files streamed by the syncs.
    pub bytes_streamed: u64,
    pub files_streamed: u64,
    /// Partitions hashed by the replicas' validations.
    pub partitions_validated: u64,
    /// What a preview found would be streamed.
    pub previewed: Vec<PreviewStream>,
    /// Cassandra's repair type: `full`, `incremental`, `preview unrepaired`, ...
    pub kind: String,
    pub incremental: bool,
    pub preview: Option<PreviewKind>,
    /// Validations one replica after the other.
    pub sequential: bool,
    pub job_threads: usize,
    /// Every replica taking part, this node among them.
    pub participants: Vec<std::net::SocketAddr>,
    /// The ranges of each session, in the order they run.
    pub range_groups: Vec<Vec<mutation::TokenRange>>,
    /// The sessions started so far.
    pub sessions: Vec<Uuid>,
    /// The success message, once succeeded.
    pub success_message: Option<String>,
    /// Milliseconds since the epoch.
    pub started_ms: u64,
    pub elapsed_ms: u64,
}

struct Entry {
    status: RepairStatus,
    started: Instant,
}

#[derive(Default)]
pub struct Registry {
    entries: Mutex<VecDeque<Entry>>,
}

impl Registry {
    pub fn start(&self, status: RepairStatus) {
        let mut entries = self.entries.lock();
        let finished = entries
            .iter()
            .filter(|e| e.status.state != RepairState::Running)
            .count();
        if finished >= KEPT {
            if let Some(at) = entries
                .iter()
                .position(|e| e.status.state != RepairState::Running)
            {
                entries.remove(at);
            }
        }
        entries.push_back(Entry {
            status,
            started: Instant::now(),
        });
    }

    /// Changes the status of repair `id`; the status changed.
    pub fn update(&self, id: Uuid, change: impl FnOnce(&mut RepairStatus)) -> Option<RepairStatus> {
        let mut entries = self.entries.lock();
        let entry = entries.iter_mut().find(|e| e.status.id == id)?;
        change(&mut entry.status);
        Some(entry.status.clone())
    }

    pub fn statuses(&self) -> Vec<RepairStatus> {
        self.entries
            .lock()
            .iter()
            .map(|e| {
                let mut status = e.status.clone();
                if status.state == RepairState::Running {
                    status.elapsed_ms = e.started.elapsed().as_millis() as u64;
                }
                status
            })
            .collect()
    }
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
