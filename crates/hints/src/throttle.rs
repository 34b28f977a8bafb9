//! The delivery throttle: a token bucket over bytes, one per host being delivered to.
//!
//! Cassandra divides `hinted_handoff_throttle` by the number of other nodes, so that all
//! nodes delivering hints to one recovered node together send it about the configured rate.
use std::time::Duration;

use tokio::time::Instant;

/// The rate one delivery may use: the throttle shared among the other `nodes - 1` nodes;
/// `None` when unthrottled (a throttle of 0).
pub fn rate_per_delivery(throttle: u64, nodes: usize) -> Option<f64> {
    if throttle == 0 {
        return None;
    }
    let others = nodes.saturating_sub(1).max(1);
    Some(throttle as f64 / others as f64)
}

pub struct Throttle {
    rate: Option<f64>,
    /// Bytes that may be sent now; negative after a send larger than what was available.
    available: f64,
    refilled: Instant,
}

impl Throttle {
    /// Starts empty, so the first second sends about `rate` bytes, not twice that.
    pub fn new(rate: Option<f64>) -> Throttle {
        Throttle {
            rate,
            available: 0.0,
            refilled: Instant::now(),
        }
    }

    pub fn set_rate(&mut self, rate: Option<f64>) {
        if rate != self.rate {
            self.refill();
            self.rate = rate;
        }
    }

    /// Waits until `bytes` may be sent. Up to one second of unused rate is saved for bursts.
    pub async fn acquire(&mut self, bytes: u64) {
        let Some(rate) = self.rate else { return };
        self.refill();
        self.available -= bytes as f64;
        if self.available < 0.0 {
            let wait = Duration::try_from_secs_f64(-self.available / rate).unwrap_or(Duration::MAX);
            tokio::time::sleep(wait).await;
        }
    }

    fn refill(&mut self) {
        let now = Instant::now();
        if let Some(rate) = self.rate {
            let earned = now.duration_since(self.refilled).as_secs_f64() * rate;
            self.available = (self.available + earned).min(rate);
        }
        self.refilled = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_throttle_is_divided_among_the_other_nodes() {
        assert_eq!(rate_per_delivery(1024 * 1024, 5), Some(262_144.0));
        assert_eq!(rate_per_delivery(1024 * 1024, 2), Some(1_048_576.0));
        assert_eq!(
            rate_per_delivery(1024, 1),
            Some(1024.0),
            "alone: not divided by 0"
        );
        assert_eq!(rate_per_delivery(1024, 0), Some(1024.0));
        assert_eq!(rate_per_delivery(0, 5), None);
    }

    #[tokio::test(start_paused = true)]
    async fn sends_at_the_rate_and_saves_at_most_one_second() {
        let mut throttle = Throttle::new(Some(1000.0));
        let start = Instant::now();
        for _ in 0..10 {
            throttle.acquire(500).await;
        }
        assert_eq!(start.elapsed(), Duration::from_secs(5));
        tokio::time::sleep(Duration::from_secs(60)).await;
        let start = Instant::now();
        throttle.acquire(1000).await;
        assert_eq!(start.elapsed(), Duration::ZERO, "one saved second");
        throttle.acquire(1000).await;
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn unthrottled_never_waits_and_rates_change() {
        let mut throttle = Throttle::new(None);
        let start = Instant::now();
        throttle.acquire(u64::MAX).await;
        assert_eq!(start.elapsed(), Duration::ZERO);
        throttle.set_rate(Some(100.0));
        throttle.acquire(200).await;
        assert_eq!(start.elapsed(), Duration::from_secs(2));
    }
}
