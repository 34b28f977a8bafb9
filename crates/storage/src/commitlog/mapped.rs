//! The segment being written, preallocated to the segment size and mapped into memory: a
//! record is copied into the mapping under the log's lock, with no system call (the pages
//! already written are unmapped from the process after the lock is released). The mapped
//! pages are the kernel's page cache, so a record is with the OS (it survives a crash of the
//! process) as soon as it is copied; fsyncs of the file make it durable. A segment's unwritten
//! tail is zeros, which replay reads as its end.
#![allow(unsafe_code)] // the segment is a memory mapping written in place

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{compiler_fence, Ordering};
use std::sync::Arc;

use memmap2::{MmapOptions, MmapRaw, UncheckedAdvice};

use super::segment::{segment_name, HEADER_LEN, TRAILER_LEN};
use crate::error::{Result, StorageError};

/// Written pages are unmapped from the process (they stay in the page cache, dirty until
/// synced) every this many bytes, so a segment does not add its size to the resident set.
const RELEASE_STEP: usize = 1 << 20;
const PAGE: usize = 4096;

/// A segment file: what the sync thread fsyncs and truncates.
pub struct OpenSegment {
    pub file: File,
    pub path: PathBuf,
}

impl OpenSegment {
    pub fn sync(&self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| StorageError::io(&self.path, e))
    }

    /// Cuts the zero tail of a retired segment off at `len`, the bytes written to it.
    pub fn truncate(&self, len: u64) -> Result<()> {
        self.file
            .set_len(len)
            .map_err(|e| StorageError::io(&self.path, e))
    }
}

/// The writers' side of the current segment: its mapping and how much of it is written.
/// Only the holder of the log's lock writes through it; the mapping is shared (`Arc`) so that a
/// [`Release`] can run after the lock is dropped while a roll retires the segment.
pub struct Tail {
    map: Arc<MmapRaw>,
    written: usize,
    /// Bytes at the start of the mapping already handed to a [`Release`].
    released: usize,
}

impl Tail {
    pub fn written(&self) -> u64 {
        self.written as u64
    }

    /// Copies one frame after the written bytes: the header first, so a crash in the middle
    /// leaves either a torn header or a valid length followed by a torn payload, each followed
    /// by zeros (which replay recognizes as a torn tail). `None` if it does not fit.
    pub fn put(
        &mut self,
        header: &[u8; HEADER_LEN],
        payload: &[u8],
        trailer: &[u8; TRAILER_LEN],
    ) -> Option<()> {
        let end = self.written + HEADER_LEN + payload.len() + TRAILER_LEN;
        if end > self.map.len() {
            return None;
        }
        let copy = |at: usize, bytes: &[u8]| {
            // SAFETY: `at + bytes.len() <= end <= len`, the file is never truncated while it is
            // the current segment, and only the lock holder (`&mut self`) writes to the mapping.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    self.map.as_mut_ptr().add(at),
                    bytes.len(),
                );
            }
        };
        copy(self.written, header);
        compiler_fence(Ordering::SeqCst);
        copy(self.written + HEADER_LEN, payload);
        copy(self.written + HEADER_LEN + payload.len(), trailer);
        self.written = end;
        Some(())
    }

    /// The whole pages written since the last release, once there are enough of them, to be
    /// unmapped from the process by [`Release::run`] after the log's lock is dropped.
    pub fn take_release(&mut self) -> Option<Release> {
        let upto = self.written / PAGE * PAGE;
        if upto < self.released + RELEASE_STEP {
            return None;
        }
        let release = Release {
            map: Arc::clone(&self.map),
            offset: self.released,
            len: upto - self.released,
        };
        self.released = upto;
        Some(release)
    }
}

/// Written pages of a segment to unmap from the process (madvise, which can take milliseconds
/// on a busy machine: it runs without the log's lock). They stay in the page cache, dirty
/// until synced, so a segment does not add its size to the resident set.
pub struct Release {
    map: Arc<MmapRaw>,
    offset: usize,
    len: usize,
}

impl Release {
    pub fn run(self) {
        // SAFETY: the range lies inside the mapping (kept alive by the `Arc`), is page-aligned,
        // and holds only bytes already written, which nobody writes again (a retired segment is
        // only truncated at or beyond them); for a shared file mapping MADV_DONTNEED keeps
        // dirty pages in the page cache, and a later access would read them back from there.
        let advised = unsafe {
            self.map
                .unchecked_advise_range(UncheckedAdvice::DontNeed, self.offset, self.len)
        };
        if let Err(e) = advised {
            tracing::debug!("madvise of a commit log segment failed: {e}");
        }
    }
}

/// Allocates the file's `size` bytes on disk: a write into a mapped hole that the file system
/// cannot allocate (a full disk) would kill the process with SIGBUS, so space runs out here,
/// as an error, instead.
fn reserve(file: &File, size: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let len = libc::off_t::try_from(size).map_err(|_| std::io::ErrorKind::InvalidInput)?;
    // SAFETY: a plain system call on an open descriptor.
    match unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) } {
        0 => Ok(()),
        errno => Err(std::io::Error::from_raw_os_error(errno)),
    }
}

/// Creates segment `id` in `dir`, `size` bytes of zeros allocated on disk, maps it, and makes
/// its directory entry durable.
pub fn create_segment(dir: &Path, id: u64, size: u64) -> Result<(OpenSegment, Tail)> {
    let path = dir.join(segment_name(id));
    let io = |e| StorageError::io(&path, e);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(io)?;
    reserve(&file, size).map_err(io)?;
    // The file was just created by this process and is only truncated by the sync thread once
    // retired, at or beyond its written bytes; nothing else maps or truncates it.
    let map = Arc::new(MmapOptions::new().map_raw(&file).map_err(io)?);
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StorageError::io(dir, e))?;
    let tail = Tail {
        map,
        written: 0,
        released: 0,
    };
    Ok((OpenSegment { file, path }, tail))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commitlog::segment::{frame_parts, unframe};

    /// Space the disk cannot give is refused when the segment is created, as an error.
    #[test]
    fn a_segment_the_disk_cannot_hold_is_an_error() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let huge = 1u64 << 62;
        match create_segment(tmp.path(), 1, huge) {
            Err(StorageError::Io { .. }) => {}
            other => panic!("expected an I/O error, got {:?}", other.map(|_| ())),
        }
    }

    #[test]
    fn frames_land_in_the_file_and_the_rest_stays_zero() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (segment, mut tail) =
            create_segment(tmp.path(), 1, 3 * RELEASE_STEP as u64).expect("create");
        let payload = vec![7u8; 1000];
        let (header, trailer) = frame_parts(&payload);
        let mut count = 0;
        while tail.put(&header, &payload, &trailer).is_some() {
            if let Some(release) = tail.take_release() {
                release.run();
            }
            count += 1;
        }
        assert_eq!(count, 3 * RELEASE_STEP / 1012);
        assert!(
            tail.released >= 2 * RELEASE_STEP,
            "written pages were released"
        );
        let bytes = std::fs::read(&segment.path).expect("read");
        assert_eq!(bytes.len(), 3 * RELEASE_STEP);
        let mut at = 0;
        for _ in 0..count {
            let (read, size) = unframe(&bytes[at..]).expect("frame");
            assert_eq!(read, &payload[..]);
            at += size;
        }
        assert!(bytes[at..].iter().all(|b| *b == 0));
    }
}
