//! Naming of SSTable components on disk, discovery of complete SSTables in a table directory and
//! removal of the leftovers of interrupted writes.
//!
//! Component files are named `<version tag>-<generation>-<Component>` (`hb-3-Data.db`; files of
//! format version 1 are `ha-…`); while being written they carry a `tmp-` prefix. The TOC is
//! renamed into place last: an SSTable without a TOC is a leftover.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Result, StorageError};
use crate::sstable::format::{version_tag, FORMAT_VERSION, VERSIONS};

/// Prefix of components still being written.
pub(crate) const TMP_PREFIX: &str = "tmp-";

/// One file of an SSTable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Component {
    Data,
    CompressionInfo,
    Index,
    Summary,
    Filter,
    Statistics,
    Toc,
}

impl Component {
    /// Every component, the TOC last (the commit order).
    pub const ALL: [Component; 7] = [
        Component::Data,
        Component::CompressionInfo,
        Component::Index,
        Component::Summary,
        Component::Filter,
        Component::Statistics,
        Component::Toc,
    ];

    /// The file-name suffix of this component.
    pub fn suffix(self) -> &'static str {
        match self {
            Component::Data => "Data.db",
            Component::CompressionInfo => "CompressionInfo.db",
            Component::Index => "Index.db",
            Component::Summary => "Summary.db",
            Component::Filter => "Filter.db",
            Component::Statistics => "Statistics.db",
            Component::Toc => "TOC.txt",
        }
    }

    fn from_suffix(suffix: &str) -> Option<Component> {
        Component::ALL.into_iter().find(|c| c.suffix() == suffix)
    }
}

/// Identifies one SSTable: its table directory, generation number and format version. A
/// generation names one SSTable of its directory whatever its version.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Descriptor {
    pub dir: PathBuf,
    pub generation: u64,
    /// The format version of its files ([`FORMAT_VERSION`] for the SSTables this build writes).
    pub version: u16,
}

impl Descriptor {
    /// An SSTable of the current format version.
    pub fn new(dir: impl Into<PathBuf>, generation: u64) -> Self {
        Descriptor::of_version(dir, generation, FORMAT_VERSION)
    }

    /// An SSTable of format `version`.
    pub fn of_version(dir: impl Into<PathBuf>, generation: u64, version: u16) -> Self {
        Descriptor {
            dir: dir.into(),
            generation,
            version,
        }
    }

    /// The final path of `component`.
    pub fn path(&self, component: Component) -> PathBuf {
        self.dir.join(self.file_name(component))
    }

    /// The temporary path `component` is written to before the commit.
    pub fn tmp_path(&self, component: Component) -> PathBuf {
        let name = format!("{TMP_PREFIX}{}", self.file_name(component));
        self.dir.join(name)
    }

    fn file_name(&self, component: Component) -> String {
        let tag = version_tag(self.version);
        format!("{tag}-{}-{}", self.generation, component.suffix())
    }

    /// The same generation in every format version this build reads.
    pub(crate) fn every_version(&self) -> impl Iterator<Item = Descriptor> + '_ {
        VERSIONS
            .iter()
            .map(|(v, _)| Descriptor::of_version(&self.dir, self.generation, *v))
    }

    /// Deletes the SSTable — the files of its generation, whatever their format version: the
    /// TOC first, so a crash midway leaves only a cleanable leftover.
    pub fn delete(&self) -> Result<()> {
        for desc in self.every_version() {
            for component in Component::ALL.iter().rev() {
                remove_if_exists(&desc.path(*component))?;
            }
        }
        Ok(())
    }
}

/// The name a component travels under in a stream: its file name without the generation
/// (`hb-Data.db`), so the receiver can give the SSTable a generation of its own and streaming
/// itself never looks inside it; the tag says the format version.
pub fn stream_name(version: u16, component: Component) -> String {
    format!("{}-{}", version_tag(version), component.suffix())
}

/// The format version and component a [`stream_name`] names; `None` for a format this build
/// does not read or an unknown component.
pub fn parse_stream_name(name: &str) -> Option<(u16, Component)> {
    let (tag, suffix) = name.split_once('-')?;
    let (version, _) = VERSIONS.iter().find(|(_, t)| *t == tag)?;
    Some((*version, Component::from_suffix(suffix)?))
}

/// What a file name in a table directory denotes.
#[derive(Debug, PartialEq, Eq)]
struct ParsedName {
    tmp: bool,
    version: u16,
    generation: u64,
    component: Component,
}

fn parse_file_name(name: &str) -> Option<ParsedName> {
    let (tmp, rest) = match name.strip_prefix(TMP_PREFIX) {
        Some(rest) => (true, rest),
        None => (false, name),
    };
    let (tag, rest) = rest.split_once('-')?;
    let (version, _) = VERSIONS.iter().find(|(_, t)| *t == tag)?;
    let (generation, suffix) = rest.split_once('-')?;
    Some(ParsedName {
        tmp,
        version: *version,
        generation: generation.parse().ok()?,
        component: Component::from_suffix(suffix)?,
    })
}

