//! Reads limited to a number of live rows (`ReadFilter::row_limit`: a page, a LIMIT) cost about
//! that many rows, wherever in the partition they start. They run in rounds: each source returns
//! at most a cap of rows in read order and says where it stopped; the rows up to the earliest
//! stop (the horizon) are complete — every source has given all it holds up to there — and are
//! resolved; when they hold too few live rows (tombstones, expired data), the next round resumes
//! after the horizon with twice the cap. An unlimited read is one round with no cap.
//!
//! [`Rounds`] is that algorithm as a state machine: the local read drives it over memtables and
//! SSTables, a coordinator drives it over replicas (each answering with [`SourceRows`]).

use bytes::Bytes;

use crate::filter::ReadFilter;
use crate::partition::{PartitionData, SourceRows};
use crate::resolve::{counted_range_tombstones, live_rows, live_static_row};
use crate::{Partition, PartitionKey, RangeTombstone, ReadStats, Row};

/// Rows a first round reads beyond the row limit, for the dead rows it may meet.
const FIRST_ROUND_SLACK: usize = 16;

/// The merged answer of every source to one round.
#[derive(Clone, Debug)]
pub struct Round {
    reversed: bool,
    data: Option<PartitionData>,
    /// The earliest clustering, in read order, where a source stopped at the cap.
    horizon: Option<Bytes>,
}

impl Round {
    pub fn new(filter: &ReadFilter) -> Round {
        Round {
            reversed: filter.reversed,
            data: None,
            horizon: None,
        }
    }

    /// Merges one source's answer (`None`: the source does not hold the partition).
    pub fn add(&mut self, answer: Option<SourceRows>) {
        let Some(SourceRows { data, stopped_at }) = answer else {
            return;
        };
        if let Some(stop) = stopped_at {
            let earlier = match &self.horizon {
                None => true,
                Some(h) if self.reversed => stop > *h,
                Some(h) => stop < *h,
            };
            if earlier {
                self.horizon = Some(stop);
            }
        }
        match &mut self.data {
            Some(merged) => merged.merge(data),
            None => self.data = Some(data),
        }
    }

    /// The earliest stop among the sources, in read order: rows up to it are complete.
    pub fn horizon(&self) -> Option<&Bytes> {
        self.horizon.as_ref()
    }

    /// The merged data, `None` when no source holds the partition.
    pub fn data(&self) -> Option<&PartitionData> {
        self.data.as_ref()
    }

    /// The filter restricted to what is complete in this round (up to the horizon).
    pub fn complete_filter(&self, round_filter: &ReadFilter) -> ReadFilter {
        match &self.horizon {
            Some(h) => round_filter.up_to(h),
            None => round_filter.clone(),
        }
    }

    /// The answer of all these sources taken as one, read with `cap`: the first `cap` rows of
    /// their merged data in read order, restricted to what is complete (see
    /// [`PartitionData::restricted`]), stopped at the last of them when more rows follow. As
    /// any source that stopped holds `cap` rows up to the horizon, this does not depend on how
    /// the data is spread over the sources.
    pub fn into_source_rows(self, round_filter: &ReadFilter, cap: usize) -> Option<SourceRows> {
        let complete = self.complete_filter(round_filter);
        let mut data = self.data?.restricted(&complete);
        let mut stopped_at = self.horizon;
        if data.rows.len() > cap {
            let last = cap.max(1) - 1;
            let stop = if round_filter.reversed {
                data.rows.keys().rev().nth(last)
            } else {
                data.rows.keys().nth(last)
            };
            stopped_at = stop.cloned();
            if let Some(stop) = &stopped_at {
                data = data.restricted(&complete.up_to(stop));
            }
        }
        Some(SourceRows { data, stopped_at })
    }
}

/// A read of one partition in rounds: [`next`](Rounds::next) says what to ask every source,
/// [`add`](Rounds::add) takes their merged answer, [`finish`](Rounds::finish) gives the result.
#[derive(Clone, Debug)]
pub struct Rounds {
    key: PartitionKey,
    limit: usize,
    cap: usize,
    /// The next round's filter; `None` once the read is done.
    next: Option<ReadFilter>,
    static_row: Option<Row>,
    rows: Vec<Row>,
    /// Range tombstones already counted into the stats (a later round meets them again).
    counted: Vec<RangeTombstone>,
}

