//! The state machine: the current `ClusterMetadata` in memory, published on a watch channel
//! after every applied batch, and persisted only as snapshots (`storage::snapshot_file`). At
//! start-up it is the last snapshot; openraft then re-applies the committed log after it.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use openraft::storage::{RaftSnapshotBuilder, RaftStateMachine};
use openraft::{EntryPayload, ErrorSubject, ErrorVerb};
use parking_lot::Mutex;
use tokio::sync::watch;

use crate::codec::{decode, encode};
use crate::model::ClusterMetadata;
use crate::raft_log::invalid_data;
use crate::raft_log::snapshot_file::{self, StoredSnapshot};
use crate::raft_types::{
    Entry, LogId, Snapshot, SnapshotMeta, StorageError, StoredMembership, TypeConfig,
};
use crate::transform::{apply, Outcome};

/// The state machine openraft drives; the service reads its state through `subscribe`.
pub(crate) struct StateMachineStore {
    shared: Arc<Shared>,
}

/// Builds snapshots beside the state machine (openraft runs it on its own).
pub(crate) struct SnapshotBuilder {
    shared: Arc<Shared>,
}

struct Shared {
    dir: PathBuf,
    state: Mutex<Applied>,
    publish: watch::Sender<Arc<ClusterMetadata>>,
}

struct Applied {
    last: Option<LogId>,
    membership: StoredMembership,
    metadata: Arc<ClusterMetadata>,
    snapshot: Option<StoredSnapshot>,
    snapshots_built: u64,
}

impl StateMachineStore {
    /// The state of the stored snapshot, or the pristine state.
    pub(crate) fn open(dir: &Path) -> io::Result<StateMachineStore> {
        let snapshot = snapshot_file::read(dir)?;
        let mut applied = Applied {
            last: None,
            membership: StoredMembership::default(),
            metadata: Arc::new(ClusterMetadata::default()),
            snapshot: None,
            snapshots_built: 0,
        };
        if let Some(snapshot) = snapshot {
            let metadata: ClusterMetadata = decode(&snapshot.data).map_err(|e| {
                invalid_data(format!("metadata snapshot in {}: {e}", dir.display()))
            })?;
            applied.last = snapshot.meta.last_log_id;
            applied.membership = snapshot.meta.last_membership.clone();
            applied.metadata = Arc::new(metadata);
            applied.snapshot = Some(snapshot);
        }
        let (publish, _) = watch::channel(applied.metadata.clone());
        let shared = Shared {
            dir: dir.to_path_buf(),
            state: Mutex::new(applied),
            publish,
        };
        Ok(StateMachineStore {
            shared: Arc::new(shared),
        })
    }

    /// Every state the machine reaches, as it reaches it.
    pub(crate) fn subscribe(&self) -> watch::Receiver<Arc<ClusterMetadata>> {
        self.shared.publish.subscribe()
    }
}

impl Shared {
    fn build(&self) -> io::Result<StoredSnapshot> {
        let (meta, metadata) = {
            let mut state = self.state.lock();
            state.snapshots_built += 1;
            let index = state.last.map_or(0, |id| id.index);
            let meta = SnapshotMeta {
                last_log_id: state.last,
                last_membership: state.membership.clone(),
                snapshot_id: format!("{index}-{}", state.snapshots_built),
            };
            (meta, state.metadata.clone())
        };
        let data = encode(&*metadata).map_err(|e| invalid_data(e.to_string()))?;
        let snapshot = StoredSnapshot { meta, data };
        self.store(snapshot.clone())?;
        Ok(snapshot)
    }

    /// Makes `snapshot` the current one, on disk first.
    fn store(&self, snapshot: StoredSnapshot) -> io::Result<()> {
        snapshot_file::write(&self.dir, &snapshot)?;
        let mut state = self.state.lock();
        let newer = match &state.snapshot {
            Some(current) => current.meta.last_log_id <= snapshot.meta.last_log_id,
            None => true,
        };
        if newer {
            state.snapshot = Some(snapshot);
        }
        Ok(())
    }
}

fn snapshot_error(meta: Option<&SnapshotMeta>, verb: ErrorVerb, e: io::Error) -> StorageError {
    let signature = meta.map(|meta| meta.signature());
    StorageError::from_io_error(ErrorSubject::Snapshot(signature), verb, e)
}

fn to_raft(snapshot: StoredSnapshot) -> Snapshot {
    Snapshot {
        meta: snapshot.meta,
        snapshot: Box::new(snapshot.data),
    }
}

impl RaftSnapshotBuilder<TypeConfig> for SnapshotBuilder {
    async fn build_snapshot(&mut self) -> Result<Snapshot, StorageError> {
        let snapshot = self
            .shared
            .build()
            .map_err(|e| snapshot_error(None, ErrorVerb::Write, e))?;
        Ok(to_raft(snapshot))
    }
}

impl RaftStateMachine<TypeConfig> for StateMachineStore {
    type SnapshotBuilder = SnapshotBuilder;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), StorageError> {
        let state = self.shared.state.lock();
        Ok((state.last, state.membership.clone()))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Outcome>, StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let mut state = self.shared.state.lock();
        let mut outcomes = Vec::new();
        for entry in entries {
            state.last = Some(entry.log_id);
            let outcome = match entry.payload {
                EntryPayload::Blank => Outcome::Nothing,
                EntryPayload::Membership(membership) => {
                    state.membership = StoredMembership::new(Some(entry.log_id), membership);
                    Outcome::Nothing
                }
                EntryPayload::Normal(command) => {
                    let (next, outcome) = apply(&state.metadata, &command);
                    state.metadata = next;
                    outcome
                }
            };
            outcomes.push(outcome);
        }
        let metadata = state.metadata.clone();
        drop(state);
        self.shared.publish.send_if_modified(|current| {
            let changed = !Arc::ptr_eq(current, &metadata);
            *current = metadata;
            changed
        });
        Ok(outcomes)
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        SnapshotBuilder {
            shared: self.shared.clone(),
        }
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<Vec<u8>>, StorageError> {
        Ok(Box::default())
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta,
        snapshot: Box<Vec<u8>>,
    ) -> Result<(), StorageError> {
        let metadata: ClusterMetadata = decode(&snapshot).map_err(|e| {
            let e = invalid_data(format!("snapshot from the leader: {e}"));
            snapshot_error(Some(meta), ErrorVerb::Read, e)
        })?;
        let stored = StoredSnapshot {
            meta: meta.clone(),
            data: *snapshot,
        };
        self.shared
            .store(stored)
            .map_err(|e| snapshot_error(Some(meta), ErrorVerb::Write, e))?;
        let metadata = Arc::new(metadata);
        {
            let mut state = self.shared.state.lock();
            state.last = meta.last_log_id;
            state.membership = meta.last_membership.clone();
            state.metadata = metadata.clone();
        }
        self.shared.publish.send_replace(metadata);
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot>, StorageError> {
        let state = self.shared.state.lock();
        Ok(state.snapshot.clone().map(to_raft))
    }
}

#[cfg(test)]
#[path = "state_machine_tests.rs"]
mod tests;
