//! Reading a cassandra.yaml-style file into a [`Config`]: old names modernized, unknown keys
//! refused as Cassandra does, keys Helenus does not use collected, paths made absolute.

use std::path::{Component, Path, PathBuf};

use crate::config::{CommitLogSync, Config};
use crate::error::ConfigError;
use crate::keys::CASSANDRA_KEYS;
use crate::legacy;
use crate::settings::{apply, HELENUS_KEYS};
use crate::snitch::{Location, Snitch, NOT_FOUND, RACKDC_FILE};
use crate::values::Value;
use crate::yaml::{parse_top_level, Node};

/// A loaded configuration and the keys it set that Helenus ignores.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub config: Config,
    /// Cassandra keys present in the file that Helenus does not use, in file order.
    pub ignored: Vec<String>,
}

/// Loads `path`; relative directories resolve against the current working directory. With
/// GossipingPropertyFileSnitch, the data center and rack come from `cassandra-rackdc.properties`
/// in the same directory.
pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let base = std::env::current_dir().map_err(|source| ConfigError::Io {
        path: PathBuf::from("."),
        source,
    })?;
    let mut loaded = load_str(&text, &base)?;
    if loaded.config.endpoint_snitch == Snitch::GossipingPropertyFile {
        let rackdc = path.with_file_name(RACKDC_FILE);
        read_location(&mut loaded.config, &rackdc)?;
    }
    Ok(loaded)
}

/// Sets the data center and rack from `cassandra-rackdc.properties`, which must exist and
/// name both, as in Cassandra 5.0.
fn read_location(config: &mut Config, rackdc: &Path) -> Result<(), ConfigError> {
    let snitch = config.endpoint_snitch;
    let refused = |reason: String| ConfigError::invalid("endpoint_snitch", snitch, reason);
    let text = match std::fs::read_to_string(rackdc) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(refused(format!(
                "{NOT_FOUND} ({} does not exist)",
                rackdc.display()
            )))
        }
        Err(source) => {
            return Err(ConfigError::Io {
                path: rackdc.to_path_buf(),
                source,
            })
        }
    };
    config.location = Location::from_properties(&text).map_err(refused)?;
    Ok(())
}

/// Loads YAML text; relative directories resolve against `base`. The data center and rack of
/// GossipingPropertyFileSnitch are read by [`load`] from the file beside the yaml; here they
/// stay SimpleSnitch's.
pub fn load_str(text: &str, base: &Path) -> Result<Loaded, ConfigError> {
    let entries = parse_top_level(text).map_err(ConfigError::Yaml)?;
    legacy::check_conflicts(entries.iter().map(|(k, _)| k.as_str()))?;
    refuse_unknown(&entries)?;
    let mut config = Config::default();
    let mut ignored = Vec::new();
    for (key, node) in &entries {
        if !apply_entry(&mut config, key, node)? && *node != Node::Null {
            ignored.push(key.clone());
        }
    }
    if config.commitlog_sync != CommitLogSync::Periodic && !sets(&entries, "commitlog_sync_period")
    {
        config.commitlog_sync_period = std::time::Duration::ZERO;
    }
    if !sets(&entries, "metadata_directory") {
        config.metadata_directory = metadata_beside_data(&config);
    }
    resolve_directories(&mut config, base);
    config.validate()?;
    Ok(Loaded { config, ignored })
}

/// Applies one entry; `Ok(false)` when Helenus does not use the key. Errors name the key as written.
fn apply_entry(config: &mut Config, key: &str, node: &Node) -> Result<bool, ConfigError> {
    let (name, modern) = legacy::modernize(key, node.clone())?;
    if modern == Node::Null {
        return Ok(false);
    }
    apply(
        config,
        Value {
            key: name,
            node: &modern,
        },
    )
    .map_err(|err| match err {
        ConfigError::Invalid { reason, .. } if name != key => {
            ConfigError::invalid(key, node, reason)
        }
        other => other,
    })
}

fn sets(entries: &[(String, Node)], key: &str) -> bool {
    entries
        .iter()
        .any(|(k, v)| legacy::new_name(k) == key && *v != Node::Null)
}

fn refuse_unknown(entries: &[(String, Node)]) -> Result<(), ConfigError> {
    let unknown: Vec<String> = entries
        .iter()
        .map(|(k, _)| k)
        .filter(|k| !is_known(k))
        .cloned()
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(ConfigError::UnknownKeys(unknown))
    }
}

fn is_known(key: &str) -> bool {
    CASSANDRA_KEYS.binary_search(&key).is_ok()
        || legacy::is_old_name(key)
        || HELENUS_KEYS.contains(&key)
}

fn resolve_directories(config: &mut Config, base: &Path) {
    for dir in &mut config.data_file_directories {
        *dir = absolute(base, dir);
    }
    for dir in [
        &mut config.commitlog_directory,
        &mut config.saved_caches_directory,
        &mut config.hints_directory,
        &mut config.metadata_directory,
    ] {
        *dir = absolute(base, dir);
    }
    if let Some(file) = &mut config.admin_auth_token_file {
        *file = absolute(base, file);
    }
}

/// `metadata` beside the first data directory (`./data/metadata` for `./data/data`).
fn metadata_beside_data(config: &Config) -> PathBuf {
    match config.data_file_directories.first() {
        Some(data) => data.parent().unwrap_or(Path::new("")).join("metadata"),
        None => config.metadata_directory.clone(),
    }
}

/// `base/path` with `.` components dropped (absolute paths stay as they are).
fn absolute(base: &Path, path: &Path) -> PathBuf {
    base.join(path)
        .components()
        .filter(|c| *c != Component::CurDir)
        .collect()
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
