//! The Raft log, vote and committed index in one append-only file of checked records
//! (`<metadata_directory>/raft-log`). Every record is an operation; opening the file replays
//! them. Appends, truncations and votes are fsync'd before they are acknowledged (schema
//! changes are rare, so one fsync per change costs nothing that matters). After a purge the
//! file is rewritten from the live state once it holds mostly dead records.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::ops::RangeBounds;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use openraft::storage::{LogFlushed, LogState, RaftLogReader, RaftLogStorage};
use openraft::{ErrorSubject, ErrorVerb};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::codec::{decode, encode};
use crate::raft_log::record::{frame_into, scan};
use crate::raft_log::{invalid_data, sync_dir};
use crate::raft_types::{Entry, LogId, StorageError, TypeConfig, Vote};

const MAGIC: &[u8; 8] = b"HLNSRLG1";
const FILE_NAME: &str = "raft-log";
const TMP_NAME: &str = "raft-log.tmp";

/// One record of the log file.
#[derive(Debug, Serialize, Deserialize)]
enum LogOp {
    Append(Entry),
    /// Entries from this index on are gone.
    Truncate(u64),
    /// Entries up to this id are gone (covered by a snapshot).
    Purge(LogId),
    Vote(Vote),
    Committed(Option<LogId>),
}

/// The log store; clones share it (openraft's log readers are clones).
#[derive(Clone)]
pub(crate) struct LogStore {
    inner: Arc<Mutex<LogFile>>,
}

struct LogFile {
    dir: PathBuf,
    file: File,
    /// Bytes in the file (to cut a half-written batch back off).
    len: u64,
    /// Records in the file, live or not.
    records: usize,
    entries: BTreeMap<u64, Entry>,
    purged: Option<LogId>,
    vote: Option<Vote>,
    committed: Option<LogId>,
}

impl LogStore {
    /// Opens (or creates) the log in `dir`, cutting off a torn tail; corruption inside the
    /// file is an error.
    pub(crate) fn open(dir: &Path) -> io::Result<LogStore> {
        fs::create_dir_all(dir)?;
        let path = dir.join(FILE_NAME);
        let data = match fs::read(&path) {
            Ok(data) => data,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        let mut log = LogFile::empty(dir)?;
        if data.len() < MAGIC.len() {
            log.write_file(&[])?;
        } else {
            log.replay(&path, &data)?;
        }
        Ok(LogStore {
            inner: Arc::new(Mutex::new(log)),
        })
    }

    /// Whether nothing was ever appended (a fresh directory).
    pub(crate) fn is_pristine(&self) -> bool {
        let log = self.inner.lock();
        log.entries.is_empty() && log.purged.is_none()
    }
}

impl LogFile {
    fn empty(dir: &Path) -> io::Result<LogFile> {
        let path = dir.join(FILE_NAME);
        Ok(LogFile {
            dir: dir.to_path_buf(),
            file: OpenOptions::new().create(true).append(true).open(path)?,
            len: 0,
            records: 0,
            entries: BTreeMap::new(),
            purged: None,
            vote: None,
            committed: None,
        })
    }

    /// Rebuilds the state from the file's records.
    fn replay(&mut self, path: &Path, data: &[u8]) -> io::Result<()> {
        if &data[..MAGIC.len()] != MAGIC {
            return Err(invalid_data(format!(
                "{} is not a Helenus metadata log (bad magic)",
                path.display()
            )));
        }
        let body = &data[MAGIC.len()..];
        let scanned = scan(body).map_err(|e| {
            invalid_data(format!(
                "metadata log {} is corrupt: {e}; restore the directory from a backup, or \
                 remove it to rejoin the cluster as a new member",
                path.display()
            ))
        })?;
        for record in &scanned.records {
            let op: LogOp = decode(record).map_err(|e| {
                invalid_data(format!("metadata log {}: bad record: {e}", path.display()))
            })?;
            self.replay_op(op);
        }
        self.records = scanned.records.len();
        self.len = (MAGIC.len() + scanned.valid_len) as u64;
        if scanned.valid_len < body.len() {
            tracing::warn!(
                "metadata log {}: cutting off a torn tail of {} bytes (an interrupted write)",
                path.display(),
                body.len() - scanned.valid_len
            );
            self.file.set_len(self.len)?;
            self.file.sync_all()?;
        }
        Ok(())
    }

    fn replay_op(&mut self, op: LogOp) {
        match op {
            LogOp::Append(entry) => {
                self.entries.insert(entry.log_id.index, entry);
            }
            LogOp::Truncate(since) => {
                self.entries.split_off(&since);
            }
            LogOp::Purge(upto) => self.forget_upto(upto),
            LogOp::Vote(vote) => self.vote = Some(vote),
            LogOp::Committed(committed) => self.committed = committed,
        }
    }

