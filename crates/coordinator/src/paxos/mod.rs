//! Paxos (crate `paxos`) over the data model: what a round decides is one partition's
//! [`Mutation`] ([`Lwt`]), the replica keeps its registers in `system.paxos` and applies
//! decisions through the local write path (`store`), and the proposer reaches the other
//! replicas over messaging (`remote`). See docs/architecture.md ("Lightweight transactions").
pub(crate) mod cleanup;
pub(crate) mod remote;
pub(crate) mod store;

#[cfg(test)]
mod scenarios;

use mutation::{
    DeletionTime, Mutation, Partition, PartitionData, PartitionKey, ReadFilter, ReadStats,
    SourceRows, TableId,
};
use paxos::Types;

/// The partitions, updates and reads of lightweight transactions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Lwt;

/// A partition of a table: what one sequence of Paxos rounds decides for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct LwtKey {
    pub table: TableId,
    pub key: PartitionKey,
}

/// What a prepare reads: the rows a condition or a SERIAL read selects, resolved at `now`
/// (seconds; only the proposer resolves, so `now` does not travel).
#[derive(Clone, Debug)]
pub(crate) struct LwtQuery {
    pub key: PartitionKey,
    pub filter: ReadFilter,
    pub now: i32,
}

impl Types for Lwt {
    type Key = LwtKey;
    type Update = Mutation;
    type Query = LwtQuery;
    /// A replica's unresolved data (tombstones and timestamps kept), `None` when it holds
    /// nothing of the partition.
    type Read = Option<SourceRows>;
    type Value = Option<Partition>;

    fn empty_update(key: &LwtKey) -> Mutation {
        Mutation {
            table: key.table,
            key: key.key.clone(),
            update: Default::default(),
        }
    }

    fn is_empty(update: &Mutation) -> bool {
        let u = &update.update;
        u.partition_deletion == DeletionTime::LIVE
            && u.static_row.is_none()
            && u.rows.is_empty()
            && u.range_tombstones.is_empty()
    }

    /// Reconciles the replicas' data as a read does (newest write wins, tombstones shadow).
    fn resolve(query: &LwtQuery, reads: Vec<Option<SourceRows>>) -> Option<Partition> {
        let mut merged: Option<PartitionData> = None;
        for rows in reads.into_iter().flatten() {
            match &mut merged {
                Some(data) => data.merge(rows.data),
                None => merged = Some(rows.data),
            }
        }
        let mut stats = ReadStats::default();
        mutation::rounds::resolve_partition(
            &query.key,
            merged?,
            &query.filter,
            query.now,
            &mut stats,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use mutation::{Cell, ColumnData, PartitionUpdate, Row};

    fn key() -> PartitionKey {
        PartitionKey {
            token: 5,
            key: Bytes::from_static(b"k"),
        }
    }

    fn rows(value: &'static [u8], ts: i64) -> Option<SourceRows> {
        let mut row = Row::new(Bytes::from_static(b"c"));
        row.columns = vec![ColumnData::simple(
            "v",
            Cell::live(ts, Bytes::from_static(value)),
        )];
        let mut data = PartitionData::default();
        data.apply(PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        });
        Some(SourceRows {
            data,
            stopped_at: None,
        })
    }

    #[test]
    fn the_newest_write_of_the_replicas_wins_and_nothing_resolves_to_none() {
        let query = LwtQuery {
            key: key(),
            filter: ReadFilter::all(),
            now: 100,
        };
        let resolved = Lwt::resolve(&query, vec![rows(b"old", 1), None, rows(b"new", 2)]);
        let partition = resolved.expect("a partition");
        let cell = match &partition.rows[0].column(b"v").expect("v").value {
            mutation::ColumnValue::Simple(cell) => cell.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(cell.value.as_deref(), Some(&b"new"[..]));
        assert_eq!(Lwt::resolve(&query, vec![None, None]), None);
    }

    #[test]
    fn only_an_update_that_writes_nothing_is_empty() {
        let lwt_key = LwtKey {
            table: TableId(uuid::Uuid::nil()),
            key: key(),
        };
        let empty = Lwt::empty_update(&lwt_key);
        assert!(Lwt::is_empty(&empty));
        let mut deletion = empty.clone();
        deletion.update.partition_deletion = DeletionTime::new(10, 1);
        assert!(!Lwt::is_empty(&deletion));
    }
}
