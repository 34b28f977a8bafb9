//! `HintsStore`: one host's hints — those buffered and not yet written, the file being written,
//! the closed files waiting for delivery (oldest first), and where delivery of a file stopped.
//!
//! Locks: `writer` is held across disk writes (only blocking threads take it), then `files`
//! and `buffer`, both held briefly and never across I/O.
use std::collections::{HashMap, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use net::HostId;
use parking_lot::Mutex;
use tracing::{error, info, warn};

use crate::config::Compression;
use crate::descriptor::{HintsDescriptor, HEADER_LEN};
use crate::writer::{sync_dir, HintsWriter};

/// A hints file and its size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HintsFile {
    pub descriptor: HintsDescriptor,
    pub size: u64,
}

/// A file handed to a delivery, and where to start in it.
#[derive(Clone, Copy, Debug)]
pub struct Lease {
    pub file: HintsFile,
    pub offset: u64,
    epoch: u64,
}

/// How a delivery of a leased file ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivered {
    /// Every hint was acknowledged or dropped: the file can go.
    All,
    /// Delivery stopped; the next one starts at this offset.
    UpTo(u64),
}

/// What a flush did.
#[derive(Debug, Default)]
pub struct Flushed {
    pub hints: u64,
    /// Hints lost because writing them failed.
    pub lost: u64,
    pub error: Option<io::Error>,
}

/// A host's pending hints, for `nodetool listpendinghints`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    pub files: usize,
    pub oldest_ms: Option<i64>,
    pub newest_ms: Option<i64>,
    pub bytes: u64,
    pub buffered_hints: u64,
}

#[derive(Default)]
struct Buffer {
    records: Vec<Vec<u8>>,
    first_ms: Option<i64>,
    last_ms: Option<i64>,
}

#[derive(Default)]
struct Files {
    queue: VecDeque<HintsFile>,
    /// The file being written and its size at the last flush.
    current: Option<HintsFile>,
    leased: Option<HintsFile>,
    positions: HashMap<i64, u64>,
    last_timestamp: i64,
    /// Bumped by `truncate`, so a delivery that started before stops.
    epoch: u64,
}

impl Files {
    fn all(&self) -> impl Iterator<Item = &HintsFile> {
        self.queue.iter().chain(&self.current).chain(&self.leased)
    }
}

pub struct HintsStore {
    pub host_id: HostId,
    dir: PathBuf,
    compression: Compression,
    writer: Mutex<Option<HintsWriter>>,
    files: Mutex<Files>,
    buffer: Mutex<Buffer>,
    /// Bytes buffered in every store of the service.
    buffered_total: Arc<AtomicU64>,
    disk_bytes: AtomicU64,
    buffered_bytes: AtomicU64,
    /// Timestamp of the oldest file, `i64::MAX` when there is none.
    oldest_file: AtomicI64,
}

impl HintsStore {
    /// A store for `host_id` with its existing `files` (any order).
    pub fn new(
        host_id: HostId,
        dir: &Path,
        compression: Compression,
        buffered_total: Arc<AtomicU64>,
        mut files: Vec<HintsFile>,
    ) -> HintsStore {
        files.sort_by_key(|f| f.descriptor.timestamp);
        let last_timestamp = files.last().map_or(0, |f| f.descriptor.timestamp);
        let store = HintsStore {
            host_id,
            dir: dir.to_path_buf(),
            compression,
            writer: Mutex::new(None),
            files: Mutex::new(Files {
                queue: files.into(),
                last_timestamp,
                ..Files::default()
            }),
            buffer: Mutex::new(Buffer::default()),
            buffered_total,
            disk_bytes: AtomicU64::new(0),
            buffered_bytes: AtomicU64::new(0),
            oldest_file: AtomicI64::new(i64::MAX),
        };
        store.refresh(&store.files.lock());
        store
    }

    /// Buffers one framed record of a hint created at `creation_ms`; returns its size.
    pub fn append(&self, record: Vec<u8>, creation_ms: i64) -> u64 {
        let len = record.len() as u64;
        let mut buffer = self.buffer.lock();
        buffer.records.push(record);
        buffer.first_ms.get_or_insert(creation_ms);
        buffer.last_ms = Some(creation_ms);
        self.buffered_bytes.fetch_add(len, Relaxed);
        self.buffered_total.fetch_add(len, Relaxed);
        len
    }

    /// Bytes pending for the host: in its files and buffered.
    pub fn pending_bytes(&self) -> u64 {
        self.disk_bytes.load(Relaxed) + self.buffered_bytes.load(Relaxed)
    }

    pub fn oldest_file_ms(&self) -> Option<i64> {
        Some(self.oldest_file.load(Relaxed)).filter(|t| *t != i64::MAX)
    }

    /// Whether anything is buffered, being written or waiting for delivery.
    pub fn has_hints(&self) -> bool {
        self.buffered_bytes.load(Relaxed) > 0 || self.files.lock().all().next().is_some()
    }

