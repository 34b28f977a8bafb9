use std::fs;

use openraft::storage::{RaftLogReader, RaftLogStorage, RaftLogStorageExt};
use openraft::{CommittedLeaderId, EntryPayload};

use super::*;
use crate::raft_types::NodeId;

fn log_id(term: u64, index: u64) -> LogId {
    LogId::new(CommittedLeaderId::new(term, NodeId::from(1)), index)
}

fn blank(term: u64, index: u64) -> Entry {
    Entry {
        log_id: log_id(term, index),
        payload: EntryPayload::Blank,
    }
}

/// Appends entries `range` of term 1, one write each.
async fn append_each(store: &mut LogStore, range: std::ops::Range<u64>) {
    for index in range {
        store.blocking_append([blank(1, index)]).await.unwrap();
    }
}

async fn indexes(store: &mut LogStore) -> Vec<u64> {
    let entries = store.try_get_log_entries(..).await.unwrap();
    entries.iter().map(|e| e.log_id.index).collect()
}

fn log_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join(FILE_NAME)
}

#[tokio::test]
async fn a_reopened_log_has_its_entries_vote_and_committed_index() {
    let dir = tempfile::tempdir().unwrap();
    let vote = Vote::new_committed(3, NodeId::from(2));
    {
        let mut store = LogStore::open(dir.path()).unwrap();
        assert!(store.is_pristine());
        append_each(&mut store, 0..6).await;
        store.save_vote(&vote).await.unwrap();
        store.save_committed(Some(log_id(1, 3))).await.unwrap();
        store.truncate(log_id(1, 5)).await.unwrap();
        store.purge(log_id(1, 1)).await.unwrap();
    }
    let mut store = LogStore::open(dir.path()).unwrap();
    assert!(!store.is_pristine());
    assert_eq!(indexes(&mut store).await, vec![2, 3, 4]);
    assert_eq!(store.read_vote().await.unwrap(), Some(vote));
    assert_eq!(store.read_committed().await.unwrap(), Some(log_id(1, 3)));
    let state = store.get_log_state().await.unwrap();
    assert_eq!(state.last_purged_log_id, Some(log_id(1, 1)));
    assert_eq!(state.last_log_id, Some(log_id(1, 4)));
}

#[tokio::test]
async fn a_torn_tail_is_cut_off_and_the_log_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut store = LogStore::open(dir.path()).unwrap();
        append_each(&mut store, 0..3).await;
    }
    let whole = fs::read(log_path(&dir)).unwrap();
    // A crash in the middle of the next append: half a record after the last whole one.
    let mut next = Vec::new();
    frame_into(&mut next, &encode(&LogOp::Append(blank(1, 3))).unwrap());
    let mut torn = whole.clone();
    torn.extend_from_slice(&next[..next.len() / 2]);
    fs::write(log_path(&dir), &torn).unwrap();

    let mut store = LogStore::open(dir.path()).unwrap();
    assert_eq!(indexes(&mut store).await, vec![0, 1, 2]);
    assert_eq!(
        fs::read(log_path(&dir)).unwrap(),
        whole,
        "the torn tail is cut off"
    );
    append_each(&mut store, 3..5).await;
    drop(store);
    let mut store = LogStore::open(dir.path()).unwrap();
    assert_eq!(indexes(&mut store).await, vec![0, 1, 2, 3, 4]);
}

#[tokio::test]
async fn a_corrupt_record_inside_the_log_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut store = LogStore::open(dir.path()).unwrap();
        append_each(&mut store, 0..3).await;
    }
    let mut data = fs::read(log_path(&dir)).unwrap();
    let middle = data.len() / 2;
    data[middle] ^= 0x40;
    fs::write(log_path(&dir), &data).unwrap();

    let error = LogStore::open(dir.path())
        .err()
        .expect("corruption must be reported");
    assert_eq!(error.kind(), io::ErrorKind::InvalidData);
    let message = error.to_string();
    assert!(message.contains("is corrupt"), "{message}");
    assert!(message.contains("checksum mismatch"), "{message}");
}

#[tokio::test]
async fn a_file_that_is_not_a_log_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(log_path(&dir), b"something else entirely").unwrap();
    let error = LogStore::open(dir.path()).err().unwrap();
    assert!(error.to_string().contains("bad magic"), "{error}");
}

#[tokio::test]
async fn purges_rewrite_the_file_with_only_live_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = LogStore::open(dir.path()).unwrap();
    for index in 0..300 {
        store.blocking_append([blank(1, index)]).await.unwrap();
        store.save_committed(Some(log_id(1, index))).await.unwrap();
        if index % 10 == 9 {
            store.purge(log_id(1, index - 5)).await.unwrap();
        }
    }
    let records = store.inner.lock().records;
    assert!(records < 100, "{records} records left in the file");
    drop(store);
    let mut store = LogStore::open(dir.path()).unwrap();
    assert_eq!(indexes(&mut store).await, (295..300).collect::<Vec<_>>());
    assert_eq!(store.read_committed().await.unwrap(), Some(log_id(1, 299)));
    let state = store.get_log_state().await.unwrap();
    assert_eq!(state.last_purged_log_id, Some(log_id(1, 294)));
}
