//! The built-in repair scheduler's plan (Helenus's answer to Cassandra 5.1's CEP-37
//! `auto_repair`): which range of which table this node repairs next, when each is due, and
//! when to hold off. The running of it (a loop, persistence of the history, the load it
//! watches) belongs to the caller.
//!
//! - **Who repairs what.** Each node repairs, as a `-pr` repair (incremental, or full for a
//!   table whose `auto_repair` turns incremental off), only the ranges it is the primary
//!   replica of, one at a time. Primary ranges are disjoint, so two nodes never repair
//!   overlapping ranges; the caller also holds a lease in the metadata log that lets one
//!   scheduled repair run at a time across the cluster.
//! - **When a range is due.** A table's ranges must each be repaired at least once every
//!   `gc_grace_seconds`, or a replica that missed a delete could bring the row back after the
//!   tombstone is purged. The scheduler repairs each range every half `gc_grace_seconds` (the
//!   margin: a range whose repair failed or was held off once is still repaired in time), but
//!   never more often than `min_repair_interval`.
//! - **Which first.** Among the due ranges of the tables turned on, those of the tables of
//!   the highest `auto_repair` `priority`; among those, the one waiting longest: never
//!   repaired first, then by the oldest repair.
//! - **When to hold off** ([`hold_off`]): while compaction is behind (more than 32 pending
//!   compactions on the node) or while clients see a p99 latency more than twice its level
//!   while no repair ran (and above 20 ms, so an idle node's noise does not count).

use std::time::Duration;

use mutation::TokenRange;

/// A range of a table and when this node last repaired it (ms since the epoch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeState {
    pub range: TokenRange,
    pub repaired_ms: Option<u64>,
}

/// A table the scheduler keeps repaired: its primary ranges here and their history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableState {
    pub keyspace: String,
    pub table: String,
    pub gc_grace_seconds: u32,
    /// `auto_repair`'s `priority`: higher goes first.
    pub priority: u32,
    pub ranges: Vec<RangeState>,
}

/// What to repair next: a table (index into the list given) and one of its ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Next {
    pub table: usize,
    pub range: TokenRange,
}

/// How often a table's ranges are repaired: half its `gc_grace_seconds`, at least
/// `min_interval`.
pub fn interval(gc_grace_seconds: u32, min_interval: Duration) -> Duration {
    (Duration::from_secs(u64::from(gc_grace_seconds)) / 2).max(min_interval)
}

/// When `range` is due (ms since the epoch): now if never repaired.
pub fn due_ms(range: &RangeState, interval: Duration) -> u64 {
    range
        .repaired_ms
        .map_or(0, |at| at.saturating_add(interval.as_millis() as u64))
}

/// The range to repair now: the due one of the highest priority waiting longest, `None` when
/// none is due.
pub fn next(tables: &[TableState], min_interval: Duration, now_ms: u64) -> Option<Next> {
    let mut best: Option<((std::cmp::Reverse<u32>, u64), Next)> = None;
    for (index, table) in tables.iter().enumerate() {
        let every = interval(table.gc_grace_seconds, min_interval);
        for range in &table.ranges {
            let due = (std::cmp::Reverse(table.priority), due_ms(range, every));
            if due.1 > now_ms || best.as_ref().is_some_and(|(b, _)| *b <= due) {
                continue;
            }
            let next = Next {
                table: index,
                range: range.range,
            };
            best = Some((due, next));
        }
    }
    best.map(|(_, next)| next)
}

/// When a table was last repaired whole here: the oldest repair of its ranges (`None` while
/// one of them never was); and when its next range is due.
pub fn table_summary(table: &TableState, min_interval: Duration) -> (Option<u64>, Option<u64>) {
    let every = interval(table.gc_grace_seconds, min_interval);
    let whole = table.ranges.iter().map(|r| r.repaired_ms).min().flatten();
    let next_due = table.ranges.iter().map(|r| due_ms(r, every)).min();
    (whole, next_due)
}

/// The load above which the scheduler holds off.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub pending_compactions: u64,
    /// Client p99 may reach this many times its level without repair.
    pub latency_factor: f64,
    /// A p99 below this (ms) never holds repair off.
    pub latency_floor_ms: f64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            pending_compactions: 32,
            latency_factor: 2.0,
            latency_floor_ms: 20.0,
        }
    }
}

/// The node's load as the scheduler sees it at a check.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Load {
    pub pending_compactions: u64,
    /// Client read and write p99 (ms) since the last check, and its level while no repair ran.
    pub client_p99_ms: f64,
    pub baseline_p99_ms: f64,
}

