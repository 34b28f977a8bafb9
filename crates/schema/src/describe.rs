//! DESCRIBE output: `CREATE KEYSPACE`, `CREATE TABLE` and `CREATE TYPE` statements formatted
//! exactly as Cassandra 5.0 prints them.
use crate::column::{ClusteringOrder, ColumnKind, ColumnMetadata};
use crate::describe_virtual::{describe_virtual_keyspace, describe_virtual_table};
use crate::keyspace::KeyspaceMetadata;
use crate::options::{java_double, TableOptions};
use crate::quote::{quote_identifier, quote_string};
use crate::system::is_virtual_keyspace;
use crate::table::{DroppedColumn, TableMetadata};
use std::collections::BTreeMap;
use types::UdtType;

/// `CREATE KEYSPACE ks WITH replication = {...}  AND durable_writes = true;`
pub fn describe_keyspace(keyspace: &KeyspaceMetadata) -> String {
    if is_virtual_keyspace(&keyspace.name) {
        return describe_virtual_keyspace(keyspace);
    }
    let mut entries: Vec<(&str, &str)> = Vec::new();
    if let Some(class) = keyspace.replication_class() {
        entries.push(("class", class));
    }
    entries.extend(
        keyspace
            .replication
            .iter()
            .filter(|(k, _)| k.as_str() != "class")
            .map(|(k, v)| (k.as_str(), v.as_str())),
    );
    format!(
        "CREATE KEYSPACE {} WITH replication = {}  AND durable_writes = {};",
        quote_identifier(&keyspace.name),
        string_map(entries),
        keyspace.durable_writes
    )
}

/// `CREATE TYPE ks.t (...);`
pub fn describe_type(udt: &UdtType) -> String {
    let fields: Vec<String> = udt
        .fields
        .iter()
        .map(|(name, ty)| format!("    {} {}", quote_identifier(name), ty.cql_name()))
        .collect();
    format!(
        "CREATE TYPE {}.{} (\n{}\n);",
        quote_identifier(&udt.keyspace),
        quote_identifier(&udt.name),
        fields.join(",\n")
    )
}

/// The full `CREATE TABLE` statement. `with_internals` adds the table id and the dropped
/// columns (declared, then dropped with their timestamps), as `DESCRIBE ... WITH INTERNALS`.
pub fn describe_table(table: &TableMetadata, with_internals: bool) -> String {
    if is_virtual_keyspace(&table.keyspace) {
        return describe_virtual_table(table);
    }
    let dropped = if with_internals {
        dropped_in_order(table)
    } else {
        Vec::new()
    };
    let inline = single_key_inline(table);
    let mut lines: Vec<String> = table
        .columns
        .iter()
        .filter(|c| !dropped.iter().any(|(name, _)| **name == c.name))
        .map(|c| column_line(c, inline))
        .collect();
    lines.extend(
        dropped
            .iter()
            .map(|(name, dropped)| dropped_line(table, name, dropped)),
    );
    if !single_key_inline(table) {
        lines.push(primary_key(table));
    }
    let mut text = format!(
        "CREATE TABLE {} (\n    {}\n) WITH {};",
        qualified_name(table),
        lines.join(",\n    "),
        with_clauses(table, with_internals).join("\n    AND ")
    );
    for (name, column) in dropped {
        text.push_str(&format!(
            "\nALTER TABLE {} DROP {} USING TIMESTAMP {};",
            qualified_name(table),
            quote_identifier(name),
            column.dropped_time_micros
        ));
        if let Some(current) = table.column(name) {
            let added = column_line(current, false);
            text.push_str(&format!(
                "\nALTER TABLE {} ADD {added};",
                qualified_name(table)
            ));
        }
    }
    text
}

/// A dropped column in the column list: as it is now if added again, else as dropped.
fn dropped_line(table: &TableMetadata, name: &str, dropped: &DroppedColumn) -> String {
    if let Some(current) = table.column(name) {
        return column_line(current, false);
    }
    let suffix = if dropped.kind == ColumnKind::Static {
        " static"
    } else {
        ""
    };
    format!(
        "{} {}{suffix}",
        quote_identifier(name),
        dropped.ty.cql_name()
    )
}

fn qualified_name(table: &TableMetadata) -> String {
    format!(
        "{}.{}",
        quote_identifier(&table.keyspace),
        quote_identifier(&table.name)
    )
}

/// Every dropped column (added again or not), in the order Cassandra 5.0.4 prints them: the
/// iteration order of the `java.util.HashMap` its table metadata copies them from, a
/// table of `tableSizeFor(n / 0.75 + 1)` buckets indexed by the spread hash of the name's
/// `ByteBuffer`; within a bucket, the earlier drop first.
fn dropped_in_order(table: &TableMetadata) -> Vec<(&String, &DroppedColumn)> {
    let mut dropped: Vec<(&String, &DroppedColumn)> = table.dropped_columns.iter().collect();
    let buckets = ((dropped.len() as f32 / 0.75 + 1.0) as usize).next_power_of_two();
    let bucket = |name: &str| (java_spread_hash(name.as_bytes()) as usize) & (buckets - 1);
    dropped.sort_by_key(|(name, column)| (bucket(name), column.dropped_time_micros, *name));
    dropped
}

