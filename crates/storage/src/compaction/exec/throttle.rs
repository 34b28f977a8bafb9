//! A node-wide byte-rate limiter shared by every compaction (`compaction_throughput`), changeable
//! at run time; 0 means unthrottled.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// The longest single sleep, so a stop request or a rate change is noticed quickly.
const MAX_NAP: Duration = Duration::from_millis(100);
/// How far ahead of the clock the granted bytes may run before a caller sleeps: callers pay
/// for many small grants with one nap, since each `sleep` costs tens of microseconds however
/// short it is asked to be (sleeping per partition capped compaction at a few MB/s).
const MIN_NAP: Duration = Duration::from_millis(10);

/// Paces callers to at most `rate` bytes per second in total.
pub struct Throttle {
    rate: AtomicU64,
    /// When the bytes granted so far are paid for.
    next_free: Mutex<Instant>,
}

impl Throttle {
    pub fn new(bytes_per_second: u64) -> Self {
        Throttle {
            rate: AtomicU64::new(bytes_per_second),
            next_free: Mutex::new(Instant::now()),
        }
    }

    pub fn rate(&self) -> u64 {
        self.rate.load(Ordering::Relaxed)
    }

    pub fn set_rate(&self, bytes_per_second: u64) {
        self.rate.store(bytes_per_second, Ordering::Relaxed);
    }

    /// Accounts for `bytes` and sleeps until the rate allows them; returns early once
    /// `stopped` (the node stops, the table is dropped) answers `true`.
    pub fn acquire(&self, bytes: u64, stopped: impl Fn() -> bool) {
        let rate = self.rate();
        if rate == 0 || bytes == 0 {
            return;
        }
        let due = {
            let mut next_free = self.next_free.lock();
            let start = (*next_free).max(Instant::now());
            *next_free = start + Duration::from_secs_f64(bytes as f64 / rate as f64);
            *next_free
        };
        if due.saturating_duration_since(Instant::now()) < MIN_NAP {
            return;
        }
        while !stopped() {
            let now = Instant::now();
            if now >= due {
                break;
            }
            std::thread::sleep((due - now).min(MAX_NAP));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pacing_follows_the_rate_and_zero_is_free() {
        let stop = || false;
        let throttle = Throttle::new(0);
        let started = Instant::now();
        throttle.acquire(1 << 30, stop);
        assert!(started.elapsed() < Duration::from_millis(50));
        throttle.set_rate(1_000_000);
        let started = Instant::now();
        for _ in 0..4 {
            throttle.acquire(50_000, stop);
        }
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(190), "{elapsed:?}");
        assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    }

    #[test]
    fn many_small_grants_keep_the_rate() {
        let stop = || false;
        let throttle = Throttle::new(10_000_000);
        let started = Instant::now();
        for _ in 0..10_000 {
            throttle.acquire(100, stop);
        }
        // 1 MB at 10 MB/s: about 100 ms, not 10,000 separate naps.
        let elapsed = started.elapsed();
        assert!(elapsed >= Duration::from_millis(85), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(400), "{elapsed:?}");
    }
}