impl Rounds {
    pub fn new(key: &PartitionKey, filter: &ReadFilter) -> Rounds {
        let limit = filter.row_limit.unwrap_or(usize::MAX);
        Rounds {
            key: key.clone(),
            limit,
            cap: limit
                .saturating_add(limit / 2)
                .saturating_add(FIRST_ROUND_SLACK),
            next: Some(filter.clone()),
            static_row: None,
            rows: Vec::new(),
            counted: Vec::new(),
        }
    }

    /// The next round to ask every source for: its filter and cap; `None` when the read is done.
    pub fn next(&self) -> Option<(ReadFilter, usize)> {
        self.next.as_ref().map(|filter| (filter.clone(), self.cap))
    }

    /// Takes the merged answer to the round [`next`](Rounds::next) gave, resolving its complete
    /// part at `now` (tombstones and live rows met are counted into `stats`).
    pub fn add(&mut self, mut round: Round, now: i32, stats: &mut ReadStats) {
        let Some(round_filter) = self.next.take() else {
            return;
        };
        let complete = round.complete_filter(&round_filter);
        let Some(data) = round.data.take() else {
            return;
        };
        self.resolve(data, &complete, now, stats);
        let Some(horizon) = round.horizon.filter(|_| self.rows.len() < self.limit) else {
            return;
        };
        let mut next = round_filter.after(&horizon);
        next.include_static = false;
        if !next.slices.is_empty() {
            self.next = Some(next);
            self.cap = self.cap.saturating_mul(2);
        }
    }

    /// The live partition read, `None` when nothing is live.
    pub fn finish(self) -> Option<Partition> {
        if self.rows.is_empty() && self.static_row.is_none() {
            return None;
        }
        Some(Partition {
            key: self.key,
            static_row: self.static_row,
            rows: self.rows,
        })
    }

    /// Adds the live part of `data` that `complete` selects, up to the row limit.
    fn resolve(
        &mut self,
        mut data: PartitionData,
        complete: &ReadFilter,
        now: i32,
        stats: &mut ReadStats,
    ) {
        for tombstone in counted_range_tombstones(&data, complete) {
            if !self.counted.contains(tombstone) {
                stats.tombstones += 2;
                self.counted.push(tombstone.clone());
            }
        }
        if complete.include_static {
            self.static_row = live_static_row(&mut data, now, stats);
        }
        let wanted = self.limit - self.rows.len();
        self.rows
            .extend(live_rows(&mut data, complete, wanted, now, stats));
    }
}

/// The live view of `data` (already reconciled, complete for `filter`) at `now`: rows up to
/// `filter.row_limit`, the static row if asked; counted into `stats` as a local read is.
pub fn resolve_partition(
    key: &PartitionKey,
    data: PartitionData,
    filter: &ReadFilter,
    now: i32,
    stats: &mut ReadStats,
) -> Option<Partition> {
    let mut rounds = Rounds::new(key, filter);
    rounds.resolve(data, filter, now, stats);
    rounds.finish()
}