    pub fn summary(&self) -> Summary {
        let files = self.files.lock();
        let buffer = self.buffer.lock();
        let times = files.all().map(|f| f.descriptor.timestamp);
        let times: Vec<i64> = times.chain(buffer.first_ms).chain(buffer.last_ms).collect();
        Summary {
            files: files.all().count(),
            oldest_ms: times.iter().min().copied(),
            newest_ms: times.iter().max().copied(),
            bytes: self.pending_bytes(),
            buffered_hints: buffer.records.len() as u64,
        }
    }

    /// Writes the buffered hints to the current file, starting new files at `max_file_size`,
    /// and syncs it; with `close`, also closes the current file so it can be delivered.
    /// Blocking: call from a blocking thread.
    pub fn flush(&self, now_ms: i64, max_file_size: u64, close: bool) -> Flushed {
        let mut writer = self.writer.lock();
        let records = self.take_buffer();
        let mut flushed = Flushed::default();
        if records.is_empty() && !close {
            return flushed;
        }
        for (i, record) in records.iter().enumerate() {
            if let Err(e) = self.write(&mut writer, record, now_ms, max_file_size) {
                let rest = &records[i..];
                self.unbuffer(rest.iter().map(|r| r.len() as u64).sum());
                flushed.lost = rest.len() as u64;
                flushed.error = Some(e);
                break;
            }
            flushed.hints += 1;
        }
        let synced = writer.as_mut().map_or(Ok(()), HintsWriter::sync);
        if let Err(e) = synced {
            flushed.error.get_or_insert(e);
        }
        if close || flushed.error.is_some() {
            self.close(&mut writer);
        }
        flushed
    }

