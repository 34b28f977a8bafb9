//! The commit-log sync thread: fsyncs the segment being written per the sync mode, answers the
//! writers of `batch` and `group` modes once the fsync covering their records is done, syncs
//! segments retired by a roll, and deletes segments no table needs any more.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::mapped::{create_segment, OpenSegment, Tail};
use super::segment::list_segments;
use super::{CommitlogSync, Shared};
use crate::error::{Result, StorageError};

/// Default period of [`CommitlogSync::Periodic`].
pub const DEFAULT_PERIOD: Duration = Duration::from_secs(10);

/// Acknowledgement channel of one request.
pub type Ack = oneshot::Sender<Result<()>>;

/// A segment the writers rolled away from: its file and the bytes written to it.
pub struct Retired {
    pub segment: Arc<OpenSegment>,
    pub len: u64,
}

/// The segment after the current one, created ahead of the roll that needs it.
pub struct Spare {
    pub id: u64,
    pub file: OpenSegment,
    pub tail: Tail,
}

/// Work for the sync thread.
pub enum Request {
    /// Answer once an fsync covers everything written so far (batch and group modes).
    Sync { ack: Ack },
    /// The writers moved on to a new segment: sync the retired ones now and prepare the next.
    Retired,
    /// Delete the segments with ids below `below`, except the current one.
    Recycle { below: u64 },
    /// Sync everything written so far and stop.
    Shutdown { ack: Ack },
}

/// State of the sync thread.
pub struct Syncer {
    shared: Arc<Shared>,
    mode: CommitlogSync,
    /// Writers waiting for the next fsync.
    waiting: Vec<Ack>,
    last_sync: Instant,
}

impl Syncer {
    pub(super) fn new(shared: Arc<Shared>, mode: CommitlogSync) -> Self {
        Syncer {
            shared,
            mode,
            waiting: Vec::new(),
            last_sync: Instant::now(),
        }
    }

