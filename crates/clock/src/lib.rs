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
//! - [`unique_micros`]: strictly increasing microseconds for server-side write timestamps.
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
    let now = SystemClock.now_micros();
    let mut last = LAST_MICROS.load(Ordering::Relaxed);
    loop {
        let next = now.max(last + 1);
        match LAST_MICROS.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
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
