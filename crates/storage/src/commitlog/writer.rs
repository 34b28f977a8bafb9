//! The dedicated commit-log thread: appends records to the segment their position names (rolling
//! to it when it changes), fsyncs per the sync mode, acknowledges writers once their data is
//! durable enough, and deletes segments no table needs any more.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::segment::{list_segments, segment_name};
use super::CommitlogSync;
use crate::error::{Result, StorageError};

/// Acknowledgement channel of one request.
pub type Ack = oneshot::Sender<Result<()>>;

/// Buffered bytes past which records are written out before the batch ends.
const MAX_BUFFERED: usize = 1 << 20;

/// Work for the commit-log thread.
pub enum Request {
    /// Append one framed record to segment `segment` (the current one or a new one).
    Write {
        frame: Vec<u8>,
        segment: u64,
        ack: Ack,
    },
    /// Delete the segments with ids below `below`, except the current one.
    Recycle { below: u64 },
    /// Sync everything written so far and stop.
    Shutdown { ack: Ack },
}

/// The segment currently being appended to.
pub struct SegmentWriter {
    dir: PathBuf,
    id: u64,
    file: File,
    path: PathBuf,
    syncs: Arc<AtomicU64>,
    /// Smallest segment id on disk, published for size accounting.
    oldest: Arc<AtomicU64>,
    /// Frames appended but not yet written to the file: one `write` per batch of requests
    /// instead of one per record.
    buffer: Vec<u8>,
}

impl SegmentWriter {
    /// Creates segment `id` in `dir`.
    pub fn create(
        dir: &Path,
        id: u64,
        syncs: Arc<AtomicU64>,
        oldest: Arc<AtomicU64>,
    ) -> Result<Self> {
        let (file, path) = create_segment(dir, id)?;
        Ok(SegmentWriter {
            dir: dir.to_path_buf(),
            id,
            file,
            path,
            syncs,
            oldest,
            buffer: Vec::new(),
        })
    }

    /// Appends a framed record to segment `segment`, starting it first if it is a new one. The
    /// record reaches the file at the next [`write_out`](Self::write_out).
    fn append(&mut self, frame: &[u8], segment: u64) -> Result<()> {
        if segment != self.id {
            self.roll(segment)?;
        }
        self.buffer.extend_from_slice(frame);
        if self.buffer.len() >= MAX_BUFFERED {
            self.write_out()?;
        }
        Ok(())
    }

    /// Writes the buffered records to the segment file (the OS has them: they survive a
    /// process crash).
    fn write_out(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let written = self.file.write_all(&self.buffer);
        self.buffer.clear();
        written.map_err(|e| StorageError::io(&self.path, e))
    }

    /// Deletes segments with ids below `below`, except the current one.
    fn recycle(&mut self, below: u64) -> Result<()> {
        let mut oldest = self.id;
        for segment in list_segments(&self.dir)? {
            if segment.id < below && segment.id != self.id {
                std::fs::remove_file(&segment.path)
                    .map_err(|e| StorageError::io(&segment.path, e))?;
                tracing::debug!("deleted commit log segment {}", segment.path.display());
            } else {
                oldest = oldest.min(segment.id);
            }
        }
        self.oldest.store(oldest, Ordering::Relaxed);
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.write_out()?;
        self.file
            .sync_data()
            .map_err(|e| StorageError::io(&self.path, e))?;
        self.syncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn roll(&mut self, id: u64) -> Result<()> {
        self.sync()?;
        let (file, path) = create_segment(&self.dir, id)?;
        self.file = file;
        self.path = path;
        self.id = id;
        Ok(())
    }
}

fn create_segment(dir: &Path, id: u64) -> Result<(File, PathBuf)> {
    let path = dir.join(segment_name(id));
    let file = OpenOptions::new()
        .append(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| StorageError::io(&path, e))?;
    // Make the new directory entry itself durable.
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StorageError::io(dir, e))?;
    Ok((file, path))
}

/// State of the commit-log thread.
pub struct Writer {
    segment: SegmentWriter,
    mode: CommitlogSync,
    /// Writers waiting for the next fsync.
    waiting: Vec<Ack>,
    /// Writers (periodic mode) waiting for their records to be written out.
    unwritten: Vec<Ack>,
    dirty: bool,
    last_sync: Instant,
    /// Set after an I/O failure: the log stops accepting writes (commit_failure_policy "stop").
    failed: Option<StorageError>,
}

