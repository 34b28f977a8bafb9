//! [`Throttle`]: a node-wide cap on the bytes streams send per second (Cassandra's
//! `stream_throughput_outbound` and `entire_sstable_stream_throughput_outbound`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// Hands out the link's time: each send of `n` bytes books `n / rate` seconds after the
/// previous booking ends and waits until its own booking ends, so that however many sessions
/// share it, the node sends at most `rate` bytes a second. A rate of 0 is unlimited.
#[derive(Debug)]
pub struct Throttle {
    bytes_per_second: AtomicU64,
    booked_until: Mutex<Option<Instant>>,
}

impl Throttle {
    pub fn new(bytes_per_second: u64) -> Throttle {
        Throttle {
            bytes_per_second: AtomicU64::new(bytes_per_second),
            booked_until: Mutex::new(None),
        }
    }

    pub fn rate(&self) -> u64 {
        self.bytes_per_second.load(Ordering::Relaxed)
    }

    pub fn set_rate(&self, bytes_per_second: u64) {
        self.bytes_per_second
            .store(bytes_per_second, Ordering::Relaxed);
    }

    /// Waits until `bytes` may be sent.
    pub async fn acquire(&self, bytes: u64) {
        let rate = self.rate();
        if rate == 0 {
            return;
        }
        let cost = Duration::from_secs_f64(bytes as f64 / rate as f64);
        let until = {
            let mut booked = self.booked_until.lock();
            let now = Instant::now();
            let start = booked.filter(|b| *b > now).unwrap_or(now);
            let until = start + cost;
            *booked = Some(until);
            until
        };
        tokio::time::sleep_until(until).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[tokio::test(start_paused = true)]
    async fn two_senders_share_the_rate() {
        let throttle = Arc::new(Throttle::new(1024 * 1024));
        let started = Instant::now();
        let send = |throttle: Arc<Throttle>| async move {
            for _ in 0..10 {
                throttle.acquire(256 * 1024).await;
            }
        };
        let (a, b) = (
            tokio::spawn(send(throttle.clone())),
            tokio::spawn(send(throttle.clone())),
        );
        a.await.expect("a");
        b.await.expect("b");
        // 5 MiB at 1 MiB/s.
        let elapsed = started.elapsed().as_secs_f64();
        assert!((elapsed - 5.0).abs() < 0.05, "{elapsed}");
        throttle.set_rate(0);
        let unthrottled = Instant::now();
        throttle.acquire(u64::MAX).await;
        assert_eq!(unthrottled.elapsed(), Duration::ZERO);
    }
}
