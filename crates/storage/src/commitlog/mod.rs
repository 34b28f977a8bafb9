//! The commit log: every write is appended here before it reaches a memtable, so that replay
//! after a crash restores all acknowledged data. Segment files hold checksummed records; one
//! dedicated thread writes and fsyncs them according to the configured sync mode.

mod replay;
mod segment;
mod writer;

pub use replay::{read_segment, Record, SegmentContents};
pub use segment::{last_written, list_segments, SegmentFile, FORMAT_VERSION};

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

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
pub struct Durable(oneshot::Receiver<Result<()>>);

impl Durable {
    pub async fn wait(self) -> Result<()> {
        self.0.await.map_err(|_| StorageError::Closed)?
    }
}

/// Handle to the commit log of one node.
pub struct CommitLog {
    requests: mpsc::Sender<Request>,
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
        let existing = list_segments(dir)?;
        let first_id = existing.last().map_or(1, |s| s.id + 1);
        let syncs = Arc::new(AtomicU64::new(0));
        let segment = SegmentWriter::create(dir, first_id, segment_size, syncs.clone())?;
        let (requests, receiver) = mpsc::channel();
        let writer = Writer::new(segment, mode);
        std::thread::Builder::new()
            .name("commitlog".to_string())
            .spawn(move || writer.run(receiver))
            .map_err(|e| StorageError::io(dir, e))?;
        let log = CommitLog {
            requests,
            syncs,
            max_record: usize::try_from(segment_size / 2).unwrap_or(usize::MAX),
        };
        Ok((log, existing))
    }

    /// Queues one record; await the result to know it is durable.
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
        self.requests
            .send(Request::Write { frame, ack })
            .map_err(|_| StorageError::Closed)?;
        Ok(Durable(done))
    }

    /// Syncs everything written and stops the commit-log thread.
    pub async fn shutdown(&self) -> Result<()> {
        let (ack, done) = oneshot::channel();
        self.requests
            .send(Request::Shutdown { ack })
            .map_err(|_| StorageError::Closed)?;
        Durable(done).wait().await
    }

    /// Number of fsyncs of segment data so far.
    pub fn sync_count(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
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
