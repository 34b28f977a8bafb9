//! YCSB's status thread (`-s`): every `status.interval` seconds (and once more at the end) a
//! line on standard error with the operations done so far, the current rate, the estimated
//! time to completion and each operation's latencies over the interval, worded as YCSB 0.17's
//! `StatusThread` and `OneMeasurementHdrHistogram.getSummary` print them.
#![allow(unsafe_code)] // localtime_r(3) for YCSB's local-time status lines

use std::time::{Duration, Instant, SystemTime};

use hdrhistogram::Histogram;

use super::workload::YcsbOp;
use crate::metrics::OpStats;

/// The counters one status line is computed from.
pub struct Snapshot<'a> {
    pub elapsed: Duration,
    pub interval: Duration,
    pub total_ops: u64,
    pub interval_ops: u64,
    pub todo_ops: u64,
    /// Each operation type seen so far, with its latencies over the interval.
    pub intervals: Vec<(YcsbOp, &'a Histogram<u64>)>,
}

/// One status line, without the trailing newline (YCSB ends it with a space).
pub fn line(label: &str, wall: SystemTime, s: &Snapshot) -> String {
    let elapsed_ms = s.elapsed.as_millis() as f64;
    let mut msg = format!(
        "{label}{} {} sec: {} operations; ",
        timestamp(wall),
        s.elapsed.as_secs(),
        s.total_ops
    );
    if s.total_ops != 0 {
        let current = 1000.0 * s.interval_ops as f64 / s.interval.as_millis() as f64;
        msg.push_str(&format!("{} current ops/sec; ", decimal(current)));
    }
    if s.todo_ops != 0 {
        let throughput = 1000.0 * s.total_ops as f64 / elapsed_ms;
        msg.push_str("est completion in ");
        msg.push_str(&remaining(java_long(
            (s.todo_ops as f64 / throughput).ceil(),
        )));
    }
    for (op, h) in &s.intervals {
        msg.push_str(&summary(op.name(), h));
        msg.push(' ');
    }
    msg
}

/// Java's `(long) d`: NaN is 0, out-of-range values saturate.
fn java_long(d: f64) -> i64 {
    if d.is_nan() {
        0
    } else {
        d as i64
    }
}

/// `OneMeasurementHdrHistogram.getSummary` of YCSB 0.17.
fn summary(name: &str, h: &Histogram<u64>) -> String {
    // An empty HdrHistogram reports Long.MAX_VALUE as its minimum.
    let min = if h.is_empty() {
        i64::MAX as u64
    } else {
        h.min()
    };
    format!(
        "[{name}: Count={}, Max={}, Min={min}, Avg={}, 90={}, 99={}, 99.9={}, 99.99={}]",
        h.len(),
        h.max(),
        decimal(h.mean()),
        decimal(h.value_at_quantile(0.90) as f64),
        decimal(h.value_at_quantile(0.99) as f64),
        decimal(h.value_at_quantile(0.999) as f64),
        decimal(h.value_at_quantile(0.9999) as f64),
    )
}

/// Java's `new DecimalFormat("#.##")`: at most two decimals, no trailing zeros.
fn decimal(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "∞" } else { "-∞" }.into();
    }
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "-0".into()
    } else {
        s.to_string()
    }
}

/// YCSB's `RemainingFormatter.format(seconds)`, quirks included ("5 second ").
fn remaining(seconds: i64) -> String {
    let mut time = String::new();
    let mut seconds = seconds;
    let days = seconds / 86_400;
    if days > 0 {
        time.push_str(&format!("{days} {} ", plural(days, "day")));
        seconds -= days * 86_400;
    }
    let hours = seconds / 3600;
    if hours > 0 {
        time.push_str(&format!("{hours} {} ", plural(hours, "hour")));
        seconds -= hours * 3600;
    }
    if days < 1 {
        let minutes = seconds / 60;
        if minutes > 0 {
            time.push_str(&format!("{minutes} {} ", plural(minutes, "minute")));
        }
    }
    if time.is_empty() {
        // YCSB tests the length after appending the number: one digit reads "second".
        let digits = seconds.to_string();
        let unit = if digits.len() == 1 {
            "second"
        } else {
            "seconds"
        };
        time = format!("{digits} {unit} ");
    }
    time
}

fn plural(n: i64, unit: &str) -> String {
    if n == 1 {
        unit.to_string()
    } else {
        format!("{unit}s")
    }
}

/// `yyyy-MM-dd HH:mm:ss:SSS` in local time, as YCSB's `SimpleDateFormat`.
fn timestamp(wall: SystemTime) -> String {
    let since = wall
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = libc::time_t::try_from(since.as_secs()).unwrap_or(0);
    // SAFETY: localtime_r only reads `secs` and writes into the zeroed `tm` we own.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = !unsafe { libc::localtime_r(&secs, &mut tm) }.is_null();
    if !ok {
        return String::from("0000-00-00 00:00:00:000");
    }
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}:{:03}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        since.subsec_millis()
    )
}

/// The status thread's state between lines: totals so far and the previous line's time.
pub struct Status {
    label: String,
    start: Instant,
    last: Instant,
    last_ops: u64,
    pub totals: Vec<OpStats>,
}

