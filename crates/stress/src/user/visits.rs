//! cassandra-stress's `insert: visits` and `revisit` (its `SeedManager`): a partition's rows
//! are written over `visits` inserts, `max(1, rows / visits)` rows a visit, in row order.
//! A partition part-written waits in a shared pool, in the order of first visits; each
//! partition an insert wants first draws a pool index from the inverted `revisit`
//! distribution and continues the partition there if one is waiting and no other insert holds
//! it; otherwise it starts a new partition from the population.
//!
//! One difference: cassandra-stress's pool is a list that closes the gap a finished partition
//! leaves; here the newest entry moves into the gap (constant time on a pool of a million).

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::dist::{DistSpec, Sampler};

/// One visit to a partition: the slice of its rows this insert writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visit {
    pub seed: i64,
    /// Rows written by earlier visits.
    pub position: usize,
    visits: u32,
}

impl Visit {
    /// A first visit to the partition of `seed`, to be written in `visits` visits.
    pub fn first(seed: i64, visits: i64) -> Visit {
        Visit {
            seed,
            position: 0,
            visits: u32::try_from(visits.max(1)).unwrap_or(u32::MAX),
        }
    }

    /// The rows (indexes into the partition's rows) of this visit, of `rows` in all.
    pub fn slice(&self, rows: usize) -> std::ops::Range<usize> {
        let count = (rows / self.visits as usize).max(1);
        let start = self.position.min(rows);
        start..(start + count).min(rows)
    }

    /// Whether this visit writes the partition's last rows.
    pub fn finishes(&self, rows: usize) -> bool {
        self.slice(rows).end >= rows
    }
}

/// An entry of the pool: a part-written partition, held while an insert writes it.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    visit: Visit,
    held: bool,
}

#[derive(Debug, Default)]
struct Entries {
    list: Vec<Waiting>,
    index: HashMap<i64, usize>,
}

/// The shared pool of part-written partitions.
#[derive(Debug)]
pub struct Pool {
    pub visits: DistSpec,
    pub revisit: DistSpec,
    entries: Mutex<Entries>,
}

impl Pool {
    pub fn new(visits: DistSpec, revisit: DistSpec) -> Pool {
        Pool {
            visits,
            revisit: DistSpec {
                inverted: !revisit.inverted,
                ..revisit
            },
            entries: Mutex::new(Entries::default()),
        }
    }

    /// Whether partitions can take more than one visit (else the pool stays empty).
    pub fn active(&self) -> bool {
        self.visits.max() > 1
    }

    /// The waiting partition at `index` (drawn from the inverted `revisit` distribution),
    /// now held by the caller; `None` if there is none or another insert holds it.
    pub fn take(&self, index: i64) -> Option<Visit> {
        let mut e = self.entries.lock();
        let w = e.list.get_mut(usize::try_from(index).ok()?)?;
        if w.held {
            return None;
        }
        w.held = true;
        Some(w.visit)
    }

    /// Records a finished visit: the partition waits for its next visit, or leaves the
    /// pool when this visit wrote its last rows.
    pub fn visited(&self, visit: Visit, rows: usize) {
        let mut e = self.entries.lock();
        let next = Visit {
            position: visit.slice(rows).end,
            ..visit
        };
        let done = visit.finishes(rows);
        match (e.index.get(&visit.seed).copied(), done) {
            (Some(i), false) => {
                e.list[i] = Waiting {
                    visit: next,
                    held: false,
                }
            }
            (Some(i), true) => e.remove(i),
            (None, false) => e.push(next),
            (None, true) => {}
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.lock().list.len()
    }
}

impl Entries {
    fn push(&mut self, visit: Visit) {
        self.index.insert(visit.seed, self.list.len());
        self.list.push(Waiting { visit, held: false });
    }

    fn remove(&mut self, i: usize) {
        let gone = self.list.swap_remove(i);
        self.index.remove(&gone.visit.seed);
        if let Some(moved) = self.list.get(i) {
            self.index.insert(moved.visit.seed, i);
        }
    }
}

/// One worker's draws from the `visits` and `revisit` distributions.
#[derive(Debug, Clone)]
pub struct Draws {
    visits: Sampler,
    revisit: Sampler,
}

impl Draws {
    pub fn new(pool: &Pool, seed: i64) -> Draws {
        Draws {
            visits: Sampler::new(pool.visits.clone(), seed ^ 0x0715_1715),
            revisit: Sampler::new(pool.revisit.clone(), seed.rotate_left(17)),
        }
    }

    /// A waiting partition to continue, if the drawn pool index holds an available one.
    pub fn revisit(&mut self, pool: &Pool) -> Option<Visit> {
        if !pool.active() {
            return None;
        }
        pool.take(self.revisit.next())
    }

    /// The first visit of a new partition.
    pub fn first(&mut self, seed: i64) -> Visit {
        Visit::first(seed, self.visits.next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partition_is_written_in_slices() {
        let v = Visit::first(7, 3);
        assert_eq!(v.slice(10), 0..3);
        let mut position = 0;
        let mut slices = Vec::new();
        loop {
            let visit = Visit { position, ..v };
            slices.push(visit.slice(10));
            if visit.finishes(10) {
                break;
            }
            position = visit.slice(10).end;
        }
        // 10 rows / 3 visits = 3 a visit, so the tenth row takes a fourth visit.
        assert_eq!(slices, vec![0..3, 3..6, 6..9, 9..10]);
        assert_eq!(Visit::first(1, 5).slice(2), 0..1);
        assert!(Visit::first(1, 1).finishes(4));
    }

    #[test]
    fn the_pool_holds_part_written_partitions() {
        let pool = Pool::new(DistSpec::fixed(2), DistSpec::fixed(0));
        assert!(pool.active());
        let first = Visit::first(5, 2);
        pool.visited(first, 4);
        assert_eq!(pool.len(), 1);
        let again = pool.take(0).expect("waiting at index 0");
        assert_eq!((again.seed, again.position), (5, 2));
        assert_eq!(pool.take(0), None, "held by the first taker");
        assert_eq!(pool.take(1), None, "nothing at index 1");
        pool.visited(again, 4);
        assert_eq!(pool.len(), 0, "the second visit wrote the last rows");
    }

    #[test]
    fn finished_partitions_leave_without_disturbing_the_rest() {
        let pool = Pool::new(DistSpec::fixed(3), DistSpec::uniform(0, 2));
        for seed in 1..=3 {
            pool.visited(Visit::first(seed, 3), 3);
        }
        let one = pool.take(0).expect("seed 1");
        assert_eq!(one.seed, 1);
        pool.visited(Visit { position: 2, ..one }, 3);
        assert_eq!(pool.len(), 2);
        let seeds: Vec<i64> = (0..2)
            .filter_map(|i| pool.take(i))
            .map(|v| v.seed)
            .collect();
        assert_eq!(seeds, vec![3, 2]);
    }

    #[test]
    fn single_visits_never_use_the_pool() {
        let pool = Pool::new(DistSpec::fixed(1), DistSpec::uniform(1, 1_000_000));
        let mut draws = Draws::new(&pool, 9);
        pool.visited(Visit::first(1, 1), 5);
        assert_eq!(pool.len(), 0);
        assert_eq!(draws.revisit(&pool), None);
        assert_eq!(draws.first(4), Visit::first(4, 1));
    }
}