/// The complete SSTables of `dir`, by ascending generation. Removes leftovers of interrupted
/// writes — `tmp-` files and components of generations without a TOC — logging each removal.
///
/// Call it at start-up (or when no writer is active in `dir`): it deletes in-progress files.
pub fn list(dir: &Path) -> Result<Vec<Descriptor>> {
    let mut generations: BTreeMap<(u64, u16), Vec<(PathBuf, Component)>> = BTreeMap::new();
    let entries = fs::read_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| StorageError::io(dir, e))?;
        let name = entry.file_name();
        let Some(parsed) = name.to_str().and_then(parse_file_name) else {
            continue;
        };
        let path = entry.path();
        if parsed.tmp {
            tracing::info!("removing unfinished SSTable file {}", path.display());
            remove_if_exists(&path)?;
        } else {
            let files = generations
                .entry((parsed.generation, parsed.version))
                .or_default();
            files.push((path, parsed.component));
        }
    }
    let mut complete = Vec::new();
    for ((generation, version), files) in generations {
        if files.iter().any(|(_, c)| *c == Component::Toc) {
            complete.push(Descriptor::of_version(dir, generation, version));
            continue;
        }
        for (path, _) in files {
            tracing::info!(
                "removing component of uncommitted SSTable {}",
                path.display()
            );
            remove_if_exists(&path)?;
        }
    }
    Ok(complete)
}

pub(crate) fn remove_if_exists(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(StorageError::io(path, e)),
        _ => Ok(()),
    }
}

/// Makes renames and creations in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StorageError::io(dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let d = Descriptor::new("/t", 42);
        for c in Component::ALL {
            let name = d
                .path(c)
                .file_name()
                .and_then(|n| n.to_str())
                .map(String::from);
            let parsed = name.as_deref().and_then(parse_file_name);
            assert_eq!(
                parsed,
                Some(ParsedName {
                    tmp: false,
                    version: FORMAT_VERSION,
                    generation: 42,
                    component: c
                })
            );
            let tmp = d.tmp_path(c);
            let parsed = tmp
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(parse_file_name);
            assert!(parsed.is_some_and(|p| p.tmp));
        }
        assert_eq!(parse_file_name("ha-x-Data.db"), None);
        assert_eq!(parse_file_name("hz-1-Data.db"), None);
        assert_eq!(parse_file_name("ha-1-Other.db"), None);
        let old = parse_file_name("ha-7-Index.db").map(|p| (p.version, p.generation));
        assert_eq!(old, Some((1, 7)));
        let path = Descriptor::of_version("/t", 7, 1).path(Component::Index);
        assert_eq!(path, Path::new("/t/ha-7-Index.db"));
        for version in [1, FORMAT_VERSION] {
            for c in Component::ALL {
                assert_eq!(
                    parse_stream_name(&stream_name(version, c)),
                    Some((version, c))
                );
            }
        }
        assert_eq!(stream_name(FORMAT_VERSION, Component::Data), "hb-Data.db");
        assert_eq!(parse_stream_name("zz-Data.db"), None);
        assert_eq!(parse_stream_name("ha-Other.db"), None);
    }

    #[test]
    fn list_keeps_committed_and_removes_leftovers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let touch = |p: PathBuf| fs::write(p, b"x").expect("write");
        let (done, partial, tmp) = (
            Descriptor::new(dir.path(), 1),
            Descriptor::new(dir.path(), 2),
            Descriptor::new(dir.path(), 3),
        );
        touch(done.path(Component::Data));
        touch(done.path(Component::Toc));
        touch(partial.path(Component::Data));
        touch(partial.path(Component::Index));
        touch(tmp.tmp_path(Component::Data));
        touch(dir.path().join("unrelated.txt"));
        let old = Descriptor::of_version(dir.path(), 4, 1);
        touch(old.path(Component::Data));
        touch(old.path(Component::Toc));
        let listed = list(dir.path()).expect("list");
        assert_eq!(listed, vec![done.clone(), old.clone()]);
        Descriptor::new(dir.path(), 4).delete().expect("delete");
        assert!(
            !old.path(Component::Data).exists(),
            "a generation goes whatever its version"
        );
        assert!(done.path(Component::Data).exists());
        assert!(!partial.path(Component::Data).exists());
        assert!(!partial.path(Component::Index).exists());
        assert!(!tmp.tmp_path(Component::Data).exists());
        assert!(dir.path().join("unrelated.txt").exists());
        done.delete().expect("delete");
        assert!(list(dir.path()).expect("list").is_empty());
    }
}
