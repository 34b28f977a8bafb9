//! This node's part in incremental repair sessions (Cassandra's `LocalSessions`): each session
//! whose data it marked pending, with its coordinator, participants and state, for
//! `nodetool repair_admin list` and `cancel`. Kept in memory: at start-up what a session left
//! pending is released (see [`Repair::start`](crate::Repair::start)).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use parking_lot::Mutex;
use uuid::Uuid;

use crate::status::now_ms;

/// Sessions kept once ended.
const KEPT: usize = 100;

/// Cassandra's `ConsistentSession.State`s this node goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionState {
    Prepared,
    Repairing,
    Finalized,
    Failed,
}

impl SessionState {
    pub fn name(self) -> &'static str {
        match self {
            SessionState::Prepared => "PREPARED",
            SessionState::Repairing => "REPAIRING",
            SessionState::Finalized => "FINALIZED",
            SessionState::Failed => "FAILED",
        }
    }

    pub fn is_over(self) -> bool {
        matches!(self, SessionState::Finalized | SessionState::Failed)
    }
}

/// One incremental session as this node sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalSession {
    pub id: Uuid,
    pub state: SessionState,
    pub coordinator: SocketAddr,
    pub participants: Vec<SocketAddr>,
    pub tables: Vec<mutation::TableId>,
    /// Milliseconds since the epoch.
    pub started_ms: u64,
    pub last_update_ms: u64,
}

#[derive(Default)]
pub struct LocalSessions {
    sessions: Mutex<BTreeMap<Uuid, LocalSession>>,
}

impl LocalSessions {
    /// Records a session whose data this node just marked pending.
    pub fn prepared(
        &self,
        id: Uuid,
        coordinator: SocketAddr,
        participants: Vec<SocketAddr>,
        tables: Vec<mutation::TableId>,
    ) {
        let now = now_ms();
        let mut sessions = self.sessions.lock();
        sessions.insert(
            id,
            LocalSession {
                id,
                state: SessionState::Prepared,
                coordinator,
                participants,
                tables,
                started_ms: now,
                last_update_ms: now,
            },
        );
        forget_oldest_ended(&mut sessions);
    }

    /// Moves session `id` to `state` unless it already ended; whether it was known.
    pub fn set_state(&self, id: Uuid, state: SessionState) -> bool {
        let mut sessions = self.sessions.lock();
        let Some(session) = sessions.get_mut(&id) else {
            return false;
        };
        if !session.state.is_over() {
            session.state = state;
            session.last_update_ms = now_ms();
        }
        true
    }

    pub fn get(&self, id: Uuid) -> Option<LocalSession> {
        self.sessions.lock().get(&id).cloned()
    }

    /// The sessions, oldest first; only those not ended unless `all`.
    pub fn list(&self, all: bool) -> Vec<LocalSession> {
        let mut list: Vec<LocalSession> = self
            .sessions
            .lock()
            .values()
            .filter(|s| all || !s.state.is_over())
            .cloned()
            .collect();
        list.sort_by_key(|s| s.started_ms);
        list
    }
}

fn forget_oldest_ended(sessions: &mut BTreeMap<Uuid, LocalSession>) {
    let ended: Vec<(u64, Uuid)> = sessions
        .values()
        .filter(|s| s.state.is_over())
        .map(|s| (s.last_update_ms, s.id))
        .collect();
    if ended.len() > KEPT {
        let mut ended = ended;
        ended.sort_unstable();
        for (_, id) in ended.iter().take(ended.len() - KEPT) {
            sessions.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_move_until_they_end_and_ended_ones_are_listed_with_all() {
        let local = LocalSessions::default();
        let addr: SocketAddr = "127.0.0.1:7000".parse().unwrap_or_else(|_| unreachable!());
        let id = Uuid::from_u128(1);
        local.prepared(id, addr, vec![addr], Vec::new());
        assert!(local.set_state(id, SessionState::Repairing));
        assert_eq!(local.list(false).len(), 1);
        assert!(local.set_state(id, SessionState::Failed));
        assert!(local.set_state(id, SessionState::Finalized));
        assert_eq!(local.get(id).map(|s| s.state), Some(SessionState::Failed));
        assert!(local.list(false).is_empty());
        assert_eq!(local.list(true).len(), 1);
        assert!(!local.set_state(Uuid::from_u128(2), SessionState::Failed));
    }
}