    fn forget_upto(&mut self, upto: LogId) {
        self.entries = self.entries.split_off(&(upto.index + 1));
        self.purged = Some(upto);
    }

    /// Appends `ops` as one write, fsync'd when `sync`; a failed write is cut back off.
    fn write_ops(&mut self, ops: &[LogOp], sync: bool) -> io::Result<()> {
        let mut buf = Vec::new();
        for op in ops {
            let payload = encode(op).map_err(|e| invalid_data(e.to_string()))?;
            frame_into(&mut buf, &payload);
        }
        if let Err(e) = self.file.write_all(&buf) {
            let _ = self.file.set_len(self.len);
            return Err(e);
        }
        if sync {
            self.file.sync_data()?;
        }
        self.len += buf.len() as u64;
        self.records += ops.len();
        Ok(())
    }

    /// Replaces the file with the live state (after purges leave it mostly dead records).
    fn maybe_rewrite(&mut self) -> io::Result<()> {
        if self.records <= 2 * self.entries.len() + 64 {
            return Ok(());
        }
        let mut ops: Vec<LogOp> = Vec::with_capacity(self.entries.len() + 3);
        ops.extend(self.vote.map(LogOp::Vote));
        ops.push(LogOp::Committed(self.committed));
        ops.extend(self.purged.map(LogOp::Purge));
        ops.extend(self.entries.values().cloned().map(LogOp::Append));
        self.write_file(&ops)
    }

    /// Writes a whole new file holding `ops` and swaps it in.
    fn write_file(&mut self, ops: &[LogOp]) -> io::Result<()> {
        let mut buf = MAGIC.to_vec();
        for op in ops {
            let payload = encode(op).map_err(|e| invalid_data(e.to_string()))?;
            frame_into(&mut buf, &payload);
        }
        let tmp = self.dir.join(TMP_NAME);
        let mut file = File::create(&tmp)?;
        file.write_all(&buf)?;
        file.sync_all()?;
        let path = self.dir.join(FILE_NAME);
        fs::rename(&tmp, &path)?;
        sync_dir(&self.dir)?;
        self.file = OpenOptions::new().append(true).open(path)?;
        self.len = buf.len() as u64;
        self.records = ops.len();
        Ok(())
    }

    fn log_state(&self) -> LogState<TypeConfig> {
        let last = self.entries.values().next_back().map(|e| e.log_id);
        LogState {
            last_purged_log_id: self.purged,
            last_log_id: last.or(self.purged),
        }
    }
}

fn write_error(subject: ErrorSubject<crate::raft_types::NodeId>, e: io::Error) -> StorageError {
    StorageError::from_io_error(subject, ErrorVerb::Write, e)
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        let log = self.inner.lock();
        Ok(log.entries.range(range).map(|(_, e)| e.clone()).collect())
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        Ok(self.inner.lock().log_state())
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        let mut log = self.inner.lock();
        log.write_ops(&[LogOp::Vote(*vote)], true)
            .map_err(|e| write_error(ErrorSubject::Vote, e))?;
        log.vote = Some(*vote);
        Ok(())
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        Ok(self.inner.lock().vote)
    }

    /// Not fsync'd: a committed index lost in a crash only means re-applying fewer entries at
    /// start-up; the next fsync'd write carries it anyway.
    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StorageError> {
        let mut log = self.inner.lock();
        log.write_ops(&[LogOp::Committed(committed)], false)
            .map_err(|e| write_error(ErrorSubject::Store, e))?;
        log.committed = committed;
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, StorageError> {
        Ok(self.inner.lock().committed)
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let entries: Vec<Entry> = entries.into_iter().collect();
        let ops: Vec<LogOp> = entries.iter().cloned().map(LogOp::Append).collect();
        let mut log = self.inner.lock();
        log.write_ops(&ops, true)
            .map_err(|e| write_error(ErrorSubject::Logs, e))?;
        for entry in entries {
            log.entries.insert(entry.log_id.index, entry);
        }
        drop(log);
        callback.log_io_completed(Ok(()));
        Ok(())
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let mut log = self.inner.lock();
        log.write_ops(&[LogOp::Truncate(log_id.index)], true)
            .map_err(|e| write_error(ErrorSubject::Logs, e))?;
        log.entries.split_off(&log_id.index);
        Ok(())
    }

    /// Not fsync'd: the snapshot covering the purged entries is durable already, and a purge
    /// lost in a crash is done again after the next snapshot.
    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let mut log = self.inner.lock();
        log.write_ops(&[LogOp::Purge(log_id)], false)
            .map_err(|e| write_error(ErrorSubject::Logs, e))?;
        log.forget_upto(log_id);
        log.maybe_rewrite()
            .map_err(|e| write_error(ErrorSubject::Logs, e))
    }
}

#[cfg(test)]
#[path = "log_store_tests.rs"]
mod tests;
