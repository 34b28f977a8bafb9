//! The compaction transaction log, so a crash mid-compaction leaves either the inputs or the
//! outputs, never both (purged tombstones in outputs next to the data they shadowed in inputs
//! would resurrect it). `txn-<id>.log` in the table directory lists, one line each and fsynced,
//! `input <generation>`, `output <generation>` (before the output is written) and finally
//! `commit`. Start-up [`recover`]s: a committed transaction deletes its remaining inputs, an
//! uncommitted one its outputs; then the file goes.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Result, StorageError};
use crate::sstable::Descriptor;

const PREFIX: &str = "txn-";
const SUFFIX: &str = ".log";

/// An open compaction transaction.
pub struct Txn {
    path: PathBuf,
    file: File,
}

impl Txn {
    /// Starts transaction `id` (unique among running ones: the smallest input generation).
    pub fn begin(dir: &Path, id: u64, inputs: &[u64]) -> Result<Txn> {
        let path = dir.join(format!("{PREFIX}{id}{SUFFIX}"));
        let file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&path)
            .map_err(|e| StorageError::io(&path, e))?;
        let mut txn = Txn { path, file };
        let lines: String = inputs.iter().map(|g| format!("input {g}\n")).collect();
        txn.append(&lines)?;
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| StorageError::io(dir, e))?;
        Ok(txn)
    }

    /// Records an output generation before it is written.
    pub fn add_output(&mut self, generation: u64) -> Result<()> {
        self.append(&format!("output {generation}\n"))
    }

    /// Marks every output complete: from now on the inputs are the ones to delete.
    pub fn commit(&mut self) -> Result<()> {
        self.append("commit\n")
    }

    /// Removes the log once the inputs are gone (or the outputs, after an abort).
    pub fn finish(self) -> Result<()> {
        fs::remove_file(&self.path).map_err(|e| StorageError::io(&self.path, e))
    }

    fn append(&mut self, text: &str) -> Result<()> {
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| StorageError::io(&self.path, e))
    }
}

/// What a transaction log says.
#[derive(Debug, Default, PartialEq, Eq)]
struct Parsed {
    inputs: Vec<u64>,
    outputs: Vec<u64>,
    committed: bool,
}

/// Parses a log; a torn last line (a crash mid-append) is ignored, anything else malformed is
/// corruption.
fn parse(text: &str, path: &Path) -> Result<Parsed> {
    let mut parsed = Parsed::default();
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    for (number, line) in complete.lines().enumerate() {
        let generation = |rest: &str| rest.parse::<u64>().ok();
        match line.split_once(' ') {
            Some(("input", g)) if generation(g).is_some() => parsed.inputs.extend(generation(g)),
            Some(("output", g)) if generation(g).is_some() => parsed.outputs.extend(generation(g)),
            None if line == "commit" => parsed.committed = true,
            _ => {
                return Err(StorageError::Corrupt {
                    file: path.to_path_buf(),
                    offset: number as u64,
                    reason: format!("unexpected compaction log line {line:?}"),
                })
            }
        }
    }
    Ok(parsed)
}

/// Completes or rolls back every compaction interrupted in `dir`; the SSTables it names are
/// deleted from each of `sstable_dirs` (a table's directories: its SSTables may be in any).
pub fn recover(dir: &Path, sstable_dirs: &[PathBuf]) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| StorageError::io(dir, e))?.path();
        let is_txn = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(SUFFIX));
        if is_txn {
            recover_one(sstable_dirs, &path)?;
        }
    }
    Ok(())
}

fn recover_one(sstable_dirs: &[PathBuf], path: &Path) -> Result<()> {
    let text = fs::read_to_string(path).map_err(|e| StorageError::io(path, e))?;
    let parsed = parse(&text, path)?;
    let (doomed, what) = if parsed.committed {
        (&parsed.inputs, "inputs")
    } else {
        (&parsed.outputs, "outputs")
    };
    tracing::info!(
        "interrupted compaction {}: removing its {what} {doomed:?}",
        path.display()
    );
    for generation in doomed {
        for dir in sstable_dirs {
            Descriptor::new(dir, *generation).delete()?;
        }
    }
    fs::remove_file(path).map_err(|e| StorageError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_ignores_a_torn_tail_and_rejects_garbage() {
        let path = Path::new("txn-1.log");
        let parsed = parse("input 1\ninput 2\noutput 9\ncomm", path).expect("torn tail");
        assert_eq!(
            parsed,
            Parsed {
                inputs: vec![1, 2],
                outputs: vec![9],
                committed: false
            }
        );
        assert!(parse("input 1\ncommit\n", path).expect("ok").committed);
        assert!(parse("bogus\n", path).is_err());
    }
}
