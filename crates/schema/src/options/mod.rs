//! Table options (`WITH ...`): every Cassandra 5.0 table option with its default, applying
//! `CREATE`/`ALTER TABLE` options with Cassandra's validation and error messages.
mod auto_repair;
mod caching;
mod compaction;
mod compression;
mod retry;
mod values;

use crate::error::SchemaError;
pub use auto_repair::{auto_repair_setting, AutoRepairSetting};
use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;
pub use values::java_double;
use values::{constant, map, parse_bool, parse_double, parse_int};

/// The largest `default_time_to_live` (20 years), as Cassandra's `Attributes.MAX_TTL`.
pub const MAX_TTL: i32 = 630_720_000;
/// Cassandra's `BloomCalculations.minSupportedBloomFilterFpChance()`.
const MIN_BLOOM_FILTER_FP_CHANCE: f64 = 6.71e-5;

/// Every option name `CREATE TABLE ... WITH` accepts, including the table `id`.
pub const OPTION_NAMES: &[&str] = &[
    "additional_write_policy",
    "allow_auto_snapshot",
    "auto_repair",
    "bloom_filter_fp_chance",
    "caching",
    "cdc",
    "comment",
    "compaction",
    "compression",
    "crc_check_chance",
    "default_time_to_live",
    "extensions",
    "gc_grace_seconds",
    "id",
    "incremental_backups",
    "max_index_interval",
    "memtable",
    "memtable_flush_period_in_ms",
    "min_index_interval",
    "read_repair",
    "speculative_retry",
];

/// A table option's value as written in CQL: a constant or a `{'k': 'v'}` map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionValue {
    Constant(String),
    Map(Vec<(String, String)>),
}

/// A table's options. Maps hold exactly what Cassandra stores (full class names, defaults
/// filled in); policies are in their canonical text form.
#[derive(Clone, Debug, PartialEq)]
pub struct TableOptions {
    pub additional_write_policy: String,
    pub allow_auto_snapshot: bool,
    /// `auto_repair` (Cassandra 5.1 / CEP-37): empty while never set.
    pub auto_repair: BTreeMap<String, String>,
    pub bloom_filter_fp_chance: f64,
    pub caching: BTreeMap<String, String>,
    pub cdc: bool,
    pub comment: String,
    pub compaction: BTreeMap<String, String>,
    pub compression: BTreeMap<String, String>,
    pub memtable: String,
    pub crc_check_chance: f64,
    pub default_time_to_live: i32,
    pub extensions: BTreeMap<String, Bytes>,
    pub gc_grace_seconds: i32,
    pub incremental_backups: bool,
    pub max_index_interval: i32,
    pub memtable_flush_period_in_ms: i32,
    pub min_index_interval: i32,
    pub read_repair: String,
    pub speculative_retry: String,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            additional_write_policy: "99p".into(),
            allow_auto_snapshot: true,
            auto_repair: BTreeMap::new(),
            bloom_filter_fp_chance: 0.01,
            caching: caching::default_caching(),
            cdc: false,
            comment: String::new(),
            compaction: compaction::default_compaction(),
            compression: compression::default_compression(),
            memtable: "default".into(),
            crc_check_chance: 1.0,
            default_time_to_live: 0,
            extensions: BTreeMap::new(),
            gc_grace_seconds: 864_000,
            incremental_backups: true,
            max_index_interval: 2048,
            memtable_flush_period_in_ms: 0,
            min_index_interval: 128,
            read_repair: "BLOCKING".into(),
            speculative_retry: "99p".into(),
        }
    }
}

impl TableOptions {
    /// The options of a table being created: defaults, then `options`. As in Cassandra, the
    /// bloom filter chance defaults to 0.1 instead of 0.01 for leveled compaction.
    pub fn for_new_table(options: &[(String, OptionValue)]) -> Result<TableOptions, SchemaError> {
        let mut table = TableOptions::default();
        table.apply_options(options)?;
        let explicit_bloom = options
            .iter()
            .any(|(name, _)| name == "bloom_filter_fp_chance");
        if !explicit_bloom && compaction::is_leveled(&table.compaction) {
            table.bloom_filter_fp_chance = 0.1;
        }
        Ok(table)
    }

    /// Applies `CREATE`/`ALTER TABLE ... WITH` options; on error nothing changes. `id` is
    /// checked for format only (see [`table_id_option`]); `extensions` is accepted and
    /// ignored, as Cassandra 5.0 does.
    pub fn apply_options(&mut self, options: &[(String, OptionValue)]) -> Result<(), SchemaError> {
        check_names(options)?;
        let mut next = self.clone();
        for (name, value) in options {
            next.apply_one(name, value)?;
        }
        next.validate()?;
        *self = next;
        Ok(())
    }

    fn apply_one(&mut self, name: &str, value: &OptionValue) -> Result<(), SchemaError> {
        match name {
            "auto_repair" => self.auto_repair = auto_repair::parse_auto_repair(map(name, value)?)?,
            "caching" => self.caching = caching::parse_caching(map(name, value)?)?,
            "compaction" => self.compaction = compaction::parse_compaction(map(name, value)?)?,
            "compression" => self.compression = compression::parse_compression(map(name, value)?)?,
            "extensions" => {}
            _ => self.apply_constant(name, constant(name, value)?)?,
        }
        Ok(())
    }

