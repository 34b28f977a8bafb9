//! The progress of stream sessions, both directions, for `nodetool netstats`,
//! `system_views.streaming`, the admin API and the log.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use uuid::Uuid;

/// Finished sessions kept for display.
const FINISHED_KEPT: usize = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Receiving,
    Sending,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// Choosing and staging the SSTables.
    Preparing,
    Streaming,
    Complete,
    Failed(String),
}

impl State {
    pub fn is_finished(&self) -> bool {
        matches!(self, State::Complete | State::Failed(_))
    }

    /// Cassandra's status names in `system_views.streaming`.
    pub fn name(&self) -> &'static str {
        match self {
            State::Preparing => "start",
            State::Streaming => "start",
            State::Complete => "success",
            State::Failed(_) => "failure",
        }
    }
}

/// One session as seen at one instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    pub id: Uuid,
    pub description: String,
    pub peer: SocketAddr,
    pub direction: Direction,
    pub state: State,
    pub files_total: u64,
    pub files_done: u64,
    pub bytes_total: u64,
    pub bytes_done: u64,
    /// Milliseconds since the epoch when it started.
    pub started_ms: u64,
    pub elapsed: Duration,
}

/// A session's live counters.
#[derive(Debug)]
pub struct Progress {
    pub id: Uuid,
    pub description: String,
    pub peer: SocketAddr,
    pub direction: Direction,
    started: tokio::time::Instant,
    started_ms: u64,
    state: Mutex<(State, Option<Duration>)>,
    pub files_total: AtomicU64,
    pub files_done: AtomicU64,
    pub bytes_total: AtomicU64,
    pub bytes_done: AtomicU64,
}

impl Progress {
    fn new(id: Uuid, description: &str, peer: SocketAddr, direction: Direction) -> Progress {
        let started_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Progress {
            id,
            description: description.to_string(),
            peer,
            direction,
            started: tokio::time::Instant::now(),
            started_ms,
            state: Mutex::new((State::Preparing, None)),
            files_total: AtomicU64::new(0),
            files_done: AtomicU64::new(0),
            bytes_total: AtomicU64::new(0),
            bytes_done: AtomicU64::new(0),
        }
    }

    pub fn set_totals(&self, files: u64, bytes: u64) {
        self.files_total.store(files, Ordering::Relaxed);
        self.bytes_total.store(bytes, Ordering::Relaxed);
        self.set_state(State::Streaming);
    }

    pub fn add_bytes(&self, bytes: u64) {
        self.bytes_done.fetch_add(bytes, Ordering::Relaxed);
    }

    pub fn file_done(&self) {
        self.files_done.fetch_add(1, Ordering::Relaxed);
    }

    /// Moves to `state`; a finished session stays as it finished.
    pub fn set_state(&self, state: State) {
        let mut current = self.state.lock();
        if current.0.is_finished() {
            return;
        }
        if state.is_finished() {
            current.1 = Some(self.started.elapsed());
        }
        current.0 = state;
    }

    pub fn state(&self) -> State {
        self.state.lock().0.clone()
    }

    pub fn info(&self) -> SessionInfo {
        let (state, finished) = self.state.lock().clone();
        SessionInfo {
            id: self.id,
            description: self.description.clone(),
            peer: self.peer,
            direction: self.direction,
            state,
            files_total: self.files_total.load(Ordering::Relaxed),
            files_done: self.files_done.load(Ordering::Relaxed),
            bytes_total: self.bytes_total.load(Ordering::Relaxed),
            bytes_done: self.bytes_done.load(Ordering::Relaxed),
            started_ms: self.started_ms,
            elapsed: finished.unwrap_or_else(|| self.started.elapsed()),
        }
    }
}

/// Every session running and the last ones finished.
#[derive(Debug, Default)]
pub struct Registry {
    sessions: Mutex<VecDeque<Arc<Progress>>>,
}

impl Registry {
    pub fn start(
        &self,
        id: Uuid,
        description: &str,
        peer: SocketAddr,
        direction: Direction,
    ) -> Arc<Progress> {
        let progress = Arc::new(Progress::new(id, description, peer, direction));
        let mut sessions = self.sessions.lock();
        sessions.push_back(progress.clone());
        let finished = sessions.iter().filter(|s| s.state().is_finished()).count();
        if finished > FINISHED_KEPT {
            if let Some(oldest) = sessions.iter().position(|s| s.state().is_finished()) {
                sessions.remove(oldest);
            }
        }
        progress
    }

    /// Every session kept, oldest first.
    pub fn sessions(&self) -> Vec<SessionInfo> {
        self.sessions.lock().iter().map(|s| s.info()).collect()
    }
}
