//! `system.log` with size-based rotation, and the shared handle the log layer writes through
//! (events are dropped until a file is set, while stderr still gets them).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::MakeWriter;

const FILE_NAME: &str = "system.log";

/// An append-only log file: when a write would take it past `max_bytes`, it is renamed
/// `system.log.1` (older ones shift to `.2`, … up to `kept`, the oldest is deleted) and a new
/// file is started.
pub struct RotatingFile {
    path: PathBuf,
    file: File,
    written: u64,
    max_bytes: u64,
    kept: usize,
}

impl RotatingFile {
    /// Opens (appending) or creates `dir/system.log`, creating `dir` if needed.
    pub fn open(dir: &Path, max_bytes: u64, kept: usize) -> Result<RotatingFile, String> {
        fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create log directory {}: {e}", dir.display()))?;
        let path = dir.join(FILE_NAME);
        let file = append(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let written = file.metadata().map_or(0, |m| m.len());
        Ok(RotatingFile {
            path,
            file,
            written,
            max_bytes,
            kept,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn numbered(&self, n: usize) -> PathBuf {
        self.path.with_file_name(format!("{FILE_NAME}.{n}"))
    }

    fn rotate(&mut self) -> io::Result<()> {
        self.file.flush()?;
        remove_if_present(&self.numbered(self.kept))?;
        for n in (1..self.kept).rev() {
            rename_if_present(&self.numbered(n), &self.numbered(n + 1))?;
        }
        if self.kept == 0 {
            remove_if_present(&self.path)?;
        } else {
            fs::rename(&self.path, self.numbered(1))?;
        }
        self.file = append(&self.path)?;
        self.written = 0;
        Ok(())
    }
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written > 0 && self.written + buf.len() as u64 > self.max_bytes {
            self.rotate()?;
        }
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

fn append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

fn remove_if_present(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

fn rename_if_present(from: &Path, to: &Path) -> io::Result<()> {
    match fs::rename(from, to) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The log file once opened, shared by every writer the log layer makes.
#[derive(Clone, Default)]
pub struct SharedFile(Arc<Mutex<Option<RotatingFile>>>);

impl SharedFile {
    pub fn set(&self, file: RotatingFile) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(file);
    }
}

impl Write for SharedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut *self.0.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(file) => file.write(buf),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut *self.0.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }
}

impl<'a> MakeWriter<'a> for SharedFile {
    type Writer = SharedFile;

    fn make_writer(&'a self) -> SharedFile {
        self.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(path: &Path) -> String {
        fs::read_to_string(path).unwrap_or_default()
    }

    #[test]
    fn rotates_by_size_and_keeps_the_newest_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut log = RotatingFile::open(dir.path(), 10, 2).expect("open");
        for line in ["aaaaaaaa\n", "bbbbbbbb\n", "cccccccc\n", "dddddddd\n"] {
            log.write_all(line.as_bytes()).expect("write");
        }
        assert_eq!(read(&dir.path().join("system.log")), "dddddddd\n");
        assert_eq!(read(&dir.path().join("system.log.1")), "cccccccc\n");
        assert_eq!(read(&dir.path().join("system.log.2")), "bbbbbbbb\n");
        assert!(!dir.path().join("system.log.3").exists());
    }

    #[test]
    fn reopening_appends_and_counts_what_is_there() {
        let dir = tempfile::tempdir().expect("tempdir");
        RotatingFile::open(dir.path(), 10, 1)
            .expect("open")
            .write_all(b"12345678\n")
            .expect("write");
        let mut again = RotatingFile::open(dir.path(), 10, 1).expect("reopen");
        again.write_all(b"abc\n").expect("write");
        assert_eq!(read(&dir.path().join("system.log")), "abc\n");
        assert_eq!(read(&dir.path().join("system.log.1")), "12345678\n");
    }

    #[test]
    fn writes_before_a_file_is_set_are_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let shared = SharedFile::default();
        shared.make_writer().write_all(b"early\n").expect("write");
        shared.set(RotatingFile::open(dir.path(), 1000, 1).expect("open"));
        shared.make_writer().write_all(b"late\n").expect("write");
        assert_eq!(read(&dir.path().join("system.log")), "late\n");
    }
}
