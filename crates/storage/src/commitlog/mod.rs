//! The commit log: every write is appended here before it reaches a memtable, so that replay
//! after a crash restores all acknowledged data. Segment files hold checksummed records.
//!
//! Writers append their own records: [`CommitLog::append`] assigns the position and copies the
//! frame into the mapped segment ([`mapped`]) under one lock, so an appended record is with the
//! OS (it survives a crash of the process) before `append` returns, with no system call and no
//! hand-off to another thread. Every writer waits while one holds that lock, so what used to be
//! slow under it no longer runs there: written pages are unmapped after it is released, and the
//! next segment is created ahead of time by the sync thread (a roll only swaps it in; it creates
//! one itself only when none is ready), since creating a file, allocating its space and syncing
//! the directory took milliseconds with every writer waiting. Waits for the lock over 5 ms are
//! logged at debug level.
//! A dedicated thread ([`syncer`]) fsyncs per the sync mode,
//! acknowledges the writers of `batch` and `group` modes after the fsync covering them, cuts
//! retired segments to length and syncs them, and deletes the segments whose data every table
//! has flushed ([`CommitLog::recycle`]).

mod mapped;
mod position;
mod replay;
mod segment;
mod syncer;

pub use position::Position;
pub use replay::{read_segment, Record, SegmentContents};
pub use segment::{last_written, list_segments, SegmentFile, FORMAT_VERSION};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::backoff::Backoff;
use crate::error::{Result, StorageError};
use crate::health::Health;
use crate::waited::take_timed;
use mapped::{create_segment, OpenSegment, Tail};
use segment::{frame_parts, HEADER_LEN, TRAILER_LEN};
use syncer::{Request, Retired, Spare, Syncer};

/// The pause before creating a segment again after a failure (`commit_failure_policy:
/// ignore`); it doubles with each failure in a row up to [`MAX_ROLL_RETRY`].
const FIRST_ROLL_RETRY: Duration = Duration::from_millis(100);
const MAX_ROLL_RETRY: Duration = Duration::from_secs(5);

/// Waits and roll times above this are logged (at debug level) as a stall of the write path.
const SLOW: Duration = Duration::from_millis(5);

/// Default `commitlog_segment_size`: 32 MiB.
pub const DEFAULT_SEGMENT_SIZE: u64 = 32 * 1024 * 1024;

/// When appends are acknowledged, as Cassandra's `commitlog_sync`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitlogSync {
    /// Acknowledge once written to the OS; fsync in the background every `period`.
    Periodic { period: Duration },
    /// Acknowledge only after an fsync; concurrent writers share fsyncs.
    Batch,
    /// Fsync at most every `window`; acknowledge after the fsync covering the write.
    Group { window: Duration },
}

impl Default for CommitlogSync {
    fn default() -> Self {
        CommitlogSync::Periodic {
            period: syncer::DEFAULT_PERIOD,
        }
    }
}

/// Resolves once an appended record is durable per the sync mode.
#[must_use = "an append is only durable once awaited"]
pub struct Durable {
    /// None when the record needs no fsync before acknowledgement (periodic mode).
    done: Option<oneshot::Receiver<Result<()>>>,
    position: Position,
}

impl Durable {
    pub async fn wait(self) -> Result<()> {
        match self.done {
            Some(done) => done.await.map_err(|_| StorageError::Closed)?,
            None => Ok(()),
        }
    }

    /// Where the record starts.
    pub fn position(&self) -> Position {
        self.position
    }
}

/// The segment being filled, shared by the appenders and the sync thread.
struct State {
    segment: u64,
    /// The current segment's mapping and the bytes written to it.
    tail: Tail,
    file: Arc<OpenSegment>,
    /// Segments rolled away from and not yet truncated and synced by the sync thread.
    retired: Vec<Retired>,
    /// Set by shutdown: later appends fail with `Closed`.
    closed: bool,
    /// Set after an I/O failure unless `commit_failure_policy` is `ignore`: the log accepts no
    /// more writes.
    failed: Option<StorageError>,
    /// Paces new attempts to create a segment after one failed (under `ignore`).
    roll_backoff: Backoff,
    /// Why the last segment creation failed, answered to the writes until the next attempt.
    roll_error: Option<StorageError>,
}

