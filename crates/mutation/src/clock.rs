//! The node's clock for the timestamps it gives writes.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static LAST_MICROS: AtomicI64 = AtomicI64::new(0);

/// Wall-clock microseconds, strictly increasing across calls (Cassandra's server timestamps).
pub fn unique_micros() -> i64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    let mut last = LAST_MICROS.load(Ordering::Relaxed);
    loop {
        let next = now.max(last + 1);
        match LAST_MICROS.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => last = seen,
        }
    }
}
