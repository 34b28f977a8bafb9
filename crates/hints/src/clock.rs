//! Wall-clock milliseconds for hint creation times and expiry: the system time at start-up
//! advanced by tokio's monotonic clock, so a clock step cannot reorder hints, and tests with
//! paused time control it.
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start_ms: i64,
    start: Instant,
}

impl Clock {
    pub fn new() -> Clock {
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Clock {
            start_ms: since_epoch.as_millis() as i64,
            start: Instant::now(),
        }
    }

    pub fn now_ms(&self) -> i64 {
        self.start_ms + self.start.elapsed().as_millis() as i64
    }
}
