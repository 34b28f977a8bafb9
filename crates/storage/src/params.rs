//! A table's storage parameters as the schema states them ([`TableParams`]) and what the engine
//! derives from them ([`TableSettings`]): SSTable write options, the compaction strategy and the
//! tombstone grace period.

use std::collections::BTreeMap;
use std::fmt;

use crate::compaction::{
    from_options, only_purge_repaired_tombstones, CompactionStrategy, SizeTiered,
};
use crate::error::{Result, StorageError};
use crate::sstable::{Compression, WriteOptions, DEFAULT_CHUNK_LENGTH, DEFAULT_FP_CHANCE};

/// Cassandra's default `gc_grace_seconds` (ten days).
pub const DEFAULT_GC_GRACE_SECONDS: i32 = 864_000;

/// The storage-relevant options of one table (`system_schema.tables` columns).
#[derive(Clone, Debug, PartialEq)]
pub struct TableParams {
    pub keyspace: String,
    pub name: String,
    /// The `compaction` map (`class` and strategy options).
    pub compaction: BTreeMap<String, String>,
    /// The `compression` map (`class`, `chunk_length_in_kb`, `enabled`, `compression_level`).
    pub compression: BTreeMap<String, String>,
    pub bloom_filter_fp_chance: f64,
    pub gc_grace_seconds: i32,
    pub default_time_to_live: i32,
    /// The dropped columns (`system_schema.dropped_columns`): each name with its drop time in
    /// microseconds. Compaction purges their cells written at or before it.
    pub dropped_columns: BTreeMap<String, i64>,
}

impl TableParams {
    /// Cassandra's defaults for a table (size-tiered compaction, LZ4 in 16 KiB chunks).
    pub fn new(keyspace: impl Into<String>, name: impl Into<String>) -> Self {
        TableParams {
            keyspace: keyspace.into(),
            name: name.into(),
            compaction: BTreeMap::new(),
            compression: BTreeMap::new(),
            bloom_filter_fp_chance: DEFAULT_FP_CHANCE,
            gc_grace_seconds: DEFAULT_GC_GRACE_SECONDS,
            default_time_to_live: 0,
            dropped_columns: BTreeMap::new(),
        }
    }

    /// The same parameters with the `compaction` map `options`.
    pub fn with_compaction<'a>(
        mut self,
        options: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Self {
        self.compaction = options
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self
    }

    /// Why the engine cannot use these parameters (a compaction sub-option's value, a
    /// compression setting), in Cassandra's words: [`settings`](Self::settings) fails for the
    /// same reason.
    pub fn check(&self) -> std::result::Result<(), String> {
        self.strategy()?;
        compression(&self.compression)?;
        Ok(())
    }

    fn strategy(&self) -> std::result::Result<Box<dyn CompactionStrategy>, String> {
        match self.compaction.is_empty() {
            true => Ok(Box::new(SizeTiered::from_options(&self.compaction)?)),
            false => from_options(&self.compaction),
        }
    }

    /// Validates the parameters and derives the engine's settings.
    pub fn settings(&self) -> Result<TableSettings> {
        let strategy = self.strategy().map_err(|e| self.invalid(&e))?;
        let (compression, chunk_length) =
            compression(&self.compression).map_err(|e| self.invalid(&e))?;
        Ok(TableSettings {
            keyspace: self.keyspace.clone(),
            name: self.name.clone(),
            write: WriteOptions {
                compression,
                chunk_length,
                bloom_fp_chance: self.bloom_filter_fp_chance,
                ..WriteOptions::default()
            },
            gc_grace_seconds: self.gc_grace_seconds.max(0),
            dropped_columns: self.dropped_columns.clone(),
            strategy,
            only_purge_repaired_tombstones: only_purge_repaired_tombstones(&self.compaction),
            autocompaction: self.compaction.get("enabled").is_none_or(|v| v != "false"),
        })
    }

    fn invalid(&self, reason: &str) -> StorageError {
        StorageError::Invalid(format!("table {}.{}: {reason}", self.keyspace, self.name))
    }
}

