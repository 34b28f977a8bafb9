//! What the node does when a disk fails, per Cassandra 5.0's `disk_failure_policy` and
//! `commit_failure_policy` (its `DefaultFSErrorHandler` and `CommitLog.handleCommitError`):
//! - `disk_failure_policy` on a failed read or write of a data directory: `stop` and
//!   `stop_paranoid` stop serving clients, `die` exits, `best_effort` stops using the
//!   directory (and its SSTables after a read failure) and stops serving clients only when no
//!   directory is left to write to, `ignore` lets the requests fail;
//! - on a corrupt SSTable: `stop_paranoid` stops serving clients, `die` exits, the others only
//!   fail the reads concerned;
//! - `commit_failure_policy`: `stop` stops serving clients and the commit log, `stop_commit`
//!   only the commit log (writes fail, reads go on), `die` exits, `ignore` fails the writes
//!   concerned and tries again later.
//!
//! Storage reports every failed read or write of a data directory, every corrupt SSTable and
//! every commit-log failure here. [`Health`] applies the policy: it takes data directories out
//! of use (`best_effort`) and asks the node, through the [`FailureListener`] the server
//! installs, to stop serving clients ([`NodeAction::StopTransports`]) or to exit
//! ([`NodeAction::Die`]). Without a listener the actions are only logged.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::error::{Result, StorageError};
pub use config::{CommitFailurePolicy, DiskFailurePolicy};

/// What the node must do beyond storage's own reaction to a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeAction {
    /// Stop serving clients (Cassandra's `stopTransports`); the admin API stays up.
    StopTransports,
    /// Exit the process at once (Cassandra's `killCurrentJVM`).
    Die,
}

/// Called with each action a policy takes and the reason, from whichever thread failed.
pub type FailureListener = Arc<dyn Fn(NodeAction, &str) + Send + Sync>;

/// Whether a failed file-system operation was reading or writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Read,
    Write,
}

/// What a failure did to one data directory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct DirState {
    unwritable: bool,
    unreadable: bool,
}

/// The policies, the state of the data directories and the node's listener.
pub struct Health {
    disk: DiskFailurePolicy,
    commit: CommitFailurePolicy,
    /// `data_file_directories`; `states` has one entry per directory.
    roots: Vec<PathBuf>,
    states: RwLock<Vec<DirState>>,
    listener: RwLock<Option<FailureListener>>,
}

impl Default for Health {
    /// Cassandra's default policies over no data directory: nothing is ever taken out of use.
    fn default() -> Health {
        Health::new(
            DiskFailurePolicy::default(),
            CommitFailurePolicy::default(),
            &[],
        )
    }
}

impl Health {
    pub fn new(disk: DiskFailurePolicy, commit: CommitFailurePolicy, roots: &[PathBuf]) -> Health {
        Health {
            disk,
            commit,
            roots: roots.to_vec(),
            states: RwLock::new(vec![DirState::default(); roots.len()]),
            listener: RwLock::new(None),
        }
    }

    pub fn disk_policy(&self) -> DiskFailurePolicy {
        self.disk
    }

    pub fn commit_policy(&self) -> CommitFailurePolicy {
        self.commit
    }

    /// Installs the node's reaction to [`NodeAction`]s.
    pub fn set_listener(&self, listener: FailureListener) {
        *self.listener.write() = Some(listener);
    }

    /// Applies `disk_failure_policy` to a failed file-system operation (other errors are not
    /// disk failures and are ignored). Returns the data directory it made unreadable
    /// (`best_effort` read failures), whose SSTables the caller must stop reading.
    pub fn fs_error(&self, operation: Operation, error: &StorageError) -> Option<PathBuf> {
        let StorageError::Io { path, source } = error else {
            return None;
        };
        match self.disk {
            DiskFailurePolicy::Stop | DiskFailurePolicy::StopParanoid => {
                self.stop_transports_for_disk();
                None
            }
            DiskFailurePolicy::BestEffort => {
                if source.kind() == ErrorKind::StorageFull {
                    self.act(NodeAction::StopTransports, &format!("{source}"));
                }
                self.take_out_of_use(path, operation)
            }
            DiskFailurePolicy::Die => {
                self.act(NodeAction::Die, &error.to_string());
                None
            }
            DiskFailurePolicy::Ignore => None,
        }
    }

    /// Applies `disk_failure_policy` to a corrupt SSTable: only `stop_paranoid` and `die` act;
    /// with the others the reads of the corrupt data fail and everything else goes on.
    pub fn corrupt_sstable(&self, error: &StorageError) {
        match self.disk {
            DiskFailurePolicy::StopParanoid => self.stop_transports_for_disk(),
            DiskFailurePolicy::Die => self.act(NodeAction::Die, &error.to_string()),
            DiskFailurePolicy::Stop | DiskFailurePolicy::BestEffort | DiskFailurePolicy::Ignore => {
            }
        }
    }