impl Status {
    /// Starts the clock (after allocating the histograms, which takes a moment).
    pub fn new(label: &str) -> Status {
        let totals = empty();
        let start = Instant::now();
        Status {
            label: label.to_string(),
            start,
            last: start,
            last_ops: 0,
            totals,
        }
    }

    /// Adds the interval's stats into the totals and returns the status line.
    pub fn tick(&mut self, interval: &[OpStats], operations: u64) -> String {
        let now = Instant::now();
        for (total, i) in self.totals.iter_mut().zip(interval) {
            total.add(i);
        }
        let total_ops = ops_of(&self.totals);
        let snapshot = Snapshot {
            elapsed: now - self.start,
            interval: now - self.last,
            total_ops,
            interval_ops: total_ops - self.last_ops,
            todo_ops: operations.saturating_sub(total_ops),
            intervals: YcsbOp::ALL
                .iter()
                .zip(interval.iter().zip(&self.totals))
                .filter(|(_, (_, total))| !total.service.is_empty())
                .map(|(op, (i, _))| (*op, &i.service))
                .collect(),
        };
        self.last = now;
        self.last_ops = total_ops;
        line(&self.label, SystemTime::now(), &snapshot)
    }
}

/// One empty [`OpStats`] per operation type, in [`YcsbOp::ALL`]'s order.
pub fn empty() -> Vec<OpStats> {
    YcsbOp::ALL.iter().map(|_| OpStats::new()).collect()
}

/// Operations counted towards `operationcount`: every READ-MODIFY-WRITE is also measured
/// as one READ and one UPDATE, which are not operations of their own.
pub fn ops_of(stats: &[OpStats]) -> u64 {
    let count = |op: YcsbOp| {
        YcsbOp::ALL
            .iter()
            .position(|o| *o == op)
            .map_or(0, |i| stats[i].service.len())
    };
    let all: u64 = stats.iter().map(|s| s.service.len()).sum();
    all.saturating_sub(2 * count(YcsbOp::ReadModifyWrite))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::new_histogram;

    #[test]
    fn numbers_as_java_formats_them() {
        assert_eq!(decimal(1234.5), "1234.5");
        assert_eq!(decimal(2.0), "2");
        assert_eq!(decimal(0.125), "0.12");
        assert_eq!(decimal(0.0), "0");
        assert_eq!(remaining(5), "5 second ");
        assert_eq!(remaining(42), "42 seconds ");
        assert_eq!(remaining(61), "1 minute ");
        assert_eq!(remaining(3 * 3600 + 120), "3 hours 2 minutes ");
        assert_eq!(remaining(86_400 + 3600), "1 day 1 hour ");
        assert_eq!(java_long(f64::NAN), 0);
    }

    #[test]
    fn a_status_line_reads_like_ycsb() {
        let mut read = new_histogram();
        for v in [100, 200, 300] {
            read.record(v).expect("record");
        }
        let empty = new_histogram();
        let s = Snapshot {
            elapsed: Duration::from_millis(10_400),
            interval: Duration::from_secs(10),
            total_ops: 12_345,
            interval_ops: 12_345,
            todo_ops: 12_345,
            intervals: vec![(YcsbOp::Read, &read), (YcsbOp::Update, &empty)],
        };
        let l = line("", SystemTime::UNIX_EPOCH + Duration::from_millis(123), &s);
        let (stamp, rest) = l.split_at(23);
        assert_eq!(&stamp[19..], ":123");
        assert_eq!(
            rest,
            " 10 sec: 12345 operations; 1234.5 current ops/sec; est completion in 11 seconds \
             [READ: Count=3, Max=300, Min=100, Avg=200, 90=300, 99=300, 99.9=300, 99.99=300] \
             [UPDATE: Count=0, Max=0, Min=9223372036854775807, Avg=0, 90=0, 99=0, 99.9=0, 99.99=0] "
        );
        let done = Snapshot {
            total_ops: 0,
            todo_ops: 0,
            intervals: vec![],
            ..s
        };
        assert!(line("x", SystemTime::UNIX_EPOCH, &done).ends_with(" 10 sec: 0 operations; "));
    }

    #[test]
    fn ticks_accumulate_totals() {
        let mut status = Status::new("");
        let mut interval = empty();
        // At once: "0 second" if under a millisecond passed, else YCSB's huge estimate.
        let start = status.tick(&interval, 3);
        assert!(
            start.contains(" 0 sec: 0 operations; est completion in "),
            "{start}"
        );
        interval[0].service.record(50).expect("record");
        let first = status.tick(&interval, 3);
        assert!(first.contains(" 1 operations; "), "{first}");
        assert!(first.contains("[READ: Count=1,"), "{first}");
        interval[0].reset();
        let second = status.tick(&interval, 3);
        assert!(second.contains(" 1 operations; "), "{second}");
        assert!(second.contains("[READ: Count=0,"), "{second}");
        assert!(!second.contains("UPDATE"), "{second}");
    }

    #[test]
    fn read_modify_write_parts_are_not_operations() {
        let mut stats = empty();
        for (i, n) in [(0, 3), (1, 2), (4, 2)] {
            for _ in 0..n {
                stats[i].service.record(10).expect("record");
            }
        }
        // 1 plain read, 2 read-modify-writes (each also one READ and one UPDATE).
        assert_eq!(ops_of(&stats), 3);
    }
}
