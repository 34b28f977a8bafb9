use std::fs;

use openraft::storage::{RaftSnapshotBuilder, RaftStateMachine};
use openraft::testing::{StoreBuilder, Suite};
use openraft::{CommittedLeaderId, EntryPayload};

use super::*;
use crate::model::Transformation;
use crate::raft_log::log_store::LogStore;
use crate::raft_types::NodeId;
use crate::transform::Command;

/// openraft's own conformance suite for log stores and state machines, on our files.
struct FileStores;

impl StoreBuilder<TypeConfig, LogStore, StateMachineStore, tempfile::TempDir> for FileStores {
    async fn build(
        &self,
    ) -> Result<(tempfile::TempDir, LogStore, StateMachineStore), StorageError> {
        let dir = tempfile::tempdir()
            .map_err(|e| StorageError::from_io_error(ErrorSubject::Store, ErrorVerb::Write, e))?;
        let io = |e| StorageError::from_io_error(ErrorSubject::Store, ErrorVerb::Read, e);
        let log = LogStore::open(dir.path()).map_err(io)?;
        let state_machine = StateMachineStore::open(dir.path()).map_err(io)?;
        Ok((dir, log, state_machine))
    }
}

#[test]
fn passes_the_openraft_storage_suite() {
    Suite::test_all(FileStores).unwrap();
}

fn entry(index: u64, command: Command) -> Entry {
    Entry {
        log_id: LogId::new(CommittedLeaderId::new(1, NodeId::from(1)), index),
        payload: EntryPayload::Normal(command),
    }
}

fn create(name: &str) -> Command {
    Command::Apply(Transformation::SaveKeyspace {
        name: name.to_string(),
        definition: bytes::Bytes::from(format!("definition of {name}")),
        expect: None,
    })
}

#[tokio::test]
async fn a_snapshot_is_the_state_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut machine = StateMachineStore::open(dir.path()).unwrap();
    let mut watch = machine.subscribe();
    let outcomes = machine
        .apply([
            entry(1, Command::Seed(ClusterMetadata::empty("Test Cluster"))),
            entry(2, create("a")),
            entry(3, create("a")),
            entry(4, create("b")),
        ])
        .await
        .unwrap();
    assert_eq!(
        outcomes,
        vec![
            Outcome::Applied { epoch: 1 },
            Outcome::Applied { epoch: 2 },
            Outcome::Conflict { current_epoch: 2 },
            Outcome::Applied { epoch: 3 },
        ]
    );
    assert!(watch.has_changed().unwrap());
    let published = watch.borrow_and_update().clone();
    assert_eq!(published.epoch, 3);

    let snapshot = machine
        .get_snapshot_builder()
        .await
        .build_snapshot()
        .await
        .unwrap();
    assert_eq!(snapshot.meta.last_log_id.map(|id| id.index), Some(4));
    drop(machine);

    let mut reopened = StateMachineStore::open(dir.path()).unwrap();
    assert_eq!(*reopened.subscribe().borrow(), published);
    let (last, _) = reopened.applied_state().await.unwrap();
    assert_eq!(last.map(|id| id.index), Some(4));
    let current = reopened.get_current_snapshot().await.unwrap().unwrap();
    assert_eq!(current.meta, snapshot.meta);
}

#[tokio::test]
async fn a_damaged_snapshot_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut machine = StateMachineStore::open(dir.path()).unwrap();
    machine
        .apply([entry(
            1,
            Command::Seed(ClusterMetadata::empty("Test Cluster")),
        )])
        .await
        .unwrap();
    machine
        .get_snapshot_builder()
        .await
        .build_snapshot()
        .await
        .unwrap();
    drop(machine);
    let path = dir.path().join("snapshot");
    let mut data = fs::read(&path).unwrap();
    let last = data.len() - 1;
    data[last] ^= 1;
    fs::write(&path, &data).unwrap();
    let error = StateMachineStore::open(dir.path()).err().unwrap();
    assert!(error.to_string().contains("metadata snapshot"), "{error}");
}
