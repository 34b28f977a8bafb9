//! What the repair scheduler keeps on this node across restarts, in `auto_repair.json` beside
//! the first data directory: the tables `nodetool setautorepairconfig` turned on here. When
//! each range was last repaired is not here but in the metadata log (`metadata::RepairLedger`),
//! where every node reads it, so a restarted or replaced node resumes where the cluster left
//! off. The file ends with a line holding the CRC32 of the JSON above it, checked on read; a
//! file that fails the check is set aside (renamed `.corrupt`) and the scheduler starts with no
//! table turned on here. Writes go to a temporary file, synced, then renamed over the old one.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

/// A table, by keyspace and name.
pub type TableName = (String, String);

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Persisted {
    /// The tables the scheduler repairs.
    pub tables: BTreeSet<TableName>,
}

/// The scheduler's state, held in memory and written through to its file.
pub struct Store {
    path: Option<PathBuf>,
    state: Mutex<Persisted>,
}

impl Store {
    /// The state in `path` (none: kept in memory only); empty when there is no file yet.
    pub fn open(path: Option<PathBuf>) -> Store {
        let state = path.as_deref().map(read).unwrap_or_default();
        Store {
            path,
            state: Mutex::new(state),
        }
    }

    pub fn get(&self) -> Persisted {
        self.state.lock().clone()
    }

    /// Changes the state and writes it; a failed write is logged (the change stays in memory).
    pub fn change(&self, change: impl FnOnce(&mut Persisted)) {
        let mut state = self.state.lock();
        change(&mut state);
        if let Some(path) = &self.path {
            if let Err(e) = write(path, &state) {
                tracing::warn!("could not save the repair scheduler's state to {path:?}: {e}");
            }
        }
    }
}

fn read(path: &Path) -> Persisted {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Persisted::default(),
        Err(e) => {
            tracing::warn!("could not read the repair scheduler's state {path:?}: {e}");
            return Persisted::default();
        }
    };
    match decode(&text) {
        Ok(state) => state,
        Err(why) => {
            tracing::warn!(
                "the repair scheduler's state {path:?} is unreadable ({why}); starting over"
            );
            let _ = fs::rename(path, path.with_extension("corrupt"));
            Persisted::default()
        }
    }
}

fn encode(state: &Persisted) -> Result<String, String> {
    let body = serde_json::to_string(state).map_err(|e| e.to_string())?;
    Ok(format!(
        "{body}\n{:08x}\n",
        crc32fast::hash(body.as_bytes())
    ))
}

fn decode(text: &str) -> Result<Persisted, String> {
    let (body, crc) = text
        .trim_end()
        .rsplit_once('\n')
        .ok_or("no checksum line")?;
    let expected = u32::from_str_radix(crc.trim(), 16).map_err(|_| "bad checksum line")?;
    if crc32fast::hash(body.as_bytes()) != expected {
        return Err("checksum mismatch".into());
    }
    serde_json::from_str(body).map_err(|e| e.to_string())
}

fn write(path: &Path, state: &Persisted) -> Result<(), String> {
    let text = encode(state)?;
    let temporary = path.with_extension("tmp");
    let mut file = fs::File::create(&temporary).map_err(|e| e.to_string())?;
    file.write_all(text.as_bytes()).map_err(|e| e.to_string())?;
    file.sync_all().map_err(|e| e.to_string())?;
    fs::rename(&temporary, path).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_survives_a_restart_and_a_damaged_file_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auto_repair.json");
        let table = ("ks".to_string(), "t".to_string());
        let store = Store::open(Some(path.clone()));
        store.change(|s| {
            s.tables.insert(table.clone());
        });
        let again = Store::open(Some(path.clone())).get();
        assert!(again.tables.contains(&table));

        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, text.replace("\"ks\"", "\"kz\"")).unwrap();
        assert_eq!(Store::open(Some(path.clone())).get(), Persisted::default());
        assert!(path.with_extension("corrupt").exists());
    }
}
