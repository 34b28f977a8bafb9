//! Ballots and the hybrid clock that issues them.
//!
//! A ballot orders Paxos rounds. Like Cassandra's time-based UUID ballots it leads with the
//! microseconds of the proposer's clock, so a committed update can take the ballot's time as its
//! write timestamp; then come a counter and the node, which make ballots of two proposers, or of
//! two runs of one, differ when their microseconds are equal.
use parking_lot::Mutex;
use std::fmt;

/// A Paxos ballot, ordered by microseconds, then counter, then node.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Ballot {
    /// Microseconds since the Unix epoch on the proposer's hybrid clock.
    pub micros: u64,
    /// The proposer's start counter (one more at each start of the node), so that a node that
    /// restarts with its clock set back never issues a ballot of an earlier run again.
    pub counter: u16,
    /// The proposing node.
    pub node: u64,
}

impl Ballot {
    /// The ballot before every other, never issued: what a fresh replica has promised.
    pub const ZERO: Ballot = Ballot {
        micros: 0,
        counter: 0,
        node: 0,
    };

    /// Whether this ballot is of a later microsecond than `other`. A replica promises only such
    /// ballots, so the updates decided for a partition have strictly increasing write timestamps.
    pub fn is_later_than(&self, other: &Ballot) -> bool {
        self.micros > other.micros
    }
}

impl fmt::Debug for Ballot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.micros, self.counter, self.node)
    }
}

/// The wall clock ballots lead with (the `clock` crate's seam). It may jump backwards (NTP, a
/// restart on another clock): [`BallotGenerator`] never does.
pub use clock::{Clock, SystemClock};

/// Issues ballots from a hybrid logical clock: the wall clock, but never at or below a
/// microsecond already issued or witnessed. A node seeds it at start with the highest ballot
/// it persisted (its Paxos state's, and the last it issued if it keeps that) and a start
/// counter it persisted one higher than the previous start's, so a restart never reuses a
/// ballot even when the clock went back.
pub struct BallotGenerator<C> {
    clock: C,
    node: u64,
    counter: u16,
    last_micros: Mutex<u64>,
}

/// The clock's microseconds as a ballot holds them (a clock before the epoch reads 0).
pub(crate) fn wall_micros(clock: &impl Clock) -> u64 {
    clock.now_micros().max(0) as u64
}

impl<C: Clock> BallotGenerator<C> {
    /// A generator for `node` in its start number `counter`, above `seed` (the highest ballot
    /// persisted before this start, if any).
    pub fn new(clock: C, node: u64, counter: u16, seed: Option<Ballot>) -> Self {
        BallotGenerator {
            clock,
            node,
            counter,
            last_micros: Mutex::new(seed.map_or(0, |b| b.micros)),
        }
    }

    /// The next ballot: of a later microsecond than every ballot issued or witnessed here, and
    /// than `at_least` (the ballot that superseded the caller's last round) when given.
    pub fn next(&self, at_least: Option<Ballot>) -> Ballot {
        let now = wall_micros(&self.clock);
        let mut last = self.last_micros.lock();
        let floor = at_least.map_or(*last, |b| b.micros.max(*last));
        *last = now.max(floor + 1);
        Ballot {
            micros: *last,
            counter: self.counter,
            node: self.node,
        }
    }

    /// Notes a ballot seen in an answer, so later ballots follow it (the hybrid clock's receive
    /// rule): a proposer whose clock is behind a peer's catches up at its first contention.
    pub fn witness(&self, ballot: Ballot) {
        let mut last = self.last_micros.lock();
        *last = (*last).max(ballot.micros);
    }

    /// The wall clock this generator reads.
    pub fn clock(&self) -> &C {
        &self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// A clock the test sets.
    #[derive(Clone, Default)]
    struct SetClock(Arc<AtomicU64>);

    impl Clock for SetClock {
        fn now_micros(&self) -> i64 {
            self.0.load(Ordering::SeqCst) as i64
        }
    }

    impl SetClock {
        fn set(&self, micros: u64) {
            self.0.store(micros, Ordering::SeqCst)
        }
    }

    #[test]
    fn ballots_order_by_micros_then_counter_then_node() {
        let b = |micros, counter, node| Ballot {
            micros,
            counter,
            node,
        };
        assert!(b(2, 0, 0) > b(1, 9, 9));
        assert!(b(1, 2, 0) > b(1, 1, 9));
        assert!(b(1, 1, 2) > b(1, 1, 1));
        assert!(b(2, 0, 0).is_later_than(&b(1, 9, 9)));
        assert!(!b(1, 2, 0).is_later_than(&b(1, 1, 0)));
    }

    #[test]
    fn ballots_follow_the_clock_and_never_repeat_a_microsecond() {
        let clock = SetClock::default();
        clock.set(1_000);
        let generator = BallotGenerator::new(clock.clone(), 7, 1, None);
        let first = generator.next(None);
        assert_eq!((first.micros, first.counter, first.node), (1_000, 1, 7));
        // The clock stands still: the next ballot moves on by a microsecond.
        assert_eq!(generator.next(None).micros, 1_001);
        // The clock goes back: ballots still move forward.
        clock.set(10);
        assert_eq!(generator.next(None).micros, 1_002);
        clock.set(5_000);
        assert_eq!(generator.next(None).micros, 5_000);
    }

    #[test]
    fn a_superseding_ballot_and_a_witnessed_one_raise_the_next() {
        let clock = SetClock::default();
        clock.set(100);
        let generator = BallotGenerator::new(clock, 1, 0, None);
        let theirs = Ballot {
            micros: 900,
            counter: 3,
            node: 2,
        };
        let next = generator.next(Some(theirs));
        assert!(next > theirs && next.is_later_than(&theirs));
        generator.witness(Ballot {
            micros: 2_000,
            counter: 0,
            node: 3,
        });
        assert_eq!(generator.next(None).micros, 2_001);
    }

    #[test]
    fn a_restart_seeded_with_the_persisted_ballot_never_goes_back() {
        let clock = SetClock::default();
        clock.set(50_000);
        let before = BallotGenerator::new(clock.clone(), 4, 1, None);
        let issued: Vec<Ballot> = (0..3).map(|_| before.next(None)).collect();
        let highest = *issued.iter().max().unwrap();
        // Restarted with its clock set back an hour's worth of microseconds.
        clock.set(10);
        let after = BallotGenerator::new(clock, 4, 2, Some(highest));
        let next = after.next(None);
        assert!(next.is_later_than(&highest), "{next:?} after {highest:?}");
        assert!(issued.iter().all(|b| *b != next));
    }

    #[test]
    fn threads_sharing_a_generator_never_get_the_same_ballot() {
        let generator = Arc::new(BallotGenerator::new(SetClock::default(), 1, 0, None));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let generator = generator.clone();
                std::thread::spawn(move || {
                    (0..1_000).map(|_| generator.next(None)).collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<Ballot> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        all.sort();
        all.dedup_by_key(|b| b.micros);
        assert_eq!(all.len(), 4_000, "every ballot of its own microsecond");
    }

    #[test]
    fn two_runs_at_the_same_microsecond_issue_different_ballots() {
        // A start whose seed was lost still differs from the previous run by its counter.
        let clock = SetClock::default();
        clock.set(777);
        let one = BallotGenerator::new(clock.clone(), 4, 1, None).next(None);
        let two = BallotGenerator::new(clock, 4, 2, None).next(None);
        assert_eq!(one.micros, two.micros);
        assert_ne!(one, two);
    }
}