impl State {
    /// Applies `commit_failure_policy` to `error`: the log stops unless the policy is `ignore`.
    fn fail(&mut self, error: &StorageError, health: &Health) {
        if self.failed.is_none() && !health.commit_error(error) {
            self.failed = Some(error.duplicate());
        }
    }
}

/// What the appenders and the sync thread share.
struct Shared {
    dir: PathBuf,
    state: Mutex<State>,
    /// Whether records were written since the last fsync.
    dirty: AtomicBool,
    /// Smallest segment id still on disk (updated by recycling).
    oldest: AtomicU64,
    syncs: AtomicU64,
    /// `commit_failure_policy` and the node's reaction to it.
    health: Arc<Health>,
    segment_size: u64,
    /// The next segment, created ahead by the sync thread. Lock order: `state`, then `spare`.
    spare: Mutex<Option<Spare>>,
    /// `State::segment`, for the sync thread to read while it holds `spare` but not `state`
    /// (written under both).
    segment: AtomicU64,
}

/// What a write gets when the commit log cannot take it because of `error`.
fn unavailable(error: &StorageError) -> StorageError {
    StorageError::CommitLogUnavailable(error.to_string())
}

/// Handle to the commit log of one node.
pub struct CommitLog {
    shared: Arc<Shared>,
    requests: mpsc::Sender<Request>,
    /// The sync thread, joined when the log is dropped.
    thread: Option<std::thread::JoinHandle<()>>,
    mode: CommitlogSync,
    segment_size: u64,
    max_record: usize,
}

impl CommitLog {
    /// Starts a log in `dir` (which must exist) writing to a new segment after any existing
    /// ones; returns those existing segments, which hold the data to replay. A failure stops
    /// the log (`commit_failure_policy: stop` with nobody to stop transports for).
    pub fn open(
        dir: &Path,
        mode: CommitlogSync,
        segment_size: u64,
    ) -> Result<(CommitLog, Vec<SegmentFile>)> {
        CommitLog::open_with_health(dir, mode, segment_size, Arc::new(Health::default()))
    }

