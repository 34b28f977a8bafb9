//! [`Outgoing`]: the SSTables to send for a table and a set of token ranges.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{remove_staging, staging_dir, staging_path, TokenRanges};
use crate::engine::{LiveSstable, LsmEngine, Task};
use crate::error::{Result, StorageError};
use crate::sstable::{stream_name, Component, Descriptor, SstableWriter, WriteOptions};

/// One file of an SSTable to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutgoingComponent {
    /// The name it travels under (its file name without the generation).
    pub name: String,
    pub path: PathBuf,
    pub len: u64,
}

/// One SSTable to send: its components, the TOC last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutgoingSstable {
    pub components: Vec<OutgoingComponent>,
    /// Sent as it is on disk (every partition of it lies in the ranges); otherwise it was
    /// written for the stream from the partitions of an SSTable that do.
    pub whole: bool,
    pub partitions: u64,
}

impl OutgoingSstable {
    /// Bytes of all its components.
    pub fn bytes(&self) -> u64 {
        self.components.iter().map(|c| c.len).sum()
    }

    /// Its components as a receiver is told of them: (stream name, length), in order.
    pub fn manifest(&self) -> Vec<(String, u64)> {
        self.components
            .iter()
            .map(|c| (c.name.clone(), c.len))
            .collect()
    }

    fn describe(desc: &Descriptor, whole: bool, partitions: u64) -> Result<OutgoingSstable> {
        let mut components = Vec::with_capacity(Component::ALL.len());
        for component in Component::ALL {
            let path = desc.path(component);
            let len = fs::metadata(&path)
                .map_err(|e| StorageError::io(&path, e))?
                .len();
            let name = stream_name(desc.version, component);
            components.push(OutgoingComponent { name, path, len });
        }
        Ok(OutgoingSstable {
            components,
            whole,
            partitions,
        })
    }
}

/// The SSTables of one table to send for some token ranges. Their files stay readable while it
/// lives (compactions may replace the originals meanwhile); dropping it removes them.
#[derive(Debug)]
pub struct Outgoing {
    pub sstables: Vec<OutgoingSstable>,
    /// Staging directories, one per data directory used.
    dirs: Vec<PathBuf>,
}

impl Outgoing {
    /// Bytes of all the SSTables.
    pub fn bytes(&self) -> u64 {
        self.sstables.iter().map(OutgoingSstable::bytes).sum()
    }
}

impl Drop for Outgoing {
    fn drop(&mut self) {
        for dir in &self.dirs {
            remove_staging(dir);
        }
    }
}

/// Prepares what `engine` holds in `ranges` (its memtables already flushed by the caller) for
/// stream `session`: the SSTables claimed meanwhile so that no compaction deletes them first.
pub(crate) fn prepare(
    engine: &LsmEngine,
    ranges: &TokenRanges,
    session: &str,
    task: &Task<'_>,
) -> Result<Outgoing> {
    let sstables = loop {
        let sstables = engine.view().sstables.clone();
        let generations: Vec<u64> = sstables.iter().map(|s| s.generation()).collect();
        if engine.claim_waiting(&generations, task)? {
            break (sstables, generations);
        }
    };
    let (live, generations) = sstables;
    let mut outgoing = Outgoing {
        sstables: Vec::new(),
        dirs: Vec::new(),
    };
    let staged = stage_all(engine, &live, ranges, session, task, &mut outgoing);
    engine.release(&generations);
    staged.map(|()| outgoing)
}

fn stage_all(
    engine: &LsmEngine,
    live: &[Arc<LiveSstable>],
    ranges: &TokenRanges,
    session: &str,
    task: &Task<'_>,
    outgoing: &mut Outgoing,
) -> Result<()> {
    for sstable in live {
        let stats = sstable.sstable.stats();
        let (Some(first), Some(last)) = (stats.min_token(), stats.max_token()) else {
            continue;
        };
        if ranges.covers(first, last) {
            let staging = staging_for(outgoing, &sstable.sstable.descriptor().dir, session)?;
            let linked = link(sstable.sstable.descriptor(), &staging)?;
            let partitions = stats.partitions;
            outgoing
                .sstables
                .push(OutgoingSstable::describe(&linked, true, partitions)?);
        } else if ranges.overlaps(first, last) {
            let staging = staging_for(outgoing, engine.dir(), session)?;
            if let Some(part) = rewrite(engine, sstable, ranges, &staging, task)? {
                outgoing.sstables.push(part);
            }
        }
    }
    Ok(())
}

/// The staging directory of `session` beside `table_dir`, created at first use.
fn staging_for(outgoing: &mut Outgoing, table_dir: &Path, session: &str) -> Result<PathBuf> {
    let dir = staging_path(table_dir, session, "out");
    if !outgoing.dirs.contains(&dir) {
        outgoing.dirs.push(staging_dir(table_dir, session, "out")?);
    }
    Ok(dir)
}

/// Hard-links every component of `desc` into `staging`, keeping its generation.
fn link(desc: &Descriptor, staging: &Path) -> Result<Descriptor> {
    let linked = Descriptor::of_version(staging, desc.generation, desc.version);
    for component in Component::ALL {
        let (from, to) = (desc.path(component), linked.path(component));
        fs::hard_link(&from, &to).map_err(|e| StorageError::io(&from, e))?;
    }
    Ok(linked)
}

/// Writes the partitions of `sstable` lying in `ranges` into a new SSTable in `staging`, as
/// they are (tombstones and expiring cells included); `None` when none lies there.
fn rewrite(
    engine: &LsmEngine,
    sstable: &LiveSstable,
    ranges: &TokenRanges,
    staging: &Path,
    task: &Task<'_>,
) -> Result<Option<OutgoingSstable>> {
    let options = WriteOptions {
        level: 0,
        ..engine.settings().write.clone()
    };
    let mut writer = SstableWriter::create(staging, engine.next_generation(), options)?;
    for (n, partition) in sstable.sstable.iter().enumerate() {
        let (key, data) = partition?;
        if ranges.contains(key.token) {
            writer.append(&key, &data)?;
        }
        if n % 256 == 0 {
            engine.check(task)?;
        }
    }
    if writer.partitions() == 0 {
        writer.abort();
        return Ok(None);
    }
    let partitions = writer.partitions();
    let desc = writer.finish()?;
    OutgoingSstable::describe(&desc, false, partitions).map(Some)
}
