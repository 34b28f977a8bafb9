//! A wall clock that moves with tokio's clock: real time in production, paused time in tests,
//! a host's simulated time under turmoil.
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use tokio::time::Instant;

use crate::{Clock, SystemClock};

/// The wall time when it was made, advanced by tokio's monotonic clock, plus the jumps it was
/// told to make. Clones share their jumps, so a test keeps one to move a node's clock.
/// Make it on the runtime whose time should drive it (a turmoil host's, for a simulated node).
#[derive(Clone, Debug)]
pub struct SteadyClock {
    start_micros: i64,
    start: Instant,
    jumped: Arc<AtomicI64>,
}

impl SteadyClock {
    /// A clock starting at the system's wall time.
    pub fn new() -> SteadyClock {
        SteadyClock::starting_at(SystemClock.now_micros())
    }

    /// A clock reading `micros` since the epoch now.
    pub fn starting_at(micros: i64) -> SteadyClock {
        SteadyClock {
            start_micros: micros,
            start: Instant::now(),
            jumped: Arc::default(),
        }
    }

    /// Moves the clock by `micros` (backwards when negative), as NTP stepping it would.
    pub fn jump(&self, micros: i64) {
        self.jumped.fetch_add(micros, Ordering::SeqCst);
    }
}

impl Default for SteadyClock {
    fn default() -> SteadyClock {
        SteadyClock::new()
    }
}

impl Clock for SteadyClock {
    fn now_micros(&self) -> i64 {
        let elapsed = self.start.elapsed().as_micros() as i64;
        self.start_micros + elapsed + self.jumped.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn it_follows_tokio_time_and_jumps_both_ways() {
        let clock = SteadyClock::starting_at(1_000_000);
        let handle = clock.clone();
        tokio::time::advance(Duration::from_millis(5)).await;
        assert_eq!(clock.now_micros(), 1_005_000);
        handle.jump(-2_000_000);
        assert_eq!(clock.now_micros(), -995_000);
        handle.jump(10_000_000);
        assert_eq!(clock.now_millis(), 9_005);
    }
}