/// `java.nio.ByteBuffer.hashCode` of `bytes`, spread as `java.util.HashMap.hash` does.
fn java_spread_hash(bytes: &[u8]) -> u32 {
    let hash = bytes.iter().rev().fold(1i32, |h, b| {
        h.wrapping_mul(31).wrapping_add(*b as i8 as i32)
    }) as u32;
    hash ^ (hash >> 16)
}

/// With one partition key column and no clustering, `PRIMARY KEY` goes on the column.
pub(crate) fn single_key_inline(table: &TableMetadata) -> bool {
    table.partition_key.len() == 1 && table.clustering.is_empty()
}

pub(crate) fn column_lines(table: &TableMetadata) -> Vec<String> {
    let inline = single_key_inline(table);
    table
        .columns
        .iter()
        .map(|c| column_line(c, inline))
        .collect()
}

fn column_line(column: &ColumnMetadata, inline_key: bool) -> String {
    let suffix = match column.kind {
        ColumnKind::PartitionKey if inline_key => " PRIMARY KEY",
        ColumnKind::Static => " static",
        _ => "",
    };
    format!(
        "{} {}{}",
        quote_identifier(&column.name),
        column.ty.cql_name(),
        suffix
    )
}

pub(crate) fn primary_key(table: &TableMetadata) -> String {
    let names = |columns: Vec<&ColumnMetadata>| -> Vec<String> {
        columns.iter().map(|c| quote_identifier(&c.name)).collect()
    };
    let partition = names(table.partition_key_columns().collect());
    let partition = if partition.len() == 1 {
        partition.join("")
    } else {
        format!("({})", partition.join(", "))
    };
    let mut parts = vec![partition];
    parts.extend(names(table.clustering_columns().collect()));
    format!("PRIMARY KEY ({})", parts.join(", "))
}

fn with_clauses(table: &TableMetadata, with_internals: bool) -> Vec<String> {
    let mut clauses = Vec::new();
    if with_internals {
        clauses.push(format!("ID = {}", table.id));
    }
    clauses.extend(with_clustering_order(table));
    clauses.extend(option_clauses(&table.options));
    clauses
}

/// The `CLUSTERING ORDER BY (...)` clause, when the table has clustering columns.
pub(crate) fn with_clustering_order(table: &TableMetadata) -> Vec<String> {
    if table.clustering.is_empty() {
        return Vec::new();
    }
    let orders: Vec<String> = table
        .clustering_columns()
        .map(|c| format!("{} {}", quote_identifier(&c.name), order_word(c.order)))
        .collect();
    vec![format!("CLUSTERING ORDER BY ({})", orders.join(", "))]
}

fn order_word(order: ClusteringOrder) -> &'static str {
    match order {
        ClusteringOrder::Desc => "DESC",
        ClusteringOrder::Asc | ClusteringOrder::None => "ASC",
    }
}

/// The options in the order Cassandra 5.0 prints them.
fn option_clauses(options: &TableOptions) -> Vec<String> {
    let extensions = options
        .extensions
        .iter()
        .map(|(k, v)| {
            let hex: String = v.iter().map(|b| format!("{b:02x}")).collect();
            format!("{}: 0x{hex}", quote_string(k))
        })
        .collect::<Vec<_>>();
    let map =
        |m: &BTreeMap<String, String>| string_map(m.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let mut clauses = vec![
        format!(
            "additional_write_policy = {}",
            quote_string(&options.additional_write_policy)
        ),
        format!("allow_auto_snapshot = {}", options.allow_auto_snapshot),
        format!(
            "bloom_filter_fp_chance = {}",
            java_double(options.bloom_filter_fp_chance)
        ),
        format!("caching = {}", map(&options.caching)),
        format!("cdc = {}", options.cdc),
        format!("comment = {}", quote_string(&options.comment)),
        format!("compaction = {}", map(&options.compaction)),
        format!("compression = {}", map(&options.compression)),
        format!("memtable = {}", quote_string(&options.memtable)),
        format!(
            "crc_check_chance = {}",
            java_double(options.crc_check_chance)
        ),
        format!("default_time_to_live = {}", options.default_time_to_live),
        format!("extensions = {{{}}}", extensions.join(", ")),
        format!("gc_grace_seconds = {}", options.gc_grace_seconds),
        format!("incremental_backups = {}", options.incremental_backups),
        format!("max_index_interval = {}", options.max_index_interval),
        format!(
            "memtable_flush_period_in_ms = {}",
            options.memtable_flush_period_in_ms
        ),
        format!("min_index_interval = {}", options.min_index_interval),
        format!("read_repair = {}", quote_string(&options.read_repair)),
        format!(
            "speculative_retry = {}",
            quote_string(&options.speculative_retry)
        ),
    ];
    // trunk's option, shown only when set so that DESCRIBE stays Cassandra 5.0's otherwise
    if !options.auto_repair.is_empty() {
        clauses.insert(2, format!("auto_repair = {}", map(&options.auto_repair)));
    }
    clauses
}

/// `{'k': 'v', ...}` with both sides as string literals.
fn string_map<'a>(entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let parts: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| format!("{}: {}", quote_string(k), quote_string(v)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests;
