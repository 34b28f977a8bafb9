//! Preview repairs (`nodetool repair --preview`, `--validate`), as Cassandra's
//! `PreviewRepairTask`: the replicas' trees of one kind of data are built and compared as a
//! repair's are, nothing is marked pending, streamed or promoted, and the command ends with
//! what would have been streamed (Cassandra's `SyncStatSummary`).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use storage::RepairScope;
use types::units::pretty_memory;

use crate::endpoint;

/// Cassandra's `PreviewKind` (NONE is a plain repair: no preview).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreviewKind {
    /// `--preview`: the unrepaired data, as an incremental repair would compare it.
    Unrepaired,
    /// `--preview --full`: everything, as a full repair would.
    All,
    /// `--validate`: the repaired data, which should agree everywhere.
    Repaired,
}

impl PreviewKind {
    /// The name Cassandra prints in the repair options.
    pub fn name(self) -> &'static str {
        match self {
            PreviewKind::Unrepaired => "UNREPAIRED",
            PreviewKind::All => "ALL",
            PreviewKind::Repaired => "REPAIRED",
        }
    }

    /// The data the replicas' validations read.
    pub fn scope(self) -> RepairScope {
        match self {
            PreviewKind::Unrepaired => RepairScope::Unrepaired,
            PreviewKind::All => RepairScope::All,
            PreviewKind::Repaired => RepairScope::Repaired,
        }
    }
}

/// What one replica would stream to another for one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviewStream {
    pub table: String,
    pub source: SocketAddr,
    pub target: SocketAddr,
    /// Sub-ranges that differ (Cassandra's `numberOfDifferences`).
    pub ranges: u64,
    /// Partitions the source holds in them, from its tree.
    pub partitions: u64,
    /// Bytes the source holds in them, estimated from its SSTables.
    pub bytes: u64,
}

/// The message a preview command ends with: whether the data compared agrees, else what
/// would be streamed, in total, per table and per direction.
pub fn summary(kind: PreviewKind, keyspace: &str, streams: &[PreviewStream]) -> String {
    let differing: Vec<&PreviewStream> = streams.iter().filter(|s| s.ranges > 0).collect();
    if differing.is_empty() {
        return match kind {
            PreviewKind::Repaired => "Repaired data is in sync".to_string(),
            _ => "Previewed data was in sync".to_string(),
        };
    }
    let mut out = match kind {
        PreviewKind::Repaired => "Repaired data is inconsistent\n".to_string(),
        _ => "Preview complete\n".to_string(),
    };
    out.push_str(&format!(
        "Total estimated streaming: {}\n",
        totals(differing.iter().copied())
    ));
    let mut tables: BTreeMap<&str, Vec<&PreviewStream>> = BTreeMap::new();
    for stream in differing {
        tables.entry(&stream.table).or_default().push(stream);
    }
    for (table, streams) in tables {
        out.push_str(&format!(
            "{keyspace}.{table} - {}\n",
            totals(streams.iter().copied())
        ));
        for s in streams {
            out.push_str(&format!(
                "    {} -> {}: {}\n",
                endpoint(s.source),
                endpoint(s.target),
                totals(std::iter::once(s))
            ));
        }
        out.push('\n');
    }
    out
}

/// `N ranges, P partitions, B bytes` over `streams`.
fn totals<'a>(streams: impl Iterator<Item = &'a PreviewStream>) -> String {
    let (mut ranges, mut partitions, mut bytes) = (0, 0, 0);
    for s in streams {
        ranges += s.ranges;
        partitions += s.partitions;
        bytes += s.bytes;
    }
    format!(
        "{ranges} ranges, {partitions} partitions, {} bytes",
        pretty_memory(bytes)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(table: &str, source: u8, target: u8, ranges: u64, bytes: u64) -> PreviewStream {
        let addr = |n: u8| SocketAddr::from(([127, 0, 0, n], 7000));
        PreviewStream {
            table: table.into(),
            source: addr(source),
            target: addr(target),
            ranges,
            partitions: ranges * 2,
            bytes,
        }
    }

    #[test]
    fn data_in_sync_says_so_by_kind() {
        let none = [stream("t", 1, 2, 0, 0)];
        assert_eq!(
            summary(PreviewKind::Unrepaired, "ks", &none),
            "Previewed data was in sync"
        );
        assert_eq!(
            summary(PreviewKind::All, "ks", &[]),
            "Previewed data was in sync"
        );
        assert_eq!(
            summary(PreviewKind::Repaired, "ks", &none),
            "Repaired data is in sync"
        );
    }

    #[test]
    fn differences_print_totals_per_table_and_per_direction() {
        let streams = [
            stream("b", 1, 2, 1, 100),
            stream("a", 2, 1, 2, 2048),
            stream("a", 1, 2, 2, 0),
        ];
        assert_eq!(
            summary(PreviewKind::Repaired, "ks", &streams),
            "Repaired data is inconsistent\n\
             Total estimated streaming: 5 ranges, 10 partitions, 2.098KiB bytes\n\
             ks.a - 4 ranges, 8 partitions, 2.000KiB bytes\n    \
             /127.0.0.2:7000 -> /127.0.0.1:7000: 2 ranges, 4 partitions, 2.000KiB bytes\n    \
             /127.0.0.1:7000 -> /127.0.0.2:7000: 2 ranges, 4 partitions, 0B bytes\n\n\
             ks.b - 1 ranges, 2 partitions, 100B bytes\n    \
             /127.0.0.1:7000 -> /127.0.0.2:7000: 1 ranges, 2 partitions, 100B bytes\n\n"
        );
        assert!(summary(PreviewKind::Unrepaired, "ks", &streams).starts_with("Preview complete\n"));
    }
}