    /// [`open`](Self::open), failures handled per `health`'s `commit_failure_policy`.
    pub fn open_with_health(
        dir: &Path,
        mode: CommitlogSync,
        segment_size: u64,
        health: Arc<Health>,
    ) -> Result<(CommitLog, Vec<SegmentFile>)> {
        let segment_size = segment_size.clamp(1, u64::from(u32::MAX));
        let existing = list_segments(dir)?;
        let first_id = existing.last().map_or(1, |s| s.id + 1);
        let oldest = existing.first().map_or(first_id, |s| s.id);
        let (file, tail) = create_segment(dir, first_id, segment_size)?;
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            state: Mutex::new(State {
                segment: first_id,
                tail,
                file: Arc::new(file),
                retired: Vec::new(),
                closed: false,
                failed: None,
                roll_backoff: Backoff::new(FIRST_ROLL_RETRY, MAX_ROLL_RETRY),
                roll_error: None,
            }),
            dirty: AtomicBool::new(false),
            oldest: AtomicU64::new(oldest),
            syncs: AtomicU64::new(0),
            health,
            segment_size,
            spare: Mutex::new(None),
            segment: AtomicU64::new(first_id),
        });
        let (requests, receiver) = mpsc::channel();
        let syncer = Syncer::new(Arc::clone(&shared), mode);
        let thread = std::thread::Builder::new()
            .name("commitlog".to_string())
            .spawn(move || syncer.run(receiver))
            .map_err(|e| StorageError::io(dir, e))?;
        let log = CommitLog {
            shared,
            requests,
            thread: Some(thread),
            mode,
            segment_size,
            max_record: usize::try_from(segment_size / 2).unwrap_or(usize::MAX),
        };
        Ok((log, existing))
    }

    /// Writes one record at the next position (the OS has it when this returns); await the
    /// result to know it is durable per the sync mode.
    pub fn append(&self, payload: &[u8]) -> Result<Durable> {
        let size = HEADER_LEN + payload.len() + TRAILER_LEN;
        if size > self.max_record {
            return Err(StorageError::TooLarge {
                size,
                max: self.max_record,
            });
        }
        let position = self.write(payload)?;
        let done = match self.mode {
            CommitlogSync::Periodic { .. } => None,
            CommitlogSync::Batch | CommitlogSync::Group { .. } => {
                let (ack, done) = oneshot::channel();
                self.requests
                    .send(Request::Sync { ack })
                    .map_err(|_| StorageError::Closed)?;
                Some(done)
            }
        };
        Ok(Durable { done, position })
    }

    /// Durable once every record written so far is (at once in periodic mode, where no
    /// acknowledgement waits for an fsync).
    pub fn sync_written(&self) -> Result<Durable> {
        let position = self.current_position();
        let done = match self.mode {
            CommitlogSync::Periodic { .. } => None,
            CommitlogSync::Batch | CommitlogSync::Group { .. } => {
                let (ack, done) = oneshot::channel();
                self.requests
                    .send(Request::Sync { ack })
                    .map_err(|_| StorageError::Closed)?;
                Some(done)
            }
        };
        Ok(Durable { done, position })
    }

    /// Appends the frame of `payload` to the current segment (rolling to a new one when it is
    /// full). The checksums are computed before taking the lock.
    fn write(&self, payload: &[u8]) -> Result<Position> {
        let (header, trailer) = frame_parts(payload);
        let size = (HEADER_LEN + payload.len() + TRAILER_LEN) as u64;
        let shared = &self.shared.state;
        let (mut state, waited) = take_timed(|| shared.try_lock(), || shared.lock());
        if state.closed {
            return Err(StorageError::Closed);
        }
        if let Some(error) = &state.failed {
            return Err(unavailable(error));
        }
        let written = state.tail.written();
        if written > 0 && written + size > self.segment_size {
            self.roll(&mut state)?;
        }
        let position = Position::new(state.segment, state.tail.written());
        if state.tail.put(&header, payload, &trailer).is_none() {
            // Unreachable while records are at most half a segment; refuse rather than panic.
            return Err(StorageError::TooLarge {
                size: size as usize,
                max: self.max_record,
            });
        }
        self.shared.dirty.store(true, Ordering::Release);
        let release = state.tail.take_release();
        drop(state);
        if waited > SLOW {
            tracing::debug!("commit log: a write waited {waited:?} for the log's lock");
        }
        if let Some(release) = release {
            release.run();
        }
        Ok(position)
    }

    /// Starts the next segment; the sync thread syncs the retired one (before it answers any
    /// later sync request). After a failure (under `ignore`) the writes get that failure
    /// without a new attempt until the [`Backoff`] pause is over.
    fn roll(&self, state: &mut State) -> Result<()> {
        let now = Instant::now();
        if let Some(error) = state
            .roll_error
            .as_ref()
            .filter(|_| !state.roll_backoff.ready(now))
        {
            return Err(unavailable(error));
        }
        let next = state.segment + 1;
        let mut spare = self.shared.spare.lock();
        // A prepared segment whose file is gone (with a lost directory) stays where it is, in
        // case the directory comes back with it; the write creates one, so that the failure shows.
        let usable = spare
            .as_ref()
            .is_some_and(|s| s.id == next && s.file.path.exists());
        let prepared = usable;
        let created = match spare.take() {
            Some(s) if usable => Ok((s.file, s.tail)),
            left => {
                let made = create_segment(&self.shared.dir, next, self.segment_size);
                if made.is_err() {
                    *spare = left;
                }
                // Else what was left is dropped, not deleted: its path is the new segment's.
                made
            }
        };
        let (file, tail) = match created {
            Ok(created) => created,
            Err(error) => {
                state.roll_backoff.failed(now);
                state.fail(&error, &self.shared.health);
                let answer = unavailable(&error);
                state.roll_error = Some(error);
                return Err(answer);
            }
        };
        state.roll_backoff.succeeded();
        state.roll_error = None;
        // The old mapping is dropped (unmapped) here, or by a `Release` still running on it;
        // the sync thread truncates its file only at or beyond the bytes written.
        let len = std::mem::replace(&mut state.tail, tail).written();
        let segment = std::mem::replace(&mut state.file, Arc::new(file));
        state.retired.push(Retired { segment, len });
        state.segment = next;
        self.shared.segment.store(next, Ordering::Release);
        drop(spare);
        let took = now.elapsed();
        if took > SLOW {
            tracing::debug!(
                "commit log: starting segment {next} took {took:?} with the log locked ({})",
                if prepared {
                    "prepared ahead"
                } else {
                    "created by the write"
                }
            );
        }
        // The sync thread syncs the retired segment and prepares the next one.
        let _ = self.requests.send(Request::Retired);
        Ok(())
    }

    /// The position the next record will have (or a later one).
    pub fn current_position(&self) -> Position {
        let state = self.shared.state.lock();
        Position::new(state.segment, state.tail.written())
    }

    /// Deletes the segments before segment `below` (never the one being written).
    pub fn recycle(&self, below: u64) {
        if self.shared.oldest.load(Ordering::Relaxed) < below {
            // A closed log keeps its segments; they are replayed at the next start.
            let _ = self.requests.send(Request::Recycle { below });
        }
    }

    /// Approximate bytes of the segments on disk.
    pub fn disk_bytes(&self) -> u64 {
        let current = self.shared.state.lock().segment;
        let oldest = self.shared.oldest.load(Ordering::Relaxed).min(current);
        (current - oldest + 1) * self.segment_size
    }

    /// Syncs everything written, refuses later appends and stops the sync thread.
    pub async fn shutdown(&self) -> Result<()> {
        self.shared.state.lock().closed = true;
        let (ack, done) = oneshot::channel();
        self.requests
            .send(Request::Shutdown { ack })
            .map_err(|_| StorageError::Closed)?;
        done.await.map_err(|_| StorageError::Closed)?
    }

    /// Number of fsyncs of segment data so far.
    pub fn sync_count(&self) -> u64 {
        self.shared.syncs.load(Ordering::Relaxed)
    }
}

