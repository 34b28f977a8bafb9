//! Cassandra's tombstone thresholds on reads: a statement whose reads meet more tombstones than
//! `tombstone_warn_threshold` completes with a client warning (and a log line); one meeting
//! more than `tombstone_failure_threshold` fails with ReadFailure, reason
//! READ_TOO_MANY_TOMBSTONES (TombstoneOverwhelmingException). Reads of system keyspaces are
//! exempt, as in Cassandra.
use std::net::IpAddr;

use mutation::{PartitionKey, ReadStats};
use schema::ColumnKind;
use types::value::Value;
use types::{Consistency, CqlError, CqlResult};

use crate::keys::KeyLayout;
use crate::selection::Selection;

/// The v5 failure-reason code of READ_TOO_MANY_TOMBSTONES.
const READ_TOO_MANY_TOMBSTONES: u16 = 0x0001;

/// The tombstone counts past which a statement's reads warn and fail (cassandra.yaml's
/// `tombstone_warn_threshold` and `tombstone_failure_threshold`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TombstoneThresholds {
    pub warn: u64,
    pub failure: u64,
}

/// Where the thresholds apply and how this node names itself in failures.
#[derive(Clone, Debug)]
pub struct TombstoneLimits {
    pub thresholds: TombstoneThresholds,
    pub address: IpAddr,
    pub storage_port: u16,
}

/// The tombstones and live rows met by one statement's reads, checked as they add up.
pub(crate) struct TombstoneGuard<'a> {
    limits: Option<&'a TombstoneLimits>,
    read: ReadStats,
    /// Token of the partition read last (Cassandra names it in the warning).
    last_token: i64,
}

impl<'a> TombstoneGuard<'a> {
    /// A guard for reads of `keyspace` (none for system keyspaces).
    pub fn new(limits: &'a TombstoneLimits, keyspace: &str) -> TombstoneGuard<'a> {
        TombstoneGuard {
            limits: (!schema::is_system_keyspace(keyspace)).then_some(limits),
            read: ReadStats::default(),
            last_token: 0,
        }
    }

    /// Counts what one read did; fails past the failure threshold. `query` renders the
    /// statement as Cassandra's `ReadCommand.toCQLString` for the log line.
    pub fn add(
        &mut self,
        stats: ReadStats,
        token: i64,
        consistency: Consistency,
        query: impl FnOnce() -> String,
    ) -> CqlResult<()> {
        self.read.add(stats);
        self.last_token = token;
        let Some(limits) = self.limits else {
            return Ok(());
        };
        if self.read.tombstones <= limits.thresholds.failure {
            return Ok(());
        }
        tracing::error!(
            "Scanned over {} tombstones during query '{}' (last scanned row token was {}); query aborted",
            limits.thresholds.failure,
            query(),
            token
        );
        Err(overwhelmed(limits, consistency))
    }

    /// The client warning when the warn threshold was passed (also logged).
    pub fn warning(&self, query: impl FnOnce() -> String) -> Option<String> {
        let limits = self.limits?;
        if self.read.tombstones <= limits.thresholds.warn {
            return None;
        }
        let message = format!(
            "Read {} live rows and {} tombstone cells for query {}; token {} (see tombstone_warn_threshold)",
            self.read.live_rows,
            self.read.tombstones,
            truncated(query(), 512),
            self.last_token
        );
        tracing::warn!("{message}");
        Some(message)
    }
}

/// What Cassandra 5.0 answers when a replica gives up on tombstones.
fn overwhelmed(limits: &TombstoneLimits, consistency: Consistency) -> CqlError {
    CqlError::ReadFailure {
        message: format!(
            "Operation failed - received 0 responses and 1 failures: READ_TOO_MANY_TOMBSTONES from /{}:{}",
            limits.address, limits.storage_port
        ),
        consistency,
        received: 0,
        block_for: 1,
        failures: 1,
        data_present: false,
        reasons: vec![(limits.address, READ_TOO_MANY_TOMBSTONES)],
    }
}

/// The read as Cassandra's `ReadCommand.toCQLString` prints it: `SELECT <columns> FROM ks.t
/// [WHERE <partition key> = <value>] [LIMIT n] ALLOW FILTERING`.
pub(crate) fn command_text(
    layout: &KeyLayout,
    selection: &Selection,
    key: Option<&PartitionKey>,
    limit: i64,
) -> String {
    let table = &layout.table;
    let mut text = format!(
        "SELECT {} FROM {}.{}",
        selected_columns(layout, selection),
        table.keyspace,
        table.name
    );
    if let Some(key) = key {
        text.push_str(" WHERE ");
        text.push_str(&key_restriction(layout, key));
    }
    if limit < i64::MAX {
        text.push_str(&format!(" LIMIT {limit}"));
    }
    text.push_str(" ALLOW FILTERING");
    text
}

/// `*` when every regular and static column is read, else the ones selected.
fn selected_columns(layout: &KeyLayout, selection: &Selection) -> String {
    let mut names: Vec<&str> = selection
        .leaves
        .iter()
        .filter_map(|leaf| leaf.column())
        .filter(|c| matches!(c.kind, ColumnKind::Regular | ColumnKind::Static))
        .map(|c| c.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let table = &layout.table;
    let all = table.regular_columns().count() + table.static_columns().count();
    if names.len() == all {
        "*".to_string()
    } else {
        names.join(", ")
    }
}

/// `pk = 1` (`a = 1 AND b = 'x'` for composite keys); the raw bytes when they do not decode.
fn key_restriction(layout: &KeyLayout, key: &PartitionKey) -> String {
    let Ok(values) = layout.split_partition_key(&key.key) else {
        return format!("token = {}", key.token);
    };
    let columns = layout.table.partition_key_columns();
    let parts: Vec<String> = columns
        .zip(values.iter().zip(&layout.partition_types))
        .map(|(column, (bytes, ty))| {
            let literal = Value::deserialize(ty, bytes).map_or_else(
                |_| Value::Blob(bytes.clone()).to_cql_literal(),
                |v| v.to_cql_literal(),
            );
            format!("{} = {literal}", column.name)
        })
        .collect();
    parts.join(" AND ")
}

/// At most `max` characters of `text` (Java's `%1.512s`).
fn truncated(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => text[..cut].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn limits() -> TombstoneLimits {
        TombstoneLimits {
            thresholds: TombstoneThresholds {
                warn: 10,
                failure: 100,
            },
            address: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)),
            storage_port: 7000,
        }
    }

