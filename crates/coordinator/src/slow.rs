//! The slow query log (Cassandra's `slow_query_log_timeout` and `MonitoringTask`): local reads
//! slower than the threshold are collected, aggregated per operation, and reported every
//! report interval as `N operations were slow in the last M msecs:` followed by one line per
//! operation. Checking a read costs one atomic load and a comparison; only slow reads take the
//! lock.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Cassandra's default `slow_query_log_timeout`.
pub const DEFAULT_THRESHOLD: Duration = Duration::from_millis(500);
/// Cassandra's `cassandra.monitoring_report_interval_ms`.
pub const REPORT_INTERVAL: Duration = Duration::from_secs(5);
/// Operations kept between reports (`cassandra.monitoring_max_operations`); more are counted
/// as dropped.
const MAX_OPERATIONS: usize = 50;

/// One operation's slow runs since the last report, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Runs {
    count: u64,
    total: u64,
    min: u64,
    max: u64,
}

#[derive(Debug, Default)]
struct Pending {
    operations: BTreeMap<String, Runs>,
    dropped: u64,
}

/// Slow reads waiting for the next report.
#[derive(Debug)]
pub struct SlowQueries {
    /// Milliseconds; 0 turns the log off.
    threshold_ms: AtomicU64,
    pending: Mutex<Pending>,
    last_report: Mutex<Instant>,
}

impl Default for SlowQueries {
    fn default() -> Self {
        SlowQueries {
            threshold_ms: AtomicU64::new(DEFAULT_THRESHOLD.as_millis() as u64),
            pending: Mutex::new(Pending::default()),
            last_report: Mutex::new(Instant::now()),
        }
    }
}

impl SlowQueries {
    /// Sets `slow_query_log_timeout`; zero turns the log off.
    pub fn set_threshold(&self, threshold: Duration) {
        let ms = u64::try_from(threshold.as_millis()).unwrap_or(u64::MAX);
        self.threshold_ms.store(ms, Ordering::Relaxed);
    }

    /// Records the operation `describe` names if `elapsed` is past the threshold.
    pub fn check(&self, elapsed: Duration, describe: impl FnOnce() -> String) {
        let threshold = self.threshold_ms.load(Ordering::Relaxed);
        if threshold == 0 || elapsed.as_millis() <= u128::from(threshold) {
            return;
        }
        let ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        let operation = describe();
        let mut pending = self.pending.lock();
        if let Some(runs) = pending.operations.get_mut(&operation) {
            runs.count += 1;
            runs.total = runs.total.saturating_add(ms);
            runs.min = runs.min.min(ms);
            runs.max = runs.max.max(ms);
        } else if pending.operations.len() < MAX_OPERATIONS {
            let runs = Runs {
                count: 1,
                total: ms,
                min: ms,
                max: ms,
            };
            pending.operations.insert(operation, runs);
        } else {
            pending.dropped += 1;
        }
    }

    /// The report of the slow operations since the last one (`None` when there were none),
    /// clearing them.
    pub fn take_report(&self) -> Option<String> {
        let taken = std::mem::take(&mut *self.pending.lock());
        let elapsed = {
            let mut last = self.last_report.lock();
            let elapsed = last.elapsed();
            *last = Instant::now();
            elapsed
        };
        if taken.operations.is_empty() && taken.dropped == 0 {
            return None;
        }
        let threshold = self.threshold_ms.load(Ordering::Relaxed);
        Some(render(&taken, elapsed, threshold))
    }

    /// Logs a report every [`REPORT_INTERVAL`] while the process runs.
    pub async fn report_periodically(self: std::sync::Arc<Self>) {
        let mut ticks = tokio::time::interval(REPORT_INTERVAL);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            if let Some(report) = self.take_report() {
                tracing::info!("{report}");
            }
        }
    }
}

/// Cassandra's lines: `<op>, time T msec - slow timeout S msec` for one run, `<op>, was slow
/// C times: avg/min/max A/B/C msec - slow timeout S msec` for several.
fn render(pending: &Pending, elapsed: Duration, threshold: u64) -> String {
    let count: u64 = pending.operations.values().map(|r| r.count).sum::<u64>() + pending.dropped;
    let mut lines = vec![format!(
        "{count} operations were slow in the last {} msecs:",
        elapsed.as_millis()
    )];
    for (operation, r) in &pending.operations {
        lines.push(if r.count == 1 {
            format!(
                "<{operation}>, time {} msec - slow timeout {threshold} msec",
                r.total
            )
        } else {
            format!(
                "<{operation}>, was slow {} times: avg/min/max {}/{}/{} msec - slow timeout \
                 {threshold} msec",
                r.count,
                r.total / r.count,
                r.min,
                r.max
            )
        });
    }
    if pending.dropped > 0 {
        lines.push(format!("... ({} were dropped)", pending.dropped));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn fast_reads_are_not_recorded() {
        let slow = SlowQueries::default();
        slow.check(ms(500), || unreachable!("not described when fast"));
        assert_eq!(slow.take_report(), None);
        slow.set_threshold(Duration::ZERO);
        slow.check(ms(10_000), || unreachable!("the log is off"));
        assert_eq!(slow.take_report(), None);
    }

    #[test]
    fn slow_reads_are_aggregated_as_cassandra_reports_them() {
        let slow = SlowQueries::default();
        slow.set_threshold(ms(10));
        slow.check(ms(30), || "SELECT * FROM ks.a".into());
        slow.check(ms(11), || "SELECT * FROM ks.b".into());
        slow.check(ms(50), || "SELECT * FROM ks.b".into());
        let report = slow.take_report().expect("a report");
        let lines: Vec<&str> = report.lines().collect();
        assert!(lines[0].starts_with("3 operations were slow in the last "));
        assert!(lines[0].ends_with(" msecs:"));
        assert_eq!(
            lines[1],
            "<SELECT * FROM ks.a>, time 30 msec - slow timeout 10 msec"
        );
        assert_eq!(
            lines[2],
            "<SELECT * FROM ks.b>, was slow 2 times: avg/min/max 30/11/50 msec - slow timeout \
             10 msec"
        );
        assert_eq!(slow.take_report(), None, "a report clears what it lists");
    }

    #[test]
    fn operations_beyond_the_limit_are_counted_as_dropped() {
        let slow = SlowQueries::default();
        slow.set_threshold(ms(1));
        for i in 0..MAX_OPERATIONS + 3 {
            slow.check(ms(5), || format!("op {i}"));
        }
        let report = slow.take_report().expect("a report");
        assert!(report.starts_with(&format!("{} operations", MAX_OPERATIONS + 3)));
        assert!(report.ends_with("... (3 were dropped)"));
    }
}
