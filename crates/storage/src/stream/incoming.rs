//! [`Incoming`]: SSTables received for a table, written into a staging directory, every chunk
//! checked against the checksum it came with, the whole SSTable opened and verified, then
//! added to the table.

use std::fs::{self, File};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use super::{remove_staging, staging_dir};
use crate::engine::{LiveSstable, LsmEngine};
use crate::error::{Result, StorageError};
use crate::sstable::{
    parse_stream_name, sync_dir, Component, Descriptor, RepairMark, Sstable, FORMAT_VERSION,
};

/// The SSTables one stream session receives for one table. Dropping it removes whatever was
/// received and not yet added to the table.
pub struct Incoming {
    engine: Arc<LsmEngine>,
    pub(crate) dir: PathBuf,
    /// Called once an SSTable joined the table (wakes the compactions).
    added: Box<dyn Fn() + Send + Sync>,
    /// The repair state the SSTables join with, whatever the sender's was.
    repair: RepairMark,
}

/// One SSTable being received: its component files, each written in order.
pub struct IncomingSstable {
    desc: Descriptor,
    parts: Vec<Part>,
}

struct Part {
    component: Component,
    path: PathBuf,
    file: File,
    len: u64,
    written: u64,
}

impl Incoming {
    pub(crate) fn new(
        engine: Arc<LsmEngine>,
        session: &str,
        added: Box<dyn Fn() + Send + Sync>,
    ) -> Result<Incoming> {
        let dir = staging_dir(engine.dir(), session, "in")?;
        Ok(Incoming {
            engine,
            dir,
            added,
            repair: RepairMark::UNREPAIRED,
        })
    }

    /// The SSTables received join with `repair` as their repair state (an incremental
    /// repair's session marks what it streams pending), instead of unrepaired.
    pub fn marked(mut self, repair: RepairMark) -> Incoming {
        self.repair = repair;
        self
    }

    /// Starts an SSTable whose components are `(stream name, length)`: every component of
    /// this format exactly once, or it is refused.
    pub fn sstable(&self, components: &[(String, u64)]) -> Result<IncomingSstable> {
        let named = components
            .iter()
            .map(|(name, len)| {
                let parsed = parse_stream_name(name).ok_or_else(|| {
                    StorageError::Invalid(format!("unknown SSTable component {name:?} in a stream"))
                })?;
                Ok((name, parsed, *len))
            })
            .collect::<Result<Vec<_>>>()?;
        let version = named.first().map_or(FORMAT_VERSION, |(_, (v, _), _)| *v);
        if named.iter().any(|(_, (v, _), _)| *v != version) {
            let why = format!("a streamed SSTable mixes format versions: {components:?}");
            return Err(StorageError::Invalid(why));
        }
        let generation = self.engine.next_generation();
        let desc = Descriptor::of_version(&self.dir, generation, version);
        let mut parts = Vec::with_capacity(components.len());
        for (name, (_, component), len) in named {
            if parts.iter().any(|p: &Part| p.component == component) {
                let why = format!("SSTable component {name:?} sent twice");
                return Err(StorageError::Invalid(why));
            }
            let path = desc.path(component);
            let file = File::create(&path).map_err(|e| StorageError::io(&path, e))?;
            let written = 0;
            parts.push(Part {
                component,
                path,
                file,
                len,
                written,
            });
        }
        if parts.len() != Component::ALL.len() {
            let why = format!("a streamed SSTable lacks components: {components:?}");
            return Err(StorageError::Invalid(why));
        }
        Ok(IncomingSstable { desc, parts })
    }

    /// Checks a fully received SSTable (every Data chunk and Index block against its CRC, the
    /// other components whole), then moves it into the table and adds it to the reads, with
    /// this stream's repair state (unrepaired unless [`marked`](Self::marked)). Returns its
    /// bytes.
    pub fn add(&self, sstable: IncomingSstable) -> Result<u64> {
        let bytes = sstable.finish()?;
        let staged = sstable.desc;
        check(&staged, self.repair)?;
        let task = self.engine.start_task()?;
        let target = Descriptor::of_version(self.engine.dir(), staged.generation, staged.version);
        for component in Component::ALL {
            let (from, to) = (staged.path(component), target.path(component));
            if component == Component::Toc {
                sync_dir(self.engine.dir())?;
            }
            fs::rename(&from, &to).map_err(|e| StorageError::io(&from, e))?;
        }
        sync_dir(self.engine.dir())?;
        let live = LiveSstable::open(&target)?;
        self.engine.check(&task)?;
        self.engine.add_sstable(Arc::new(live));
        (self.added)();
        Ok(bytes)
    }
}

impl Drop for Incoming {
    fn drop(&mut self) {
        remove_staging(&self.dir);
    }
}

impl IncomingSstable {
    /// Writes `bytes`, which begin at `offset` of component `index` (in the order given to
    /// [`Incoming::sstable`]) and came with CRC32 `crc`. Chunks of a component come in order.
    pub fn write(&mut self, index: usize, offset: u64, bytes: &[u8], crc: u32) -> Result<()> {
        let part = self.parts.get_mut(index).ok_or_else(|| {
            StorageError::Invalid(format!("a stream chunk names component {index}"))
        })?;
        if crc32fast::hash(bytes) != crc {
            return Err(StorageError::Corrupt {
                file: part.path.clone(),
                offset,
                reason: "stream chunk checksum mismatch".into(),
            });
        }
        let end = offset + bytes.len() as u64;
        if offset != part.written || end > part.len {
            let why = format!(
                "a stream chunk of {} at {offset}..{end}, expected at {} of {}",
                part.path.display(),
                part.written,
                part.len
            );
            return Err(StorageError::Invalid(why));
        }
        part.file
            .write_all(bytes)
            .map_err(|e| StorageError::io(&part.path, e))?;
        part.written = end;
        Ok(())
    }

    /// Bytes still to receive of each component, in order.
    pub fn missing(&self) -> Vec<u64> {
        self.parts.iter().map(|p| p.len - p.written).collect()
    }

    /// Syncs every component; fails unless each was received whole.
    fn finish(&self) -> Result<u64> {
        let mut bytes = 0;
        for part in &self.parts {
            if part.written != part.len {
                let why = format!(
                    "{} received {} of {} bytes",
                    part.path.display(),
                    part.written,
                    part.len
                );
                return Err(StorageError::Invalid(why));
            }
            part.file
                .sync_all()
                .map_err(|e| StorageError::io(&part.path, e))?;
            bytes += part.len;
        }
        Ok(bytes)
    }
}

/// Opens the staged SSTable and verifies it whole; a leveled one is put back at level 0
/// (its level belongs to the sender's compaction) and its repair state becomes `repair` (the
/// sender's belongs to the sender's repairs).
fn check(desc: &Descriptor, repair: RepairMark) -> Result<()> {
    let sstable = Sstable::open(desc)?;
    if let Some(problem) = sstable.verify(false, &|_| Ok(()))?.into_iter().next() {
        return Err(problem);
    }
    if sstable.level() != 0 {
        sstable.set_level(0)?;
    }
    if sstable.repair() != repair {
        sstable.set_repair(repair)?;
    }
    Ok(())
}
