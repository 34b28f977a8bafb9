//! The keyspaces every Cassandra 5.0 node has (`system_schema`, `system`, `system_auth`,
//! `system_distributed`, `system_traces`) as real metadata, with Cassandra's table ids.
mod defs;
mod virtual_defs;

use crate::column::ColumnMetadata;
use crate::error::SchemaError;
use crate::keyspace::KeyspaceMetadata;
use crate::options::TableOptions;
use crate::table::{system_table_id, TableMetadata};
use defs::{Kind, TableDef};
use std::collections::BTreeMap;
use types::CqlType;

/// Keyspaces that are never loaded from or written to `system_schema` by users: the
/// fixed ones below plus Cassandra's virtual keyspaces.
const SYSTEM_NAMES: &[&str] = &[
    "system",
    "system_auth",
    "system_distributed",
    "system_schema",
    "system_traces",
    "system_views",
    "system_virtual_schema",
];

/// How a system keyspace replicates and the options its tables share.
struct KeyspaceDef {
    name: &'static str,
    /// `None` for LocalStrategy, else SimpleStrategy's replication factor.
    replication_factor: Option<&'static str>,
    gc_grace_seconds: i32,
    memtable_flush_period_in_ms: i32,
    tables: &'static [TableDef],
}

const KEYSPACES: &[KeyspaceDef] = &[
    KeyspaceDef {
        name: "system_schema",
        replication_factor: None,
        gc_grace_seconds: 604_800,
        memtable_flush_period_in_ms: 3_600_000,
        tables: defs::SYSTEM_SCHEMA,
    },
    KeyspaceDef {
        name: "system",
        replication_factor: None,
        gc_grace_seconds: 0,
        memtable_flush_period_in_ms: 3_600_000,
        tables: defs::SYSTEM,
    },
    KeyspaceDef {
        name: "system_auth",
        replication_factor: Some("1"),
        gc_grace_seconds: 7_776_000,
        memtable_flush_period_in_ms: 0,
        tables: defs::SYSTEM_AUTH,
    },
    KeyspaceDef {
        name: "system_distributed",
        replication_factor: Some("3"),
        gc_grace_seconds: 864_000,
        memtable_flush_period_in_ms: 0,
        tables: defs::SYSTEM_DISTRIBUTED,
    },
    KeyspaceDef {
        name: "system_traces",
        replication_factor: Some("2"),
        gc_grace_seconds: 0,
        memtable_flush_period_in_ms: 0,
        tables: defs::SYSTEM_TRACES,
    },
];

/// The virtual keyspaces: never stored, their tables are computed by the node when read.
const VIRTUAL_KEYSPACES: &[KeyspaceDef] = &[
    KeyspaceDef {
        name: "system_views",
        replication_factor: None,
        gc_grace_seconds: 864_000,
        memtable_flush_period_in_ms: 0,
        tables: virtual_defs::SYSTEM_VIEWS,
    },
    KeyspaceDef {
        name: "system_virtual_schema",
        replication_factor: None,
        gc_grace_seconds: 864_000,
        memtable_flush_period_in_ms: 0,
        tables: virtual_defs::SYSTEM_VIRTUAL_SCHEMA,
    },
];

/// The virtual keyspaces (`system_views`, `system_virtual_schema`) with the virtual tables
/// Helenus serves, as Cassandra 5.0.4 defines them.
pub fn virtual_keyspaces() -> Vec<KeyspaceMetadata> {
    VIRTUAL_KEYSPACES.iter().map(keyspace).collect()
}

/// Whether `name` is one of Cassandra's virtual keyspaces.
pub fn is_virtual_keyspace(name: &str) -> bool {
    VIRTUAL_KEYSPACES.iter().any(|k| k.name == name)
}

/// Whether `name` is one of Cassandra's system (or virtual) keyspaces.
pub fn is_system_keyspace(name: &str) -> bool {
    SYSTEM_NAMES.contains(&name)
}

/// The system keyspaces with every table Cassandra 5.0.4 defines in them.
pub fn system_keyspaces() -> Vec<KeyspaceMetadata> {
    KEYSPACES.iter().map(keyspace).collect()
}

fn keyspace(def: &KeyspaceDef) -> KeyspaceMetadata {
    let mut replication = BTreeMap::new();
    let class = match def.replication_factor {
        None => "org.apache.cassandra.locator.LocalStrategy",
        Some(factor) => {
            replication.insert("replication_factor".to_string(), factor.to_string());
            "org.apache.cassandra.locator.SimpleStrategy"
        }
    };
    replication.insert("class".to_string(), class.to_string());
    let mut keyspace = KeyspaceMetadata::new(def.name, replication, true);
    // The definitions are constant and checked by tests; a table that failed to build would
    // show up there as a missing table.
    for table in def.tables.iter().filter_map(|t| table(def, t).ok()) {
        keyspace
            .tables
            .insert(table.name.clone(), std::sync::Arc::new(table));
    }
    keyspace
}

fn table(keyspace: &KeyspaceDef, def: &TableDef) -> Result<TableMetadata, SchemaError> {
    let columns = def
        .columns
        .iter()
        .map(|(name, ty, kind)| column(name, ty, kind))
        .collect::<Result<Vec<_>, _>>()?;
    let id = system_table_id(keyspace.name, def.name);
    TableMetadata::new(keyspace.name, def.name, id, columns, options(keyspace, def))
}

fn column(name: &str, ty: &str, kind: &Kind) -> Result<ColumnMetadata, SchemaError> {
    let ty = CqlType::parse(ty, &|_| None).map_err(|e| SchemaError::Invalid(e.to_string()))?;
    Ok(match kind {
        Kind::P(position) => ColumnMetadata::partition_key(name, ty, *position),
        Kind::C(position, order) => ColumnMetadata::clustering(name, ty, *position, *order),
        Kind::R => ColumnMetadata::regular(name, ty),
    })
}

fn options(keyspace: &KeyspaceDef, def: &TableDef) -> TableOptions {
    let mut options = TableOptions {
        comment: def.comment.to_string(),
        gc_grace_seconds: keyspace.gc_grace_seconds,
        memtable_flush_period_in_ms: keyspace.memtable_flush_period_in_ms,
        default_time_to_live: def.default_time_to_live,
        ..TableOptions::default()
    };
    if let Some(compaction) = def.compaction {
        options.compaction = compaction
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    }
    options
}

#[cfg(test)]
mod tests;
