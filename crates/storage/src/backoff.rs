//! [`Backoff`]: the pacing of background work that keeps failing (flushes and compactions on a
//! full or broken disk, commit-log segment creation under `commit_failure_policy: ignore`). The
//! pause doubles with each failure in a row, from `first` up to `max`, and a failure is worth
//! logging at the 1st, 2nd, 4th, 8th… of a run rather than at every attempt.

use std::time::{Duration, Instant};

/// Failures in a row and when the next attempt is due.
#[derive(Debug)]
pub struct Backoff {
    first: Duration,
    max: Duration,
    failures: u32,
    next: Option<Instant>,
}

impl Backoff {
    pub const fn new(first: Duration, max: Duration) -> Backoff {
        Backoff {
            first,
            max,
            failures: 0,
            next: None,
        }
    }

    /// Records a failure at `now`; `true` when this one should be logged.
    pub fn failed(&mut self, now: Instant) -> bool {
        self.failures = self.failures.saturating_add(1);
        self.next = Some(now + self.pause());
        self.failures.is_power_of_two()
    }

    /// Records a success; returns how many failures in a row it ended.
    pub fn succeeded(&mut self) -> u32 {
        self.next = None;
        std::mem::take(&mut self.failures)
    }

    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// The pause after the failures so far (`first` when there were none).
    pub fn pause(&self) -> Duration {
        let doublings = self.failures.saturating_sub(1).min(16);
        self.first.saturating_mul(1 << doublings).min(self.max)
    }

    /// Whether the next attempt is due at `now`.
    pub fn ready(&self, now: Instant) -> bool {
        self.next.is_none_or(|next| now >= next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIRST: Duration = Duration::from_millis(50);
    const MAX: Duration = Duration::from_secs(10);

    #[test]
    fn pauses_double_up_to_the_maximum_and_reset_on_success() {
        let mut backoff = Backoff::new(FIRST, MAX);
        let now = Instant::now();
        assert_eq!(backoff.pause(), FIRST);
        assert!(backoff.ready(now));
        let logged: Vec<bool> = (0..9).map(|_| backoff.failed(now)).collect();
        assert_eq!(
            logged,
            [true, true, false, true, false, false, false, true, false]
        );
        assert_eq!(backoff.pause(), MAX, "50 ms × 2⁸ is past 10 s");
        assert!(!backoff.ready(now + Duration::from_secs(9)));
        assert!(backoff.ready(now + MAX));
        assert_eq!(backoff.succeeded(), 9);
        assert_eq!(backoff.failures(), 0);
        assert!(backoff.ready(now));
        backoff.failed(now);
        assert_eq!(backoff.pause(), FIRST);
        backoff.failed(now);
        assert_eq!(backoff.pause(), FIRST * 2);
        for _ in 0..100 {
            backoff.failed(now);
        }
        assert_eq!(backoff.pause(), MAX);
    }
}