    /// Applies `commit_failure_policy` to a commit-log failure; `true` when the commit log
    /// keeps accepting writes (`ignore`).
    pub fn commit_error(&self, error: &StorageError) -> bool {
        let policy = self.commit.name();
        match self.commit {
            CommitFailurePolicy::Die => {
                self.act(NodeAction::Die, &format!("commit log failure: {error}"));
                false
            }
            CommitFailurePolicy::Stop | CommitFailurePolicy::StopCommit => {
                if self.commit == CommitFailurePolicy::Stop {
                    self.act(
                        NodeAction::StopTransports,
                        &format!("commit_failure_policy is {policy}"),
                    );
                }
                tracing::error!(
                    "commit log failure: {error}. Commit disk failure policy is {policy}; \
                     the commit log accepts no more writes"
                );
                false
            }
            CommitFailurePolicy::Ignore => {
                tracing::error!("commit log failure: {error}");
                true
            }
        }
    }

    /// Creates the table directory `dir` again when it is missing but its data directory is
    /// there (an operator restored the data directory, or removed only the table's part); a
    /// missing data directory (an unmounted disk) is not created.
    pub fn recreate_table_dir(&self, dir: &Path) -> Result<()> {
        let Some(index) = self.root_index(dir) else {
            return Ok(());
        };
        if dir.is_dir() || !self.roots[index].is_dir() {
            return Ok(());
        }
        tracing::warn!("creating the missing table directory {}", dir.display());
        std::fs::create_dir_all(dir).map_err(|e| StorageError::io(dir, e))
    }

    /// Whether new SSTables may be written under `dir`.
    pub fn writable(&self, dir: &Path) -> bool {
        self.state_of(dir).is_none_or(|s| !s.unwritable)
    }

    /// Whether SSTables under `dir` may be read.
    pub fn readable(&self, dir: &Path) -> bool {
        self.state_of(dir).is_none_or(|s| !s.unreadable)
    }

    /// Data directories a failure took out of use for writing.
    pub fn unwritable_dirs(&self) -> Vec<PathBuf> {
        let states = self.states.read();
        self.roots
            .iter()
            .zip(states.iter())
            .filter(|(_, s)| s.unwritable)
            .map(|(root, _)| root.clone())
            .collect()
    }

    fn stop_transports_for_disk(&self) {
        let reason = format!("disk_failure_policy is {}", self.disk.name());
        self.act(NodeAction::StopTransports, &reason);
    }

    /// `best_effort`: marks the data directory holding `path` unwritable, and unreadable too
    /// after a read failure; returns it when it just became unreadable.
    fn take_out_of_use(&self, path: &Path, operation: Operation) -> Option<PathBuf> {
        let index = self.root_index(path)?;
        let root = &self.roots[index];
        let mut states = self.states.write();
        let state = &mut states[index];
        if !state.unwritable {
            tracing::error!(
                "disk_failure_policy is best_effort: no longer writing to {}",
                root.display()
            );
            state.unwritable = true;
        }
        if operation == Operation::Read && !state.unreadable {
            tracing::error!(
                "disk_failure_policy is best_effort: no longer reading SSTables from {}",
                root.display()
            );
            state.unreadable = true;
            return Some(root.clone());
        }
        None
    }

    fn root_index(&self, path: &Path) -> Option<usize> {
        self.roots.iter().position(|root| path.starts_with(root))
    }

    fn state_of(&self, path: &Path) -> Option<DirState> {
        let index = self.root_index(path)?;
        Some(self.states.read()[index])
    }

