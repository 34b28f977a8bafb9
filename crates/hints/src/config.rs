//! The service's settings, under Cassandra's cassandra.yaml names.
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

/// How records are stored in new hint files (`hints_compression`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    /// Each record's payload is an LZ4 block.
    Lz4,
}

/// Largest ratio of decompressed to compressed size an LZ4 block can have.
const LZ4_MAX_RATIO: usize = 255;

impl Compression {
    /// A hint's payload as a record stores it.
    pub(crate) fn pack(self, payload: Vec<u8>) -> Vec<u8> {
        match self {
            Compression::None => payload,
            Compression::Lz4 => lz4_flex::block::compress_prepend_size(&payload),
        }
    }

    /// The hint's payload from a record's; `None` if it does not decompress.
    pub(crate) fn unpack(self, stored: Vec<u8>) -> Option<Vec<u8>> {
        match self {
            Compression::None => Some(stored),
            Compression::Lz4 => {
                let claimed = u32::from_le_bytes(stored.get(..4)?.try_into().ok()?) as usize;
                if claimed > (stored.len() - 4).saturating_mul(LZ4_MAX_RATIO) + 16 {
                    return None;
                }
                lz4_flex::block::decompress_size_prepended(&stored).ok()
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HintsConfig {
    pub hints_directory: PathBuf,
    pub hinted_handoff_enabled: bool,
    pub hinted_handoff_disabled_datacenters: BTreeSet<String>,
    /// No hints for a node down longer than this.
    pub max_hint_window: Duration,
    /// Also no hints for a node whose oldest pending hint file is older than the window
    /// (survives restarts of this node, which forget how long a peer has been down).
    pub hint_window_persistent_enabled: bool,
    /// How many hosts receive hints at the same time.
    pub max_hints_delivery_threads: usize,
    /// Bytes per second, divided by the number of other nodes; 0 means unthrottled.
    pub hinted_handoff_throttle: u64,
    /// A host's current file is closed and a new one started past this size.
    pub max_hints_file_size: u64,
    /// No new hints for a host with this many bytes pending; 0 means unlimited.
    pub max_hints_size_per_host: u64,
    /// How often buffered hints are written and synced to their files.
    pub hints_flush_period: Duration,
    pub hints_compression: Compression,
}

impl HintsConfig {
    /// Cassandra 5.0's defaults.
    pub fn new(hints_directory: impl Into<PathBuf>) -> HintsConfig {
        HintsConfig {
            hints_directory: hints_directory.into(),
            hinted_handoff_enabled: true,
            hinted_handoff_disabled_datacenters: BTreeSet::new(),
            max_hint_window: Duration::from_secs(3 * 3600),
            hint_window_persistent_enabled: true,
            max_hints_delivery_threads: 2,
            hinted_handoff_throttle: 1024 * 1024,
            max_hints_file_size: 128 * 1024 * 1024,
            max_hints_size_per_host: 0,
            hints_flush_period: Duration::from_secs(10),
            hints_compression: Compression::None,
        }
    }

    /// The hints settings of a node's configuration.
    pub fn from_config(config: &config::Config) -> HintsConfig {
        let dcs = &config.hinted_handoff_disabled_datacenters;
        let lz4 = config.hints_compression.as_deref() == Some("LZ4Compressor");
        HintsConfig {
            hints_directory: config.hints_directory.clone(),
            hinted_handoff_enabled: config.hinted_handoff_enabled,
            hinted_handoff_disabled_datacenters: dcs.iter().cloned().collect(),
            max_hint_window: config.max_hint_window,
            hint_window_persistent_enabled: config.hint_window_persistent_enabled,
            max_hints_delivery_threads: config.max_hints_delivery_threads.max(1) as usize,
            hinted_handoff_throttle: config.hinted_handoff_throttle.as_bytes(),
            max_hints_file_size: config.max_hints_file_size.as_bytes(),
            max_hints_size_per_host: config.max_hints_size_per_host.as_bytes(),
            hints_flush_period: config.hints_flush_period,
            hints_compression: if lz4 {
                Compression::Lz4
            } else {
                Compression::None
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lz4_packs_and_refuses_garbage() {
        let payload = b"hint hint hint hint hint hint hint hint".to_vec();
        let packed = Compression::Lz4.pack(payload.clone());
        assert!(packed.len() < payload.len());
        assert_eq!(
            Compression::Lz4.unpack(packed.clone()),
            Some(payload.clone())
        );
        assert_eq!(Compression::None.unpack(payload.clone()), Some(payload));
        let mut huge_claim = packed;
        huge_claim[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(Compression::Lz4.unpack(huge_claim), None);
        assert_eq!(Compression::Lz4.unpack(vec![1, 2]), None);
        assert_eq!(Compression::Lz4.unpack(vec![9, 0, 0, 0, 0xff]), None);
    }

    #[test]
    fn node_defaults_are_cassandras() {
        let node = config::Config::default();
        let mut expected = HintsConfig::new(node.hints_directory.clone());
        assert_eq!(HintsConfig::from_config(&node), expected);
        let node = config::Config {
            hints_compression: Some("LZ4Compressor".into()),
            hinted_handoff_disabled_datacenters: vec!["DC2".into()],
            ..node
        };
        expected.hints_compression = Compression::Lz4;
        expected
            .hinted_handoff_disabled_datacenters
            .insert("DC2".into());
        assert_eq!(HintsConfig::from_config(&node), expected);
    }
}