    fn apply_constant(&mut self, name: &str, text: &str) -> Result<(), SchemaError> {
        match name {
            "additional_write_policy" => {
                self.additional_write_policy = retry::parse_retry_policy(name, text)?
            }
            "speculative_retry" => self.speculative_retry = retry::parse_retry_policy(name, text)?,
            "read_repair" => self.read_repair = retry::parse_read_repair(text)?,
            "memtable" => self.memtable = retry::parse_memtable(text)?,
            "comment" => self.comment = text.to_string(),
            "id" => {
                parse_table_id(text)?;
            }
            "allow_auto_snapshot" => self.allow_auto_snapshot = parse_bool(name, text)?,
            "cdc" => self.cdc = parse_bool(name, text)?,
            "incremental_backups" => self.incremental_backups = parse_bool(name, text)?,
            "bloom_filter_fp_chance" => self.bloom_filter_fp_chance = parse_double(name, text)?,
            "crc_check_chance" => self.crc_check_chance = parse_double(name, text)?,
            _ => *self.int_option(name)? = parse_int(name, text)?,
        }
        Ok(())
    }

    fn int_option(&mut self, name: &str) -> Result<&mut i32, SchemaError> {
        match name {
            "default_time_to_live" => Ok(&mut self.default_time_to_live),
            "gc_grace_seconds" => Ok(&mut self.gc_grace_seconds),
            "max_index_interval" => Ok(&mut self.max_index_interval),
            "memtable_flush_period_in_ms" => Ok(&mut self.memtable_flush_period_in_ms),
            "min_index_interval" => Ok(&mut self.min_index_interval),
            _ => Err(unknown_property(name)),
        }
    }

    /// Cassandra's `TableParams.validate` range checks.
    fn validate(&self) -> Result<(), SchemaError> {
        let bloom = self.bloom_filter_fp_chance;
        if bloom <= MIN_BLOOM_FILTER_FP_CHANCE || bloom > 1.0 {
            return fail(format!(
                "bloom_filter_fp_chance must be larger than {} and less than or equal to 1.0 (got {})",
                java_double(MIN_BLOOM_FILTER_FP_CHANCE),
                java_double(bloom)
            ));
        }
        if !(0.0..=1.0).contains(&self.crc_check_chance) {
            return fail(format!(
                "crc_check_chance must be larger than or equal to 0 and smaller than or equal to 1.0 (got {})",
                java_double(self.crc_check_chance)
            ));
        }
        if self.default_time_to_live > MAX_TTL {
            return fail(format!(
                "default_time_to_live must be less than or equal to {MAX_TTL} (got {})",
                self.default_time_to_live
            ));
        }
        self.validate_non_negative()?;
        self.validate_index_intervals()
    }

    fn validate_non_negative(&self) -> Result<(), SchemaError> {
        let checks = [
            ("default_time_to_live", self.default_time_to_live),
            ("gc_grace_seconds", self.gc_grace_seconds),
            (
                "memtable_flush_period_in_ms",
                self.memtable_flush_period_in_ms,
            ),
        ];
        match checks.iter().find(|(_, value)| *value < 0) {
            Some((name, value)) => fail(format!(
                "{name} must be greater than or equal to 0 (got {value})"
            )),
            None => Ok(()),
        }
    }

    fn validate_index_intervals(&self) -> Result<(), SchemaError> {
        if self.min_index_interval < 1 {
            return fail(format!(
                "min_index_interval must be greater than or equal to 1 (got {})",
                self.min_index_interval
            ));
        }
        if self.max_index_interval < self.min_index_interval {
            return fail(format!(
                "max_index_interval must be greater than or equal to min_index_interval ({}) (got {})",
                self.min_index_interval, self.max_index_interval
            ));
        }
        Ok(())
    }
}

/// The `id` option of `CREATE TABLE`, if given.
pub fn table_id_option(options: &[(String, OptionValue)]) -> Result<Option<Uuid>, SchemaError> {
    match options.iter().find(|(name, _)| name == "id") {
        Some((name, value)) => parse_table_id(constant(name, value)?).map(Some),
        None => Ok(None),
    }
}

fn parse_table_id(text: &str) -> Result<Uuid, SchemaError> {
    Uuid::parse_str(text).map_err(|_| SchemaError::Config("Invalid table id".into()))
}

fn check_names(options: &[(String, OptionValue)]) -> Result<(), SchemaError> {
    let mut seen = BTreeSet::new();
    for (name, _) in options {
        if !OPTION_NAMES.contains(&name.as_str()) {
            return Err(unknown_property(name));
        }
        if !seen.insert(name.as_str()) {
            return Err(SchemaError::Syntax(format!(
                "Multiple definition for property '{name}'"
            )));
        }
    }
    Ok(())
}

fn unknown_property(name: &str) -> SchemaError {
    SchemaError::Syntax(format!("Unknown property '{name}'"))
}

fn fail(message: String) -> Result<(), SchemaError> {
    Err(SchemaError::Config(message))
}

#[cfg(test)]
mod tests;

/// Option map entries as the parsers take them, from string literals (for tests).
#[cfg(test)]
pub(crate) fn owned_pairs(entries: &[(&str, &str)]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