impl Writer {
    pub fn new(segment: SegmentWriter, mode: CommitlogSync) -> Self {
        Writer {
            segment,
            mode,
            waiting: Vec::new(),
            unwritten: Vec::new(),
            dirty: false,
            last_sync: Instant::now(),
            failed: None,
        }
    }

    /// Serves requests until shutdown or until every sender is gone.
    pub fn run(mut self, requests: Receiver<Request>) {
        loop {
            let first = match self.sync_deadline() {
                Some(deadline) => {
                    match requests.recv_timeout(deadline.saturating_duration_since(Instant::now()))
                    {
                        Ok(request) => Some(request),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
                None => match requests.recv() {
                    Ok(request) => Some(request),
                    Err(_) => break,
                },
            };
            let mut shutdowns = Vec::new();
            for request in first
                .into_iter()
                .chain(std::iter::from_fn(|| requests.try_recv().ok()))
            {
                match request {
                    Request::Write {
                        frame,
                        segment,
                        ack,
                    } => self.write(&frame, segment, ack),
                    Request::Recycle { below } => self.recycle(below),
                    Request::Shutdown { ack } => shutdowns.push(ack),
                }
            }
            self.write_out();
            if !shutdowns.is_empty() || self.sync_due() {
                self.sync();
            }
            if !shutdowns.is_empty() {
                self.reply_all(shutdowns);
                return;
            }
        }
        self.sync();
    }

    fn write(&mut self, frame: &[u8], segment: u64, ack: Ack) {
        if let Err(error) = self.try_write(frame, segment) {
            let _ = ack.send(Err(error));
            return;
        }
        match self.mode {
            CommitlogSync::Periodic { .. } => self.unwritten.push(ack),
            CommitlogSync::Batch | CommitlogSync::Group { .. } => self.waiting.push(ack),
        }
    }

    fn try_write(&mut self, frame: &[u8], segment: u64) -> Result<()> {
        if let Some(error) = &self.failed {
            return Err(error.duplicate());
        }
        self.dirty = true;
        self.segment
            .append(frame, segment)
            .inspect_err(|e| self.fail(e))
    }

    /// Writes the batch's records out, then answers the writers that only waited for that.
    fn write_out(&mut self) {
        if self.failed.is_none() {
            if let Err(error) = self.segment.write_out() {
                self.fail(&error);
            }
        }
        let unwritten = std::mem::take(&mut self.unwritten);
        self.reply_all(unwritten);
    }

    fn recycle(&mut self, below: u64) {
        if self.failed.is_some() {
            return;
        }
        if let Err(error) = self.segment.recycle(below) {
            tracing::warn!("could not delete old commit log segments: {error}");
        }
    }

    fn fail(&mut self, error: &StorageError) {
        tracing::error!("commit log failure, no longer accepting writes: {error}");
        self.failed = Some(error.duplicate());
    }

    /// The time by which unsynced data must be synced, if there is any.
    fn sync_deadline(&self) -> Option<Instant> {
        if !self.dirty {
            return None;
        }
        Some(match self.mode {
            CommitlogSync::Batch => self.last_sync,
            CommitlogSync::Group { window } => self.last_sync + window,
            CommitlogSync::Periodic { period } => self.last_sync + period,
        })
    }

    fn sync_due(&self) -> bool {
        self.sync_deadline()
            .is_some_and(|deadline| deadline <= Instant::now())
    }

    fn sync(&mut self) {
        if self.dirty && self.failed.is_none() {
            if let Err(error) = self.segment.sync() {
                self.fail(&error);
            }
        }
        self.dirty = false;
        self.last_sync = Instant::now();
        let waiting = std::mem::take(&mut self.waiting);
        self.reply_all(waiting);
    }

    fn reply_all(&self, acks: Vec<Ack>) {
        for ack in acks {
            let result = match &self.failed {
                Some(error) => Err(error.duplicate()),
                None => Ok(()),
            };
            let _ = ack.send(result);
        }
    }
}

/// Default period of [`CommitlogSync::Periodic`].
pub const DEFAULT_PERIOD: Duration = Duration::from_secs(10);
