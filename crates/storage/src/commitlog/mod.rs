//! The commit log: every write is appended here before it reaches a memtable, so that replay
//! after a crash restores all acknowledged data. Segment files hold checksummed records; one
//! dedicated thread writes and fsyncs them according to the configured sync mode.
//!
//! Positions are assigned when a record is queued ([`CommitLog::append`]), so the caller knows
//! where its record will land; the thread follows them, starting a new segment when a record's
//! position names one. Segments whose data every table has flushed are deleted on request
//! ([`CommitLog::recycle`]).

mod position;
mod replay;
mod segment;
mod writer;

pub use position::Position;
pub use replay::{read_segment, Record, SegmentContents};
pub use segment::{last_written, list_segments, SegmentFile, FORMAT_VERSION};

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::error::{Result, StorageError};
use segment::{frame, HEADER_LEN, TRAILER_LEN};
use writer::{Request, SegmentWriter, Writer};

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
            period: writer::DEFAULT_PERIOD,
        }
    }
}

/// Resolves once an appended record is durable per the sync mode.
#[must_use = "an append is only durable once awaited"]
pub struct Durable {
    done: oneshot::Receiver<Result<()>>,
    position: Position,
}

impl Durable {
    pub async fn wait(self) -> Result<()> {
        self.done.await.map_err(|_| StorageError::Closed)?
    }

    /// Where the record starts.
    pub fn position(&self) -> Position {
        self.position
    }
}

/// Where the next record goes: the segment being filled and the bytes queued for it.
struct Allocator {
    segment: u64,
    written: u64,
}

/// Handle to the commit log of one node.
pub struct CommitLog {
    requests: mpsc::Sender<Request>,
    /// The commit-log thread, joined when the log is dropped.
    thread: Option<std::thread::JoinHandle<()>>,
    alloc: Mutex<Allocator>,
    segment_size: u64,
    /// Smallest segment id still on disk (updated by recycling).
    oldest: Arc<AtomicU64>,
    syncs: Arc<AtomicU64>,
    max_record: usize,
}

impl CommitLog {
    /// Starts a log in `dir` (which must exist) writing to a new segment after any existing
    /// ones; returns those existing segments, which hold the data to replay.
    pub fn open(
        dir: &Path,
        mode: CommitlogSync,
        segment_size: u64,
    ) -> Result<(CommitLog, Vec<SegmentFile>)> {
        let segment_size = segment_size.clamp(1, u64::from(u32::MAX));
        let existing = list_segments(dir)?;
        let first_id = existing.last().map_or(1, |s| s.id + 1);
        let oldest = existing.first().map_or(first_id, |s| s.id);
        let oldest = Arc::new(AtomicU64::new(oldest));
        let syncs = Arc::new(AtomicU64::new(0));
        let segment = SegmentWriter::create(dir, first_id, syncs.clone(), oldest.clone())?;
        let (requests, receiver) = mpsc::channel();
        let writer = Writer::new(segment, mode);
        let thread = std::thread::Builder::new()
            .name("commitlog".to_string())
            .spawn(move || writer.run(receiver))
            .map_err(|e| StorageError::io(dir, e))?;
        let log = CommitLog {
            requests,
            thread: Some(thread),
            alloc: Mutex::new(Allocator {
                segment: first_id,
                written: 0,
            }),
            segment_size,
            oldest,
            syncs,
            max_record: usize::try_from(segment_size / 2).unwrap_or(usize::MAX),
        };
        Ok((log, existing))
    }

    /// Queues one record at the next position; await the result to know it is durable.
    pub fn append(&self, payload: &[u8]) -> Result<Durable> {
        let size = HEADER_LEN + payload.len() + TRAILER_LEN;
        if size > self.max_record {
            return Err(StorageError::TooLarge {
                size,
                max: self.max_record,
            });
        }
        let (ack, done) = oneshot::channel();
        let frame = frame(payload);
        let mut alloc = self.alloc.lock();
        if alloc.written > 0 && alloc.written + size as u64 > self.segment_size {
            alloc.segment += 1;
            alloc.written = 0;
        }
        let position = Position::new(alloc.segment, alloc.written);
        self.requests
            .send(Request::Write {
                frame,
                segment: position.segment,
                ack,
            })
            .map_err(|_| StorageError::Closed)?;
        alloc.written += size as u64;
        Ok(Durable { done, position })
    }

    /// The position the next record will have (or a later one).
    pub fn current_position(&self) -> Position {
        let alloc = self.alloc.lock();
        Position::new(alloc.segment, alloc.written)
    }

    /// Deletes the segments before segment `below` (never the one being written).
    pub fn recycle(&self, below: u64) {
        if self.oldest.load(Ordering::Relaxed) < below {
            // A closed log keeps its segments; they are replayed at the next start.
            let _ = self.requests.send(Request::Recycle { below });
        }
    }

    /// Approximate bytes of the segments on disk.
    pub fn disk_bytes(&self) -> u64 {
        let current = self.alloc.lock().segment;
        let oldest = self.oldest.load(Ordering::Relaxed).min(current);
        (current - oldest + 1) * self.segment_size
    }

    /// Syncs everything written and stops the commit-log thread.
    pub async fn shutdown(&self) -> Result<()> {
        let (ack, done) = oneshot::channel();
        self.requests
            .send(Request::Shutdown { ack })
            .map_err(|_| StorageError::Closed)?;
        Durable {
            done,
            position: self.current_position(),
        }
        .wait()
        .await
    }

    /// Number of fsyncs of segment data so far.
    pub fn sync_count(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }
}

impl Drop for CommitLog {
    /// Waits for the commit-log thread to finish what was queued, so no segment is written or
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

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime")
    }

    #[test]
    fn periodic_mode_acks_before_fsync_and_shutdown_syncs() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mode = CommitlogSync::Periodic {
            period: Duration::from_secs(3600),
        };
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
        assert_eq!(existing.len(), 1);
    }

    /// Records are written out in batches; an acknowledged record is in the file already
    /// (it survives a crash of the process) even before any fsync.
    #[test]
    fn periodic_acks_come_after_the_record_is_in_the_file() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mode = CommitlogSync::Periodic {
            period: Duration::from_secs(3600),
        };
        let (log, _) = CommitLog::open(tmp.path(), mode, 1 << 20).expect("open");
        let path = list_segments(tmp.path()).expect("list")[0].path.clone();
        runtime().block_on(async {
            let queued: Vec<Durable> = (0..50)
                .map(|_| log.append(b"record").expect("queue"))
                .collect();
            for durable in queued {
                let end = durable.position().offset;
                durable.wait().await.expect("ack");
                let len = std::fs::metadata(&path).expect("segment").len();
                assert!(
                    len > end,
                    "acknowledged record at {end} not in the file ({len} bytes)"
                );
            }
        });
        assert_eq!(log.sync_count(), 0);
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