/// Reads `key` in rounds; `fetch(filter, cap)` asks every source for at most `cap` rows
/// of `filter` and merges their answers.
pub fn read<E>(
    key: &PartitionKey,
    filter: &ReadFilter,
    now: i32,
    stats: &mut ReadStats,
    mut fetch: impl FnMut(&ReadFilter, usize) -> Result<Round, E>,
) -> Result<Option<Partition>, E> {
    let mut rounds = Rounds::new(key, filter);
    while let Some((round_filter, cap)) = rounds.next() {
        let round = fetch(&round_filter, cap)?;
        rounds.add(round, now, stats);
    }
    Ok(rounds.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cell, ColumnData, DeletionTime, PartitionUpdate};
    use std::ops::Bound;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn source(rows: &[(&str, bool)]) -> PartitionData {
        let mut data = PartitionData::default();
        let rows = rows.iter().map(|(c, live)| {
            let mut row = Row::new(b(c));
            if *live {
                row.columns = vec![ColumnData::simple("v", Cell::live(1, b("x")))];
            } else {
                row.deletion = DeletionTime::new(1, 0);
            }
            row
        });
        data.apply(PartitionUpdate {
            rows: rows.collect(),
            ..Default::default()
        });
        data
    }

    fn key() -> PartitionKey {
        PartitionKey {
            token: 0,
            key: b("k"),
        }
    }

    /// Reads `sources` through rounds, returning the clusterings and the rounds run.
    fn run(sources: &[PartitionData], filter: &ReadFilter) -> (Vec<Bytes>, usize) {
        let mut rounds = 0;
        let mut stats = ReadStats::default();
        let found = read(&key(), filter, 0, &mut stats, |f, cap| {
            rounds += 1;
            let mut round = Round::new(f);
            for s in sources {
                round.add(Some(s.select(f, cap)));
            }
            Ok::<_, std::convert::Infallible>(round)
        })
        .unwrap_or_else(|never| match never {});
        let rows = found.map_or_else(Vec::new, |p| {
            p.rows.into_iter().map(|r| r.clustering).collect()
        });
        (rows, rounds)
    }

    #[test]
    fn rounds_resume_at_the_horizon_until_the_limit_is_met() {
        let names: Vec<String> = (0..100).map(|i| format!("{i:03}")).collect();
        // The newer source deletes the first 60 rows the older one holds.
        let older: Vec<(&str, bool)> = names.iter().map(|n| (n.as_str(), true)).collect();
        let newer: Vec<(&str, bool)> = names[..60].iter().map(|n| (n.as_str(), false)).collect();
        let sources = [source(&older), source(&newer)];
        let filter = ReadFilter {
            row_limit: Some(10),
            ..ReadFilter::all()
        };
        let (rows, rounds) = run(&sources, &filter);
        assert_eq!(
            rows,
            (60..70).map(|i| b(&format!("{i:03}"))).collect::<Vec<_>>()
        );
        assert!(rounds > 1, "60 dead rows need more than one round of 31");
        let reversed = ReadFilter {
            reversed: true,
            slices: vec![(Bound::Unbounded, Bound::Excluded(b("065")))],
            ..filter
        };
        let (rows, rounds) = run(&sources, &reversed);
        assert_eq!(
            rows,
            (60..65)
                .rev()
                .map(|i| b(&format!("{i:03}")))
                .collect::<Vec<_>>()
        );
        assert!(rounds > 1);
    }

    #[test]
    fn an_unlimited_read_is_one_round() {
        let live: Vec<(String, bool)> = (0..50).map(|i| (format!("{i:02}"), true)).collect();
        let live: Vec<(&str, bool)> = live.iter().map(|(c, l)| (c.as_str(), *l)).collect();
        let (rows, rounds) = run(&[source(&live)], &ReadFilter::all());
        assert_eq!((rows.len(), rounds), (50, 1));
    }

    /// A replica's answer to a round: its data read in rounds of `cap` and trimmed to what is
    /// complete, as `LsmEngine::read_source` answers.
    fn replica_answer(data: &PartitionData, filter: &ReadFilter, cap: usize) -> Option<SourceRows> {
        let mut round = Round::new(filter);
        round.add(Some(data.select(filter, cap)));
        round.into_source_rows(filter, cap)
    }

    #[test]
    fn rounds_over_replicas_read_what_their_merge_holds() {
        let names: Vec<String> = (0..40).map(|i| format!("{i:03}")).collect();
        let live: Vec<(&str, bool)> = names.iter().map(|n| (n.as_str(), true)).collect();
        let mut deleting = source(&live[30..]);
        // The third replica alone holds a newer deletion of the first 25 rows.
        deleting.apply(PartitionUpdate {
            range_tombstones: vec![RangeTombstone {
                start: Bound::Unbounded,
                end: Bound::Excluded(b("025")),
                deletion: DeletionTime::new(5, 0),
            }],
            ..Default::default()
        });
        let replicas = [source(&live[..20]), source(&live), deleting];
        let mut merged = PartitionData::default();
        for replica in &replicas {
            merged.merge(replica.clone());
        }
        for (reversed, limit) in [(false, Some(10)), (true, Some(30)), (false, None)] {
            let filter = ReadFilter {
                reversed,
                row_limit: limit,
                ..ReadFilter::all()
            };
            let mut rounds = Rounds::new(&key(), &filter);
            let mut stats = ReadStats::default();
            while let Some((round_filter, cap)) = rounds.next() {
                let mut round = Round::new(&round_filter);
                for replica in &replicas {
                    round.add(replica_answer(replica, &round_filter, cap));
                }
                rounds.add(round, 0, &mut stats);
            }
            let mut expected_stats = ReadStats::default();
            let expected =
                resolve_partition(&key(), merged.clone(), &filter, 0, &mut expected_stats);
            let live = expected.as_ref().map(|p| p.rows.len());
            assert_eq!(
                live,
                Some(limit.unwrap_or(15).min(15)),
                "rows 025 to 039 live"
            );
            assert_eq!(
                rounds.finish(),
                expected,
                "reversed {reversed}, limit {limit:?}"
            );
            assert_eq!(stats.live_rows, expected_stats.live_rows);
        }
    }
}