    fn stats(tombstones: u64) -> ReadStats {
        ReadStats {
            tombstones,
            live_rows: 1,
            ..ReadStats::default()
        }
    }

    #[test]
    fn warns_past_the_warn_threshold_with_cassandras_text() {
        let limits = limits();
        let mut guard = TombstoneGuard::new(&limits, "ks");
        let query = || "SELECT * FROM ks.t WHERE pk = 1 ALLOW FILTERING".to_string();
        guard
            .add(stats(10), 5, Consistency::One, query)
            .expect("fine");
        assert_eq!(guard.warning(query), None);
        guard
            .add(stats(1), 7, Consistency::One, query)
            .expect("fine");
        assert_eq!(
            guard.warning(query).as_deref(),
            Some("Read 2 live rows and 11 tombstone cells for query SELECT * FROM ks.t WHERE pk = 1 ALLOW FILTERING; token 7 (see tombstone_warn_threshold)")
        );
    }

    #[test]
    fn fails_past_the_failure_threshold_except_in_system_keyspaces() {
        let limits = limits();
        let mut guard = TombstoneGuard::new(&limits, "ks");
        let error = guard
            .add(stats(101), 1, Consistency::LocalOne, String::new)
            .expect_err("overwhelmed");
        match error {
            CqlError::ReadFailure {
                message,
                consistency,
                failures,
                reasons,
                ..
            } => {
                assert_eq!(message, "Operation failed - received 0 responses and 1 failures: READ_TOO_MANY_TOMBSTONES from /127.0.0.1:7000");
                assert_eq!((consistency, failures), (Consistency::LocalOne, 1));
                assert_eq!(reasons, vec![(limits.address, 1)]);
            }
            other => panic!("unexpected {other:?}"),
        }
        let mut system = TombstoneGuard::new(&limits, "system_schema");
        system
            .add(stats(1000), 1, Consistency::One, String::new)
            .expect("exempt");
        assert_eq!(system.warning(String::new), None);
        assert_eq!(truncated("abcdef".into(), 3), "abc");
    }
}
