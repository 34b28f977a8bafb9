//! `HintsCatalog`: the stores by host, loaded at start-up from the files in `hints_directory`.
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use net::HostId;
use parking_lot::Mutex;
use tracing::{error, info};

use crate::config::Compression;
use crate::descriptor::parse_file_name;
use crate::reader::{HintsReader, OpenError};
use crate::store::{HintsFile, HintsStore};

pub struct HintsCatalog {
    dir: PathBuf,
    compression: Compression,
    buffered_total: Arc<AtomicU64>,
    stores: Mutex<HashMap<HostId, Arc<HintsStore>>>,
}

/// What start-up found.
pub struct Loaded {
    pub catalog: HintsCatalog,
    /// Files whose header is unreadable; left in place, and not delivered.
    pub corrupt: u64,
}

impl HintsCatalog {
    /// Creates `dir` if needed and finds the hints files in it. Blocking.
    pub fn load(dir: &Path, compression: Compression) -> io::Result<Loaded> {
        std::fs::create_dir_all(dir)?;
        let mut by_host: HashMap<HostId, Vec<HintsFile>> = HashMap::new();
        let mut corrupt = 0;
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if parse_file_name(name).is_none() {
                continue;
            }
            match found(&path, name) {
                Ok(Some(file)) => by_host
                    .entry(file.descriptor.host_id)
                    .or_default()
                    .push(file),
                Ok(None) => {}
                Err(why) => {
                    error!(
                        "hints file {} is unreadable ({why}); it is not delivered, remove it by hand",
                        path.display()
                    );
                    corrupt += 1;
                }
            }
        }
        let buffered_total = Arc::new(AtomicU64::new(0));
        let stores = by_host.into_iter().map(|(host_id, files)| {
            let store = HintsStore::new(host_id, dir, compression, buffered_total.clone(), files);
            (host_id, Arc::new(store))
        });
        let stores = Mutex::new(stores.collect());
        let catalog = HintsCatalog {
            dir: dir.to_path_buf(),
            compression,
            buffered_total,
            stores,
        };
        Ok(Loaded { catalog, corrupt })
    }

    /// Bytes buffered in all stores.
    pub fn buffered_total(&self) -> &AtomicU64 {
        &self.buffered_total
    }

    pub fn get(&self, host_id: HostId) -> Option<Arc<HintsStore>> {
        self.stores.lock().get(&host_id).cloned()
    }

    pub fn get_or_create(&self, host_id: HostId) -> Arc<HintsStore> {
        let mut stores = self.stores.lock();
        let store = stores.entry(host_id).or_insert_with(|| {
            let total = self.buffered_total.clone();
            Arc::new(HintsStore::new(
                host_id,
                &self.dir,
                self.compression,
                total,
                Vec::new(),
            ))
        });
        store.clone()
    }

    /// Every store, in host id order.
    pub fn stores(&self) -> Vec<Arc<HintsStore>> {
        let mut stores: Vec<_> = self.stores.lock().values().cloned().collect();
        stores.sort_by_key(|s| s.host_id);
        stores
    }

    pub fn remove(&self, host_id: HostId) -> Option<Arc<HintsStore>> {
        self.stores.lock().remove(&host_id)
    }
}

/// The file at `path` if its header matches its name; an empty file (cut before its header
/// was written) is deleted.
fn found(path: &Path, name: &str) -> Result<Option<HintsFile>, String> {
    if std::fs::metadata(path).map_err(|e| e.to_string())?.len() == 0 {
        info!("deleting empty hints file {}", path.display());
        std::fs::remove_file(path).map_err(|e| e.to_string())?;
        return Ok(None);
    }
    let reader = HintsReader::open(path).map_err(|e: OpenError| e.to_string())?;
    let descriptor = reader.descriptor();
    if descriptor.file_name() != name {
        return Err(format!("its header names {}", descriptor.file_name()));
    }
    let size = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    Ok(Some(HintsFile { descriptor, size }))
}