/// Parses a `compression` map into the algorithm and the chunk length in bytes.
fn compression(
    map: &BTreeMap<String, String>,
) -> std::result::Result<(Compression, usize), String> {
    if map.get("enabled").is_some_and(|v| v == "false") {
        return Ok((Compression::None, DEFAULT_CHUNK_LENGTH));
    }
    let mut algorithm = match map.get("class") {
        Some(class) => Compression::from_class_name(class)
            .ok_or_else(|| format!("unsupported compression class '{class}'"))?,
        None => Compression::default(),
    };
    if let (Compression::Zstd { level }, Some(text)) =
        (&mut algorithm, map.get("compression_level"))
    {
        *level = text
            .parse()
            .map_err(|_| format!("invalid compression_level '{text}'"))?;
    }
    let chunk_length = match map.get("chunk_length_in_kb") {
        Some(text) => text
            .parse::<usize>()
            .ok()
            .and_then(|kb| kb.checked_mul(1024))
            .ok_or_else(|| format!("invalid chunk_length_in_kb '{text}'"))?,
        None => DEFAULT_CHUNK_LENGTH,
    };
    Ok((algorithm, chunk_length))
}

/// What the engine uses of a table's parameters.
pub struct TableSettings {
    pub keyspace: String,
    pub name: String,
    pub write: WriteOptions,
    pub gc_grace_seconds: i32,
    /// Dropped column names and their drop times (microseconds), see [`TableParams`].
    pub dropped_columns: BTreeMap<String, i64>,
    pub strategy: Box<dyn CompactionStrategy>,
    /// The `only_purge_repaired_tombstones` compaction option: compactions of data not all
    /// repaired purge no tombstone.
    pub only_purge_repaired_tombstones: bool,
    /// The `enabled` compaction option: background compactions run.
    pub autocompaction: bool,
}

impl TableSettings {
    /// Cassandra's `gcBefore`: tombstones deleted before this second may be purged.
    pub fn gc_before(&self, now: i32) -> i32 {
        now.saturating_sub(self.gc_grace_seconds)
    }

    /// `gc_before` for a compaction of SSTables all `repaired` or not: the beginning of time
    /// (nothing purged) when tombstones may be purged from repaired data only and some is not.
    pub fn compaction_gc_before(&self, now: i32, repaired: bool) -> i32 {
        if self.only_purge_repaired_tombstones && !repaired {
            i32::MIN
        } else {
            self.gc_before(now)
        }
    }
}

impl fmt::Debug for TableSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{} ({})",
            self.keyspace,
            self.name,
            self.strategy.name()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cassandra_maps_become_settings() {
        let mut params = TableParams::new("ks", "t").with_compaction([
            (
                "class",
                "org.apache.cassandra.db.compaction.LeveledCompactionStrategy",
            ),
            ("sstable_size_in_mb", "1"),
        ]);
        params.compression = BTreeMap::from([
            ("class".into(), "ZstdCompressor".into()),
            ("chunk_length_in_kb".into(), "4".into()),
            ("compression_level".into(), "5".into()),
        ]);
        let settings = params.settings().expect("valid");
        assert_eq!(settings.strategy.name(), "LeveledCompactionStrategy");
        assert_eq!(settings.write.compression, Compression::Zstd { level: 5 });
        assert_eq!(settings.write.chunk_length, 4096);
        assert_eq!(
            settings.gc_before(1_000_000),
            1_000_000 - DEFAULT_GC_GRACE_SECONDS
        );
        params.compression = BTreeMap::from([("enabled".into(), "false".into())]);
        assert_eq!(
            params.settings().expect("valid").write.compression,
            Compression::None
        );
    }

    #[test]
    fn bad_options_name_the_table() {
        let params = TableParams::new("ks", "t").with_compaction([("class", "Nope")]);
        let error = params.settings().expect_err("unknown class").to_string();
        assert!(error.contains("ks.t") && error.contains("Nope"), "{error}");
    }
}