/// Why the scheduler holds off now, if it does.
pub fn hold_off(load: &Load, limits: &Limits) -> Option<String> {
    if load.pending_compactions > limits.pending_compactions {
        return Some(format!(
            "compaction is behind ({} pending compactions, more than {})",
            load.pending_compactions, limits.pending_compactions
        ));
    }
    let limit = load.baseline_p99_ms * limits.latency_factor;
    if load.client_p99_ms > limits.latency_floor_ms
        && load.baseline_p99_ms > 0.0
        && load.client_p99_ms > limit
    {
        return Some(format!(
            "client p99 latency is {:.1} ms, more than {} times its {:.1} ms without repair",
            load.client_p99_ms, limits.latency_factor, load.baseline_p99_ms
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutation::token_intersection as intersection;

    const MIN: Duration = Duration::from_secs(60);

    fn table(gc_grace_seconds: u32, repaired: &[Option<u64>]) -> TableState {
        TableState {
            keyspace: "ks".into(),
            table: format!("t{gc_grace_seconds}"),
            gc_grace_seconds,
            priority: 0,
            ranges: repaired
                .iter()
                .enumerate()
                .map(|(i, at)| RangeState {
                    range: (i as i64 * 100, i as i64 * 100 + 100),
                    repaired_ms: *at,
                })
                .collect(),
        }
    }

    #[test]
    fn a_range_is_due_every_half_gc_grace_and_never_sooner_than_the_minimum() {
        assert_eq!(interval(864_000, MIN), Duration::from_secs(432_000));
        assert_eq!(interval(10, MIN), MIN);
        let never = RangeState {
            range: (0, 1),
            repaired_ms: None,
        };
        assert_eq!(due_ms(&never, MIN), 0);
        let once = RangeState {
            repaired_ms: Some(1_000),
            ..never
        };
        assert_eq!(due_ms(&once, MIN), 61_000);
    }

    #[test]
    fn the_next_range_is_the_due_one_waiting_longest() {
        let day = 86_400_000;
        let tables = [
            table(864_000, &[Some(10 * day), Some(day)]),
            table(864_000, &[Some(2 * day)]),
        ];
        // both due at day 11: the one repaired on day 1 first
        let now = 11 * day;
        assert_eq!(
            next(&tables, MIN, now),
            Some(Next {
                table: 0,
                range: (100, 200)
            })
        );
        // on day 6 only the one repaired on day 1 is due (every half of 10 days)
        assert_eq!(
            next(&tables, MIN, 6 * day).map(|n| n.range),
            Some((100, 200))
        );
        assert_eq!(next(&tables, MIN, 6 * day - 1), None);
        // a range never repaired goes first
        let fresh = [tables[0].clone(), table(864_000, &[None])];
        assert_eq!(next(&fresh, MIN, now).map(|n| n.table), Some(1));
        assert_eq!(next(&[], MIN, now), None);
        // a table of a higher priority goes before one waiting longer
        let mut urgent = tables.clone();
        urgent[1].priority = 1;
        assert_eq!(next(&urgent, MIN, now).map(|n| n.table), Some(1));
    }

    #[test]
    fn a_table_is_whole_once_every_range_was_repaired() {
        let partly = table(120, &[Some(5_000), None]);
        assert_eq!(table_summary(&partly, MIN), (None, Some(0)));
        let whole = table(120, &[Some(5_000), Some(9_000)]);
        assert_eq!(table_summary(&whole, MIN), (Some(5_000), Some(65_000)));
    }

    #[test]
    fn repair_holds_off_while_compaction_is_behind_or_clients_wait() {
        let limits = Limits::default();
        let calm = Load {
            pending_compactions: 3,
            client_p99_ms: 30.0,
            baseline_p99_ms: 25.0,
        };
        assert_eq!(hold_off(&calm, &limits), None);
        let behind = Load {
            pending_compactions: 33,
            ..calm.clone()
        };
        assert!(hold_off(&behind, &limits)
            .unwrap()
            .contains("compaction is behind"));
        let slow = Load {
            client_p99_ms: 60.0,
            ..calm.clone()
        };
        assert!(hold_off(&slow, &limits).unwrap().contains("client p99"));
        let idle_noise = Load {
            client_p99_ms: 9.0,
            baseline_p99_ms: 1.0,
            ..calm
        };
        assert_eq!(hold_off(&idle_noise, &limits), None);
    }

    /// Each node repairs only its primary ranges; whatever each picks at the same moment,
    /// no two picks overlap.
    #[test]
    fn nodes_picking_at_once_never_pick_overlapping_ranges() {
        // a ring of 3 nodes with 4 tokens each, every node's primary ranges
        let tokens: Vec<i64> = (0..12)
            .map(|i| i64::MIN / 2 + i * (i64::MAX / 12))
            .collect();
        let mut primaries: Vec<Vec<TokenRange>> = vec![Vec::new(); 3];
        for (i, right) in tokens.iter().enumerate() {
            let left = tokens[(i + tokens.len() - 1) % tokens.len()];
            primaries[i % 3].push((left, *right));
        }
        for now in [0u64, 10, 1_000_000] {
            let picks: Vec<TokenRange> = primaries
                .iter()
                .enumerate()
                .filter_map(|(n, ranges)| {
                    let state = TableState {
                        keyspace: "ks".into(),
                        table: "t".into(),
                        gc_grace_seconds: 10,
                        priority: 0,
                        ranges: ranges
                            .iter()
                            .enumerate()
                            .map(|(i, r)| RangeState {
                                range: *r,
                                repaired_ms: ((i + n) % 2 == 0).then_some(now / 2),
                            })
                            .collect(),
                    };
                    next(&[state], MIN, now).map(|n| n.range)
                })
                .collect();
            assert_eq!(picks.len(), 3);
            for (i, a) in picks.iter().enumerate() {
                for b in &picks[i + 1..] {
                    assert!(intersection(*a, *b).is_empty(), "{a:?} and {b:?} overlap");
                }
            }
        }
    }
}
