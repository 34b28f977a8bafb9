//! `native_transport_max_requests_per_second`: a global request rate limit (a generic cell
//! rate algorithm over one atomic). Bursts of up to [`BURST`] worth of requests pass at once;
//! beyond that each request is due one interval after the previous one.
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How far ahead of the clock requests may run before they wait.
const BURST: Duration = Duration::from_millis(100);

#[derive(Debug)]
pub(crate) struct RateLimiter {
    per_second: u32,
    interval: u64,
    start: Instant,
    /// Nanoseconds after `start` at which the next request is due.
    due: AtomicU64,
}

impl RateLimiter {
    pub fn new(per_second: u32) -> RateLimiter {
        RateLimiter {
            per_second,
            interval: 1_000_000_000 / u64::from(per_second.max(1)),
            start: Instant::now(),
            due: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Takes the next slot; how long the request must wait for it.
    pub fn reserve(&self) -> Duration {
        let now = self.now();
        let slot = self.take(now, u64::MAX).unwrap_or(now);
        Duration::from_nanos(slot.saturating_sub(now).saturating_sub(burst()))
    }

    /// Takes the next slot if the request need not wait for it.
    pub fn try_reserve(&self) -> bool {
        let now = self.now();
        self.take(now, now.saturating_add(burst())).is_some()
    }

    /// Advances `due` by one interval when the slot it gives is at most `latest`; the slot.
    fn take(&self, now: u64, latest: u64) -> Option<u64> {
        let mut due = self.due.load(Ordering::Relaxed);
        loop {
            let slot = due.max(now);
            if slot > latest {
                return None;
            }
            let next = slot.saturating_add(self.interval);
            match self
                .due
                .compare_exchange_weak(due, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Some(slot),
                Err(current) => due = current,
            }
        }
    }

    /// Cassandra's Overloaded message for a request over the rate.
    pub fn message(&self) -> String {
        format!(
            "Request breached global limit of {} requests/second. Server is currently in an \
             overloaded state and cannot accept more requests.",
            self.per_second
        )
    }
}

fn burst() -> u64 {
    BURST.as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_passes_then_requests_wait_one_interval_each() {
        let limiter = RateLimiter::new(100);
        // 100 ms of burst at 10 ms per request: 11 requests pass at once.
        let passed = (0..20).take_while(|_| limiter.try_reserve()).count();
        assert_eq!(passed, 11);
        let delay = limiter.reserve();
        assert!(
            delay > Duration::from_millis(5) && delay <= Duration::from_millis(10),
            "{delay:?}"
        );
        let next = limiter.reserve();
        assert!(next > delay, "{next:?} after {delay:?}");
    }

    #[test]
    fn the_message_is_cassandras() {
        assert_eq!(
            RateLimiter::new(5).message(),
            "Request breached global limit of 5 requests/second. Server is currently in an \
             overloaded state and cannot accept more requests."
        );
    }
}
