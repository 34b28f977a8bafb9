//! The guardrails Cassandra checks as it writes SSTables, at flush and compaction: storage
//! reports the partitions and non-frozen collections it writes past the lower thresholds
//! (through the `system` crate, which hands these to storage), and this logs Cassandra's
//! messages (nobody waits, so a failure is logged, not refused).
//! A partition is named `keyspace.table:key on sstable <Data file>` with the key as
//! Cassandra's `AbstractType.getString` prints it (a composite key's parts joined by `:`); a
//! collection `column in row <primary key> in table keyspace.table` with the primary key as
//! CQL literals, in parentheses when it has more than one column. Collections in system
//! keyspaces are not checked, as in Cassandra.
use std::path::Path;
use std::sync::{Arc, Weak};

use schema::{is_system_keyspace, TableMetadata};
use types::value::{calendar, Value};
use types::CqlType;

use super::check::{Notice, Threshold};
use super::Limits;
use crate::keys::KeyLayout;
use crate::processor::QueryProcessor;

/// The lowest value of each guardrail checked as SSTables are written: storage reports what
/// it writes past them (`None`: not checked).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WatchFloors {
    pub partition_size: Option<u64>,
    pub partition_tombstones: Option<u64>,
    pub collection_size: Option<u64>,
    pub collection_items: Option<u64>,
}

/// Where a reported partition or collection was written: its table and partition key.
pub struct WrittenAt<'a> {
    pub keyspace: &'a str,
    pub table: &'a str,
    pub key: &'a [u8],
}

/// The node's partition guardrails: the four thresholds, and the schema to name keys with.
pub struct PartitionGuardrails {
    size: Threshold,
    tombstones: Threshold,
    collection_size: Threshold,
    items: Threshold,
    processor: Weak<QueryProcessor>,
}

impl PartitionGuardrails {
    pub(crate) fn new(limits: &Limits, processor: &Arc<QueryProcessor>) -> PartitionGuardrails {
        PartitionGuardrails {
            size: limits.partition_size(),
            tombstones: limits.partition_tombstones(),
            collection_size: limits.collection_size(),
            items: limits.items_per_collection(),
            processor: Arc::downgrade(processor),
        }
    }

    fn table(&self, keyspace: &str, table: &str) -> Option<Arc<TableMetadata>> {
        let processor = self.processor.upgrade()?;
        let state = processor.schema();
        state.schema.table(keyspace, table).cloned()
    }
}

/// The smaller of a threshold's two values (the warn value unless only fail is set).
fn lowest(t: &Threshold) -> Option<u64> {
    t.warn.or(t.fail).and_then(|v| u64::try_from(v).ok())
}

impl PartitionGuardrails {
    /// The values past which storage reports what it writes.
    pub fn floors(&self) -> WatchFloors {
        WatchFloors {
            partition_size: lowest(&self.size),
            partition_tombstones: lowest(&self.tombstones),
            collection_size: lowest(&self.collection_size),
            collection_items: lowest(&self.items),
        }
    }

    /// A partition of `size` bytes with `tombstones` written to the SSTable `sstable`.
    pub fn partition_written(&self, p: &WrittenAt<'_>, sstable: &Path, size: u64, tombstones: u64) {
        let key = match self.table(p.keyspace, p.table) {
            Some(table) => key_text(&KeyLayout::new(table), p.key),
            None => String::from_utf8_lossy(p.key).into_owned(),
        };
        let what = format!(
            "{}.{}:{key} on sstable {}",
            p.keyspace,
            p.table,
            sstable.display()
        );
        let notice = Notice::background();
        let _ = self.size.guard(size as i64, &what, &notice);
        let _ = self.tombstones.guard(tombstones as i64, &what, &notice);
    }

    /// A non-frozen collection of `size` bytes and `items` live cells written in column
    /// `column` of the row at `clustering` (`None`: the static row).
    pub fn collection_written(
        &self,
        c: &WrittenAt<'_>,
        clustering: Option<&[u8]>,
        column: &[u8],
        size: u64,
        items: u64,
    ) {
        if is_system_keyspace(c.keyspace) {
            return;
        }
        let Some(table) = self.table(c.keyspace, c.table) else {
            return;
        };
        let column = String::from_utf8_lossy(column);
        let is_collection = table.column(&column).is_some_and(|col| {
            col.ty.is_multi_cell()
                && matches!(
                    col.ty,
                    CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..)
                )
        });
        if !is_collection {
            return;
        }
        let key = primary_key_literal(&KeyLayout::new(table), c.key, clustering);
        let what = format!("{column} in row {key} in table {}.{}", c.keyspace, c.table);
        let notice = Notice::background();
        let _ = self.collection_size.guard(size as i64, &what, &notice);
        let _ = self.items.guard(items as i64, &what, &notice);
    }
}

/// A primary key as Cassandra's `primaryKeyAsCQLLiteral`: each column's value as a CQL
/// literal, in parentheses and separated by commas when there is more than one.
pub(crate) fn primary_key_literal(
    layout: &KeyLayout,
    key: &[u8],
    clustering: Option<&[u8]>,
) -> String {
    let partition = layout
        .split_partition_key(key)
        .unwrap_or_else(|_| vec![bytes::Bytes::copy_from_slice(key)]);
    let clustering = clustering
        .and_then(|c| layout.decode_clustering(c).ok())
        .unwrap_or_default();
    let clustering_types = layout.clustering_types.iter().map(|(ty, _)| ty);
    let literals: Vec<String> = layout
        .partition_types
        .iter()
        .zip(partition.iter().map(Some))
        .chain(clustering_types.zip(clustering.iter().map(Option::as_ref)))
        .map(|(ty, bytes)| literal(ty, bytes))
        .collect();
    match literals.as_slice() {
        [one] => one.clone(),
        all => format!("({})", all.join(", ")),
    }
}

fn literal(ty: &CqlType, bytes: Option<&bytes::Bytes>) -> String {
    let Some(bytes) = bytes else {
        return "null".to_string();
    };
    match Value::deserialize(ty, bytes) {
        Ok(value) => value.to_cql_literal(),
        Err(_) => Value::Blob(bytes.clone()).to_cql_literal(),
    }
}

/// A partition key as Cassandra's `getString`: values unquoted (timestamps in ISO 8601 form),
/// a composite's parts escaped
/// (`:` as `\:`, a trailing `\` or `!` followed by `!`) and joined by `:`.
pub(crate) fn key_text(layout: &KeyLayout, key: &[u8]) -> String {
    let Ok(parts) = layout.split_partition_key(key) else {
        return String::from_utf8_lossy(key).into_owned();
    };
    let texts =
        layout
            .partition_types
            .iter()
            .zip(&parts)
            .map(|(ty, bytes)| match Value::deserialize(ty, bytes) {
                Ok(Value::Ascii(s) | Value::Text(s)) => s,
                Ok(blob @ Value::Blob(_)) => {
                    blob.to_cql_literal().trim_start_matches("0x").to_string()
                }
                Ok(Value::Timestamp(millis)) => calendar::format_timestamp_iso(millis),
                Ok(value) => value.to_cql_literal().trim_matches('\'').to_string(),
                Err(_) => String::from_utf8_lossy(bytes).into_owned(),
            });
    if parts.len() == 1 {
        return texts.collect();
    }
    texts.map(|t| escape(&t)).collect::<Vec<_>>().join(":")
}

fn escape(text: &str) -> String {
    let escaped = text.replace(':', "\\:");
    if escaped.ends_with('\\') || escaped.ends_with('!') {
        escaped + "!"
    } else {
        escaped
    }
}
