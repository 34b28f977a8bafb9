//! The node's wall clock behind one seam. Everything that stamps or compares wall-clock time
//! (write timestamps, gossip generations, hint expiry, batchlog ages, Paxos ballots, the Echo
//! verb's clock) reads a [`Clock`] instead of `SystemTime`, so a simulation can give each node a
//! clock of its own and jump it forwards or backwards.
//!
//! - [`SystemClock`]: the system's wall clock (production).
//! - [`SteadyClock`] (feature `steady`): the wall time when it was made, advanced by tokio's
//!   monotonic clock, so it never steps by itself, follows paused and simulated (turmoil) time,
//!   and moves only when told to ([`SteadyClock::jump`]).
//! - [`SharedClock`]: the handle services keep (the system clock by default).
//! - [`unique_micros`]: strictly increasing microseconds for server-side write timestamps;
//!   [`UniqueMicros`] the same for one node's own clock.
use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[cfg(feature = "steady")]
mod steady;
#[cfg(feature = "steady")]
pub use steady::SteadyClock;

/// A source of wall-clock time. It may jump either way (NTP, a restart on another clock, a
/// simulated clock jump); whoever needs monotonic values keeps them so itself.
pub trait Clock: Send + Sync + 'static {
    /// Microseconds since the Unix epoch (negative before it).
    fn now_micros(&self) -> i64;

    /// Milliseconds since the Unix epoch.
    fn now_millis(&self) -> i64 {
        self.now_micros().div_euclid(1_000)
    }

    /// The time since the Unix epoch (zero for a clock set before it).
    fn since_epoch(&self) -> Duration {
        Duration::from_micros(self.now_micros().max(0) as u64)
    }
}

/// The system's wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_micros(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_micros() as i64)
    }
}

/// The clock a service keeps: any [`Clock`], the system clock by default.
#[derive(Clone)]
pub struct SharedClock(Arc<dyn Clock>);

impl SharedClock {
    pub fn new(clock: impl Clock) -> SharedClock {
        SharedClock(Arc::new(clock))
    }
}

impl<C: Clock> From<Arc<C>> for SharedClock {
    fn from(clock: Arc<C>) -> SharedClock {
        SharedClock(clock)
    }
}

impl Default for SharedClock {
    fn default() -> SharedClock {
        SharedClock::new(SystemClock)
    }
}

impl fmt::Debug for SharedClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedClock({})", self.0.now_micros())
    }
}

impl Clock for SharedClock {
    fn now_micros(&self) -> i64 {
        self.0.now_micros()
    }
}

impl<C: Clock> Clock for Arc<C> {
    fn now_micros(&self) -> i64 {
        C::now_micros(self)
    }
}

static LAST_MICROS: AtomicI64 = AtomicI64::new(0);

/// The system clock's microseconds, strictly increasing across calls in this process
/// (Cassandra's server-side write timestamps).
pub fn unique_micros() -> i64 {
    next_after(&LAST_MICROS, SystemClock.now_micros())
}

/// Strictly increasing microseconds of one clock: the server-side write timestamps of a node
/// whose clock is not the process's (a simulated node's, which a test may jump).
#[derive(Debug)]
pub struct UniqueMicros {
    clock: SharedClock,
    last: AtomicI64,
}

impl UniqueMicros {
    pub fn new(clock: SharedClock) -> UniqueMicros {
        UniqueMicros {
            clock,
            last: AtomicI64::new(0),
        }
    }

    /// The clock's microseconds, or one more than the last value given when the clock has not
    /// moved past it (or jumped back).
    pub fn next(&self) -> i64 {
        next_after(&self.last, self.clock.now_micros())
    }
}

/// `now`, or one more than `last` if that is larger; stored as the new `last`.
fn next_after(last: &AtomicI64, now: i64) -> i64 {
    let mut seen = last.load(Ordering::Relaxed);
    loop {
        let next = now.max(seen + 1);
        match last.compare_exchange_weak(seen, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(current) => seen = current,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_clock_reads_the_system_time() {
        let before = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        let now = SharedClock::default().since_epoch();
        let after = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
        assert!(
            before <= now + Duration::from_micros(1) && now <= after,
            "{now:?}"
        );
    }

    #[test]
    fn unique_micros_strictly_increase_near_the_clock() {
        let first = unique_micros();
        let second = unique_micros();
        assert!(second > first);
        assert!((SystemClock.now_micros() - second).abs() < 1_000_000);
    }

    #[test]
    fn a_nodes_micros_follow_its_clock_and_never_repeat() {
        let now = Arc::new(AtomicI64::new(5_000));
        struct Shared(Arc<AtomicI64>);
        impl Clock for Shared {
            fn now_micros(&self) -> i64 {
                self.0.load(Ordering::SeqCst)
            }
        }
        let stamps = UniqueMicros::new(SharedClock::new(Shared(now.clone())));
        assert_eq!((stamps.next(), stamps.next()), (5_000, 5_001));
        now.store(9_000, Ordering::SeqCst);
        assert_eq!(stamps.next(), 9_000);
        now.store(1_000, Ordering::SeqCst); // jumped back: still increasing
        assert_eq!(stamps.next(), 9_001);
    }

    #[test]
    fn millis_round_down_before_the_epoch_too() {
        struct At(i64);
        impl Clock for At {
            fn now_micros(&self) -> i64 {
                self.0
            }
        }
        assert_eq!(At(1_999).now_millis(), 1);
        assert_eq!(At(-1).now_millis(), -1);
        assert_eq!(At(-1).since_epoch(), Duration::ZERO);
    }
}