    fn take_buffer(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.buffer.lock()).records
    }

    /// Takes `bytes` out of the buffered counts (written, lost or dropped).
    fn unbuffer(&self, bytes: u64) {
        self.buffered_bytes.fetch_sub(bytes, Relaxed);
        self.buffered_total.fetch_sub(bytes, Relaxed);
    }

    fn write(
        &self,
        writer: &mut Option<HintsWriter>,
        record: &[u8],
        now_ms: i64,
        max_file_size: u64,
    ) -> io::Result<()> {
        let full = writer
            .as_ref()
            .is_some_and(|w| w.records() > 0 && w.size() + record.len() as u64 > max_file_size);
        if full {
            self.close(writer);
        }
        let current = match writer {
            Some(current) => current,
            None => writer.insert(self.open_writer(now_ms)?),
        };
        current.append(record)?;
        self.unbuffer(record.len() as u64);
        self.set_current(Some(current));
        Ok(())
    }

    fn open_writer(&self, now_ms: i64) -> io::Result<HintsWriter> {
        loop {
            let timestamp = {
                let mut files = self.files.lock();
                files.last_timestamp = now_ms.max(files.last_timestamp + 1);
                files.last_timestamp
            };
            let descriptor = HintsDescriptor::new(self.host_id, timestamp, self.compression);
            match HintsWriter::create(&self.dir, descriptor) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
                Ok(writer) => {
                    self.set_current(Some(&writer));
                    return Ok(writer);
                }
            }
        }
    }

    fn set_current(&self, writer: Option<&HintsWriter>) {
        let mut files = self.files.lock();
        files.current = writer.map(|w| HintsFile {
            descriptor: w.descriptor(),
            size: w.size(),
        });
        self.refresh(&files);
    }

    /// Queues the current file (synced, or cut at a failed write) for delivery.
    fn close(&self, writer: &mut Option<HintsWriter>) {
        let Some(mut closing) = writer.take() else {
            return;
        };
        if let Err(e) = closing.sync() {
            error!(
                "failed to sync hints file {}: {e}",
                closing.descriptor().file_name()
            );
        }
        let mut files = self.files.lock();
        files.current = None;
        files.queue.push_back(HintsFile {
            descriptor: closing.descriptor(),
            size: closing.size(),
        });
        self.refresh(&files);
    }

    /// Hands the oldest waiting file to a delivery.
    pub fn lease(&self) -> Option<Lease> {
        let mut files = self.files.lock();
        let file = files.queue.pop_front()?;
        files.leased = Some(file);
        let offset = files.positions.get(&file.descriptor.timestamp).copied();
        Some(Lease {
            file,
            offset: offset.unwrap_or(HEADER_LEN as u64),
            epoch: files.epoch,
        })
    }

    /// Whether the store was truncated since `lease` was taken.
    pub fn truncated_since(&self, lease: &Lease) -> bool {
        self.files.lock().epoch != lease.epoch
    }

    /// Ends a lease: deletes a delivered file, or puts it back first in line with its position.
    /// Blocking (may delete a file).
    pub fn release(&self, lease: Lease, delivered: Delivered) {
        let timestamp = lease.file.descriptor.timestamp;
        {
            let mut files = self.files.lock();
            if files.epoch != lease.epoch {
                return;
            }
            files.leased = None;
            match delivered {
                Delivered::All => {
                    files.positions.remove(&timestamp);
                }
                Delivered::UpTo(offset) => {
                    files.positions.insert(timestamp, offset);
                    files.queue.push_front(lease.file);
                }
            }
            self.refresh(&files);
        }
        if delivered == Delivered::All {
            self.delete(&[lease.file]);
            info!(
                "finished hinted handoff of file {} to {}",
                lease.file.descriptor.file_name(),
                self.host_id
            );
        }
    }

    /// Drops every hint of the host: buffered, being written, waiting, being delivered.
    /// Blocking.
    pub fn truncate(&self) {
        let mut writer = self.writer.lock();
        writer.take();
        let dropped = self.take_buffer();
        self.unbuffer(dropped.iter().map(|r| r.len() as u64).sum());
        let doomed: Vec<HintsFile> = {
            let mut files = self.files.lock();
            let doomed = files.all().copied().collect();
            files.queue.clear();
            files.current = None;
            files.leased = None;
            files.positions.clear();
            files.epoch += 1;
            self.refresh(&files);
            doomed
        };
        self.delete(&doomed);
    }

    fn delete(&self, doomed: &[HintsFile]) {
        for file in doomed {
            let path = file.descriptor.path(&self.dir);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => error!("failed to delete hints file {}: {e}", path.display()),
            }
        }
        if let Err(e) = sync_dir(&self.dir) {
            warn!("failed to sync {}: {e}", self.dir.display());
        }
    }

    fn refresh(&self, files: &Files) {
        let bytes: u64 = files.all().map(|f| f.size).sum();
        let oldest = files.all().map(|f| f.descriptor.timestamp).min();
        self.disk_bytes.store(bytes, Relaxed);
        self.oldest_file.store(oldest.unwrap_or(i64::MAX), Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record;

    fn store(dir: &Path) -> HintsStore {
        let total = Arc::new(AtomicU64::new(0));
        HintsStore::new(
            HostId::from_u128(1),
            dir,
            Compression::None,
            total,
            Vec::new(),
        )
    }

    fn add(store: &HintsStore, n: usize) {
        for i in 0..n {
            store.append(
                record::encode(format!("hint {i}").as_bytes()),
                1_000 + i as i64,
            );
        }
    }

    #[test]
    fn a_leased_file_comes_back_first_with_its_position_and_goes_once_delivered() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path());
        add(&store, 3);
        assert_eq!(store.flush(10, u64::MAX, true).hints, 3);
        add(&store, 2);
        store.flush(10, u64::MAX, true);
        let first = store.lease().unwrap();
        assert_eq!(first.offset, HEADER_LEN as u64);
        assert_eq!(first.file.descriptor.timestamp, 10);
        store.release(first, Delivered::UpTo(50));
        let again = store.lease().unwrap();
        assert_eq!((again.file, again.offset), (first.file, 50));
        store.release(again, Delivered::All);
        assert!(!first.file.descriptor.path(dir.path()).exists());
        let second = store.lease().unwrap();
        assert_eq!(
            second.file.descriptor.timestamp, 11,
            "timestamps stay unique"
        );
        assert_eq!(store.summary().files, 1);
        assert!(store.lease().is_none());
    }

    #[test]
    fn truncation_ends_a_lease_and_deletes_everything() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path());
        add(&store, 2);
        store.flush(10, u64::MAX, true);
        add(&store, 1);
        store.flush(20, u64::MAX, false);
        add(&store, 1);
        let lease = store.lease().unwrap();
        store.truncate();
        assert!(store.truncated_since(&lease));
        store.release(lease, Delivered::UpTo(40));
        assert!(store.lease().is_none());
        assert!(!store.has_hints());
        assert_eq!(store.pending_bytes(), 0);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_failed_write_loses_the_buffered_hints_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let store = store(&gone);
        add(&store, 2);
        assert!(store.pending_bytes() > 0);
        let flushed = store.flush(10, u64::MAX, false);
        assert_eq!((flushed.hints, flushed.lost), (0, 2));
        assert!(flushed.error.is_some());
        assert_eq!(store.pending_bytes(), 0);
        assert_eq!(store.buffered_total.load(Relaxed), 0);
    }

    #[test]
    fn files_rotate_past_the_maximum_size() {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path());
        add(&store, 10);
        let record_len = record::encode(b"hint 0").len() as u64;
        let max = HEADER_LEN as u64 + 3 * record_len;
        store.flush(10, max, false);
        let summary = store.summary();
        assert_eq!(summary.files, 4, "3 + 3 + 3 + 1");
        assert_eq!(summary.bytes, 4 * HEADER_LEN as u64 + 10 * record_len);
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            assert!(entry.unwrap().metadata().unwrap().len() <= max);
        }
    }
}