    /// Asks the node to act; the node logs what it does (a stop of transports that already
    /// stopped is no news).
    fn act(&self, action: NodeAction, reason: &str) {
        let listener = self.listener.read().clone();
        if let Some(listener) = listener {
            listener(action, reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;

    fn io_error(path: &str, kind: ErrorKind) -> StorageError {
        StorageError::io(path, std::io::Error::from(kind))
    }

    fn corrupt() -> StorageError {
        StorageError::Corrupt {
            file: "/d1/ks/t/ha-1-Data.db".into(),
            offset: 10,
            reason: "checksum mismatch".into(),
        }
    }

    /// A health with `disk` and `commit` over /d1 and /d2, recording the actions it takes.
    fn recorded(
        disk: DiskFailurePolicy,
        commit: CommitFailurePolicy,
    ) -> (Health, Arc<Mutex<Vec<NodeAction>>>) {
        let health = Health::new(disk, commit, &["/d1".into(), "/d2".into()]);
        let actions = Arc::new(Mutex::new(Vec::new()));
        let sink = actions.clone();
        health.set_listener(Arc::new(move |action, _| sink.lock().push(action)));
        (health, actions)
    }

    #[test]
    fn stop_stops_transports_on_disk_errors_but_not_on_corruption() {
        let (health, actions) = recorded(DiskFailurePolicy::Stop, CommitFailurePolicy::Stop);
        health.corrupt_sstable(&corrupt());
        assert!(actions.lock().is_empty());
        let write = io_error("/d1/ks/t/ha-2-Data.db", ErrorKind::NotFound);
        assert_eq!(health.fs_error(Operation::Write, &write), None);
        assert_eq!(*actions.lock(), vec![NodeAction::StopTransports]);
        assert!(
            health.writable(Path::new("/d1/ks")),
            "stop takes nothing out of use"
        );
    }

    #[test]
    fn stop_paranoid_also_stops_on_corruption() {
        let (health, actions) =
            recorded(DiskFailurePolicy::StopParanoid, CommitFailurePolicy::Stop);
        health.corrupt_sstable(&corrupt());
        assert_eq!(*actions.lock(), vec![NodeAction::StopTransports]);
    }

    #[test]
    fn die_exits_on_disk_errors_and_corruption() {
        let (health, actions) = recorded(DiskFailurePolicy::Die, CommitFailurePolicy::Stop);
        health.corrupt_sstable(&corrupt());
        let read = io_error("/d2/x", ErrorKind::Other);
        health.fs_error(Operation::Read, &read);
        assert_eq!(*actions.lock(), vec![NodeAction::Die, NodeAction::Die]);
    }

    #[test]
    fn ignore_only_logs() {
        let (health, actions) = recorded(DiskFailurePolicy::Ignore, CommitFailurePolicy::Ignore);
        health.corrupt_sstable(&corrupt());
        health.fs_error(Operation::Write, &io_error("/d1/x", ErrorKind::Other));
        assert!(health.commit_error(&io_error("/cl/x", ErrorKind::Other)));
        assert!(actions.lock().is_empty());
        assert!(health.writable(Path::new("/d1")));
    }

    #[test]
    fn best_effort_takes_the_failed_directory_out_of_use() {
        let (health, actions) = recorded(DiskFailurePolicy::BestEffort, CommitFailurePolicy::Stop);
        let write = io_error("/d1/ks/t/ha-1-Data.db", ErrorKind::PermissionDenied);
        assert_eq!(health.fs_error(Operation::Write, &write), None);
        assert!(!health.writable(Path::new("/d1/ks/t")));
        assert!(health.readable(Path::new("/d1/ks/t")));
        assert!(health.writable(Path::new("/d2/ks/t")));
        assert_eq!(health.unwritable_dirs(), vec![PathBuf::from("/d1")]);
        let read = io_error("/d2/ks/t/ha-3-Index.db", ErrorKind::Other);
        assert_eq!(
            health.fs_error(Operation::Read, &read),
            Some(PathBuf::from("/d2"))
        );
        assert!(!health.readable(Path::new("/d2/ks/t")));
        assert_eq!(health.fs_error(Operation::Read, &read), None, "once");
        assert!(actions.lock().is_empty());
        let full = io_error("/d1", ErrorKind::StorageFull);
        health.fs_error(Operation::Write, &full);
        assert_eq!(*actions.lock(), vec![NodeAction::StopTransports]);
        assert!(
            health.writable(Path::new("/elsewhere")),
            "not a data directory"
        );
    }

    #[test]
    fn commit_policies() {
        let error = io_error("/cl/CommitLog-1-2.log", ErrorKind::NotFound);
        let (stop, actions) = recorded(DiskFailurePolicy::Stop, CommitFailurePolicy::Stop);
        assert!(!stop.commit_error(&error));
        assert_eq!(*actions.lock(), vec![NodeAction::StopTransports]);
        let (stop_commit, actions) =
            recorded(DiskFailurePolicy::Stop, CommitFailurePolicy::StopCommit);
        assert!(!stop_commit.commit_error(&error));
        assert!(actions.lock().is_empty());
        let (die, actions) = recorded(DiskFailurePolicy::Stop, CommitFailurePolicy::Die);
        assert!(!die.commit_error(&error));
        assert_eq!(*actions.lock(), vec![NodeAction::Die]);
    }

    #[test]
    fn defaults_are_cassandras() {
        assert_eq!(DiskFailurePolicy::default().name(), "stop");
        assert_eq!(CommitFailurePolicy::default().name(), "stop");
    }
}