    /// Serves requests until shutdown or until every sender is gone.
    pub fn run(mut self, requests: Receiver<Request>) {
        self.prepare_spare();
        loop {
            let first = match requests.recv_timeout(self.wait_limit()) {
                Ok(request) => Some(request),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            let mut shutdowns = Vec::new();
            for request in first
                .into_iter()
                .chain(std::iter::from_fn(|| requests.try_recv().ok()))
            {
                match request {
                    Request::Sync { ack } => self.waiting.push(ack),
                    Request::Retired => {
                        // Its failure went through `commit_failure_policy` already.
                        let _ = self.sync_retired();
                        self.prepare_spare();
                    }
                    Request::Recycle { below } => self.recycle(below),
                    Request::Shutdown { ack } => shutdowns.push(ack),
                }
            }
            let outcome = if !shutdowns.is_empty() || self.sync_due() {
                self.sync()
            } else {
                Ok(())
            };
            if !shutdowns.is_empty() {
                self.discard_spare();
                self.reply_all(shutdowns, &outcome);
                return;
            }
        }
        let _ = self.sync();
        self.discard_spare();
    }

    /// Creates the segment after the current one, unless it exists already. A failure only
    /// leaves the roll to create it (and to apply `commit_failure_policy` if that fails too).
    fn prepare_spare(&self) {
        if self.failed() {
            return;
        }
        let mut spare = self.shared.spare.lock();
        let next = self.shared.segment.load(Ordering::Acquire) + 1;
        if spare.as_ref().is_some_and(|s| s.id == next) {
            return;
        }
        // One for another segment cannot be left (a roll takes or drops it); it is dropped.
        spare.take();
        match create_segment(&self.shared.dir, next, self.shared.segment_size) {
            Ok((file, tail)) => {
                *spare = Some(Spare {
                    id: next,
                    file,
                    tail,
                })
            }
            Err(error) => {
                tracing::debug!("could not create commit log segment {next} ahead: {error}")
            }
        }
    }

    /// Removes the unused next segment (a closed log leaves only segments it wrote to).
    fn discard_spare(&self) {
        if let Some(spare) = self.shared.spare.lock().take() {
            let path = spare.file.path.clone();
            drop(spare);
            if let Err(e) = std::fs::remove_file(&path) {
                tracing::debug!(
                    "could not remove the unused commit log segment {}: {e}",
                    path.display()
                );
            }
        }
    }

    /// How long to wait for requests before checking whether a sync is due.
    fn wait_limit(&self) -> Duration {
        let deadline = match self.mode {
            CommitlogSync::Batch if !self.waiting.is_empty() => self.last_sync,
            CommitlogSync::Group { window } if !self.waiting.is_empty() => self.last_sync + window,
            CommitlogSync::Periodic { period } => self.last_sync + period,
            CommitlogSync::Batch | CommitlogSync::Group { .. } => return DEFAULT_PERIOD,
        };
        deadline.saturating_duration_since(Instant::now())
    }

    /// Whether the writers waiting (or the period) call for a sync round; after a failure the
    /// round answers them with it.
    fn sync_due(&self) -> bool {
        match self.mode {
            CommitlogSync::Batch => !self.waiting.is_empty(),
            CommitlogSync::Group { window } => {
                !self.waiting.is_empty() && self.last_sync + window <= Instant::now()
            }
            CommitlogSync::Periodic { period } => self.last_sync + period <= Instant::now(),
        }
    }

    fn failed(&self) -> bool {
        self.shared.state.lock().failed.is_some()
    }

    /// Cuts the segments retired by rolls to their written length and syncs them (their last
    /// records may not be synced yet).
    fn sync_retired(&self) -> Result<()> {
        let retired = std::mem::take(&mut self.shared.state.lock().retired);
        let mut outcome = Ok(());
        for Retired { segment, len } in retired {
            let synced = self.record(segment.truncate(len).and_then(|()| segment.sync()));
            outcome = outcome.and(synced);
        }
        outcome
    }

    /// Counts a finished fsync, or applies `commit_failure_policy` to its failure.
    fn record(&self, synced: Result<()>) -> Result<()> {
        match synced {
            Ok(()) => {
                self.shared.syncs.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(error) => {
                self.shared.state.lock().fail(&error, &self.shared.health);
                Err(error)
            }
        }
    }

    fn recycle(&mut self, below: u64) {
        if self.failed() {
            return;
        }
        if let Err(error) = self.delete_below(below) {
            tracing::warn!("could not delete old commit log segments: {error}");
        }
    }

    /// Deletes segments with ids below `below`, except the current one.
    fn delete_below(&self, below: u64) -> Result<()> {
        let current = self.shared.state.lock().segment;
        let mut oldest = current;
        for segment in list_segments(&self.shared.dir)? {
            if segment.id < below && segment.id != current {
                std::fs::remove_file(&segment.path)
                    .map_err(|e| StorageError::io(&segment.path, e))?;
                tracing::debug!("deleted commit log segment {}", segment.path.display());
            } else {
                oldest = oldest.min(segment.id);
            }
        }
        self.shared.oldest.store(oldest, Ordering::Relaxed);
        Ok(())
    }

    /// Fsyncs the retired segments, and the current one if anything was written since the
    /// last fsync, then answers the writers waiting for it: with the failure of this round
    /// (the write is not durable; under `ignore` the next round tries again) or the one that
    /// stopped the log.
    fn sync(&mut self) -> Result<()> {
        let mut outcome = self.sync_retired();
        if self.shared.dirty.swap(false, Ordering::AcqRel) && !self.failed() {
            let current = Arc::clone(&self.shared.state.lock().file);
            let synced = self.record(current.sync());
            if synced.is_err() {
                self.shared.dirty.store(true, Ordering::Release);
            }
            outcome = outcome.and(synced);
        }
        self.last_sync = Instant::now();
        let waiting = std::mem::take(&mut self.waiting);
        self.reply_all(waiting, &outcome);
        outcome
    }

    fn reply_all(&self, acks: Vec<Ack>, outcome: &Result<()>) {
        let stopped = self
            .shared
            .state
            .lock()
            .failed
            .as_ref()
            .map(|e| e.duplicate());
        let failure = stopped.or_else(|| outcome.as_ref().err().map(|e| e.duplicate()));
        for ack in acks {
            let result = match &failure {
                Some(error) => Err(super::unavailable(error)),
                None => Ok(()),
            };
            let _ = ack.send(result);
        }
    }
}
