//! Reads limited to a number of live rows (`ReadFilter::row_limit`: a page, a LIMIT) cost about
//! that many rows, wherever in the partition they start. They run in rounds: each source returns
//! at most a cap of rows in read order and says where it stopped; the rows up to the earliest
//! stop (the horizon) are complete — every source has given all it holds up to there — and are
//! resolved; when they hold too few live rows (tombstones, expired data), the next round resumes
//! after the horizon with twice the cap. An unlimited read is one round with no cap.

use bytes::Bytes;

use crate::error::Result;
use crate::filter::ReadFilter;
use crate::metrics::ReadStats;
use crate::partition::{PartitionData, SourceRows};
use crate::resolve::{counted_range_tombstones, live_rows, live_static_row};
use mutation::{Partition, PartitionKey, RangeTombstone, Row};

/// Rows a first round reads beyond the row limit, for the dead rows it may meet.
const FIRST_ROUND_SLACK: usize = 16;

/// The merged answer of every source to one round.
pub(super) struct Round {
    reversed: bool,
    pub data: Option<PartitionData>,
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

    /// Merges one source's answer.
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
}

/// Reads `key` in rounds; `fetch(filter, cap)` asks every source for at most `cap` rows
/// of `filter` and merges their answers.
pub(super) fn read(
    key: &PartitionKey,
    filter: &ReadFilter,
    now: i32,
    stats: &mut ReadStats,
    mut fetch: impl FnMut(&ReadFilter, usize) -> Result<Round>,
) -> Result<Option<Partition>> {
    let limit = filter.row_limit.unwrap_or(usize::MAX);
    let mut cap = limit
        .saturating_add(limit / 2)
        .saturating_add(FIRST_ROUND_SLACK);
    let mut round_filter = filter.clone();
    let mut static_row: Option<Row> = None;
    let mut rows: Vec<Row> = Vec::new();
    let mut counted: Vec<RangeTombstone> = Vec::new();
    loop {
        let round = fetch(&round_filter, cap)?;
        let Some(data) = round.data else { break };
        let complete = match &round.horizon {
            Some(h) => round_filter.up_to(h),
            None => round_filter.clone(),
        };
        for tombstone in counted_range_tombstones(&data, &complete) {
            if !counted.contains(tombstone) {
                stats.tombstones += 2;
                counted.push(tombstone.clone());
            }
        }
        if round_filter.include_static {
            static_row = live_static_row(&data, now, stats);
        }
        let wanted = limit - rows.len();
        rows.extend(live_rows(&data, &complete, wanted, now, stats));
        let Some(horizon) = round.horizon.filter(|_| rows.len() < limit) else {
            break;
        };
        round_filter = round_filter.after(&horizon);
        round_filter.include_static = false;
        if round_filter.slices.is_empty() {
            break;
        }
        cap = cap.saturating_mul(2);
    }
    if rows.is_empty() && static_row.is_none() {
        return Ok(None);
    }
    Ok(Some(Partition {
        key: key.clone(),
        static_row,
        rows,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutation::{Cell, ColumnData, DeletionTime, PartitionUpdate};
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
        data.apply(&PartitionUpdate {
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
            Ok(round)
        })
        .expect("read");
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
}