impl Drop for CommitLog {
    /// Waits for the sync thread to finish what was queued, so no segment is synced or
    /// deleted after the log is gone (a log reopened in the same process must see its files
    /// settled).
    fn drop(&mut self) {
        let (ack, _) = oneshot::channel();
        let _ = self.requests.send(Request::Shutdown { ack });
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::error!("the commit-log thread panicked");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Periodic mode whose fsync never comes due within a test.
    const PERIODIC_NEVER_DUE: CommitlogSync = CommitlogSync::Periodic {
        period: Duration::from_secs(3600),
    };

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime")
    }

    #[test]
    fn periodic_mode_acks_before_fsync_and_shutdown_syncs() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mode = PERIODIC_NEVER_DUE;
        let (log, existing) = CommitLog::open(tmp.path(), mode, 1 << 20).expect("open");
        assert!(existing.is_empty());
        runtime().block_on(async {
            for _ in 0..20 {
                log.append(b"record")
                    .expect("queue")
                    .wait()
                    .await
                    .expect("ack");
            }
            assert_eq!(log.sync_count(), 0);
            log.shutdown().await.expect("shutdown");
            assert_eq!(log.sync_count(), 1);
            assert!(matches!(log.append(b"late"), Err(StorageError::Closed)));
        });
        let segments = list_segments(tmp.path()).expect("list");
        let contents = read_segment(&segments[0].path, true, false).expect("read");
        assert_eq!(contents.records.len(), 20);
    }

    #[test]
    fn group_mode_acks_after_a_sync() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mode = CommitlogSync::Group {
            window: Duration::from_millis(20),
        };
        let (log, _) = CommitLog::open(tmp.path(), mode, 1 << 20).expect("open");
        runtime().block_on(async {
            for n in 1..=3 {
                log.append(b"record")
                    .expect("queue")
                    .wait()
                    .await
                    .expect("ack");
                assert!(log.sync_count() >= n);
            }
        });
        let (_, existing) = CommitLog::open(tmp.path(), mode, 1 << 20).expect("reopen");
        // The segment written to, and the next one, prepared ahead and empty (as after a crash).
        let written = existing
            .iter()
            .filter(|s| {
                !read_segment(&s.path, true, false)
                    .expect("read")
                    .records
                    .is_empty()
            })
            .count();
        assert_eq!((existing.len(), written), (2, 1));
    }

    /// An acknowledged record is in the file already (another reader of the file sees it, so
    /// it survives a crash of the process) even before any fsync.
    #[test]
    fn periodic_acks_come_after_the_record_is_in_the_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mode = PERIODIC_NEVER_DUE;
        let (log, _) = CommitLog::open(tmp.path(), mode, 1 << 20).expect("open");
        let path = list_segments(tmp.path()).expect("list")[0].path.clone();
        runtime().block_on(async {
            let queued: Vec<Durable> = (0..50u8)
                .map(|i| log.append(&[i; 30]).expect("queue"))
                .collect();
            for (i, durable) in queued.into_iter().enumerate() {
                let at = durable.position().offset as usize;
                durable.wait().await.expect("ack");
                let bytes = std::fs::read(&path).expect("segment");
                let (payload, _) = segment::unframe(&bytes[at..]).expect("record in the file");
                assert_eq!(payload, &[i as u8; 30][..]);
            }
        });
        assert_eq!(log.sync_count(), 0);
    }

    /// Rolled-away segments are cut to the bytes written; the current one keeps its zero tail,
    /// and replay reads both back.
    #[test]
    fn retired_segments_are_truncated_and_all_replay() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (log, _) = CommitLog::open(tmp.path(), CommitlogSync::Batch, 100).expect("open");
        runtime().block_on(async {
            for i in 0..5u8 {
                let durable = log.append(&[i; 30]).expect("queue");
                durable.wait().await.expect("ack");
            }
        });
        drop(log);
        let segments = list_segments(tmp.path()).expect("list");
        let lens: Vec<u64> = segments
            .iter()
            .map(|s| std::fs::metadata(&s.path).expect("meta").len())
            .collect();
        assert_eq!(
            lens,
            vec![84, 84, 100],
            "two records of 42 bytes per segment"
        );
        let last = segments.len() - 1;
        let replayed: Vec<Vec<u8>> = segments
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                read_segment(&s.path, i == last, false)
                    .expect("read")
                    .records
            })
            .map(|r| r.payload)
            .collect();
        let expected: Vec<Vec<u8>> = (0..5u8).map(|i| vec![i; 30]).collect();
        assert_eq!(replayed, expected);
    }

    /// Regression: the commit-log thread used to outlive a dropped log and delete segments
    /// while a log reopened in the same process was replaying them.
    #[test]
    fn dropping_the_log_finishes_queued_recycling() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (log, _) = CommitLog::open(tmp.path(), CommitlogSync::Batch, 64).expect("open");
        runtime().block_on(async {
            for _ in 0..8 {
                let record = [7u8; 20];
                log.append(&record)
                    .expect("queue")
                    .wait()
                    .await
                    .expect("ack");
            }
        });
        let current = log.current_position().segment;
        assert!(current >= 3, "records spread over several segments");
        log.recycle(current);
        drop(log);
        let left: Vec<u64> = list_segments(tmp.path())
            .expect("list")
            .iter()
            .map(|s| s.id)
            .collect();
        assert_eq!(left, vec![current]);
    }

    /// The sync thread creates the segment after the current one ahead of time (a roll swaps
    /// it in instead of creating a file with every writer waiting), prepares the next after a
    /// roll, and removes the unused one when the log closes.
    #[test]
    fn the_next_segment_is_prepared_ahead_and_removed_at_shutdown() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let ids = || -> Vec<u64> {
            list_segments(tmp.path())
                .expect("list")
                .iter()
                .map(|s| s.id)
                .collect()
        };
        let settled = |want: Vec<u64>| {
            let deadline = Instant::now() + Duration::from_secs(10);
            while ids() != want && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            assert_eq!(ids(), want);
        };
        let (log, _) = CommitLog::open(tmp.path(), CommitlogSync::Batch, 100).expect("open");
        settled(vec![1, 2]);
        runtime().block_on(async {
            for i in 0..3u8 {
                log.append(&[i; 30])
                    .expect("queue")
                    .wait()
                    .await
                    .expect("ack");
            }
        });
        assert_eq!(log.current_position().segment, 2);
        settled(vec![1, 2, 3]);
        drop(log);
        assert_eq!(ids(), vec![1, 2]);
    }

    #[test]
    fn oversized_records_are_rejected() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (log, _) = CommitLog::open(tmp.path(), CommitlogSync::Batch, 100).expect("open");
        assert!(matches!(
            log.append(&[0u8; 60]),
            Err(StorageError::TooLarge { max: 50, .. })
        ));
    }
}
