//! A replica's side of a range scan: its unresolved partitions of a key range, merged over its
//! memtables and SSTables, as a [`ScanSource`] (`mutation::scan`, where the coordinator's
//! [`ScanRound`](mutation::scan::ScanRound) merges the replicas' answers).

use super::{merged_keys, read_round, PartitionSource};
use crate::error::Result;
use crate::filter::{KeyRange, ReadFilter};
use mutation::scan::ScanSource;

/// The partitions of `range` every source holds, merged and restricted to `filter` (rows
/// uncapped: `filter`'s row limits are the coordinator's), at most `partition_limit` of them
/// (at least one).
pub(crate) fn scan_source(
    sources: &[&dyn PartitionSource],
    range: &KeyRange,
    filter: &ReadFilter,
    partition_limit: usize,
) -> Result<ScanSource> {
    let limit = partition_limit.max(1);
    let mut scan = ScanSource::default();
    for key in merged_keys(sources, range) {
        let key = key?;
        if scan.partitions.len() >= limit {
            scan.stopped_at = scan.partitions.last().map(|(k, _)| k.clone());
            break;
        }
        let round = read_round(sources, &key, filter, usize::MAX)?;
        let answer = round.into_source_rows(filter, usize::MAX);
        if let Some(rows) = answer.filter(|rows| !rows.data.is_empty()) {
            scan.partitions.push((key, rows.data));
        }
    }
    Ok(scan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memtable::Memtable;
    use bytes::Bytes;
    use mutation::scan::ScanRound;
    use mutation::testing::token_key as key;
    use mutation::{Cell, ColumnData, DeletionTime, PartitionUpdate, Row};

    fn live(ts: i64) -> PartitionUpdate {
        let mut row = Row::new(Bytes::from_static(b"c"));
        row.columns = vec![ColumnData::simple(
            "v",
            Cell::live(ts, Bytes::from_static(b"x")),
        )];
        PartitionUpdate {
            rows: vec![row],
            ..Default::default()
        }
    }

    fn deleted(ts: i64) -> PartitionUpdate {
        PartitionUpdate {
            partition_deletion: DeletionTime::new(ts, 0),
            ..Default::default()
        }
    }

    fn replica(writes: &[(i64, PartitionUpdate)]) -> Memtable {
        let memtable = Memtable::new();
        for (token, update) in writes {
            memtable.apply(&key(*token), update.clone());
        }
        memtable
    }

    fn scan(memtable: &Memtable, limit: usize) -> ScanSource {
        let sources: [&dyn PartitionSource; 1] = [memtable];
        scan_source(&sources, &KeyRange::all(), &ReadFilter::all(), limit).expect("scan")
    }

    #[test]
    fn replicas_return_tombstone_only_partitions_and_stop_at_the_limit() {
        let a = replica(&[(1, live(1)), (2, deleted(5)), (3, live(1))]);
        let answer = scan(&a, 2);
        let tokens: Vec<i64> = answer.partitions.iter().map(|(k, _)| k.token).collect();
        assert_eq!(tokens, vec![1, 2]);
        assert_eq!(answer.stopped_at, Some(key(2)));
        assert_eq!(scan(&a, 3).stopped_at, None);
    }

    #[test]
    fn a_scan_round_completes_up_to_the_earliest_stop() {
        let a = replica(&[(1, live(1)), (2, live(1)), (3, live(1)), (4, live(1))]);
        let b = replica(&[(2, deleted(5)), (4, live(2))]);
        let mut round = ScanRound::new();
        round.add(scan(&a, 2));
        round.add(scan(&b, 10));
        let (complete, horizon) = round.complete();
        assert_eq!(horizon, Some(key(2)));
        let tokens: Vec<i64> = complete.iter().map(|(k, _)| k.token).collect();
        assert_eq!(tokens, vec![1, 2], "b's partition 4 is past a's stop");
        assert_eq!(complete[1].1.partition_deletion, DeletionTime::new(5, 0));
        assert_eq!(complete[1].1.rows.len(), 1, "a's row stays, shadowed");
    }
}
