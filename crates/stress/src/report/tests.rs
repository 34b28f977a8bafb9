//! Golden-string tests of the interval table and the results block.

use std::time::{Duration, Instant};

use super::*;
use crate::metrics::{Measurement, OpStats};

fn span(latencies_ms: &[u64], secs: u64) -> Span {
    let mut stats = OpStats::new();
    let t = Instant::now();
    for &ms in latencies_ms {
        let m = Measurement {
            intended: None,
            started: t,
            ended: t + Duration::from_millis(ms),
            partitions: 1,
            rows: 1,
            error: false,
        };
        stats.record(&m);
    }
    Span {
        stats,
        elapsed: Duration::from_secs(secs),
        fixed: false,
    }
}

#[test]
fn header_is_cassandra_stress_head() {
    assert_eq!(
        header(),
        "type                                               total ops,    op/s,    pk/s,   row/s,    mean,     med,     .95,     .99,    .999,     max,   time,   stderr, errors,  gc: #,  max ms,  sum ms,  sdv ms,      mb"
    );
}

#[test]
fn interval_row_has_cassandra_stress_widths() {
    let s = span(&[2, 4, 6, 8], 2);
    assert_eq!(
        row("total", &s, 10000, Duration::from_millis(2000), 0.48892),
        "total,                                                 10000,       2,       2,       2,     5.0,     4.0,     8.0,     8.0,     8.0,     8.0,    2.0,  0.48892,      0,      0,       0,       0,       0,       0"
    );
}

#[test]
fn results_block_golden() {
    let total = span(&[2, 4], 1);
    let lines = results(
        &total,
        &[("WRITE", total.clone())],
        CpuUse {
            user: Duration::from_micros(30),
            system: Duration::from_micros(10),
        },
    );
    let expected = [
        "",
        "",
        "Results:",
        "Op rate                   :        2 op/s  [WRITE: 2 op/s]",
        "Partition rate            :        2 pk/s  [WRITE: 2 pk/s]",
        "Row rate                  :        2 row/s [WRITE: 2 row/s]",
        "Latency mean              :    3.0 ms [WRITE: 3.0 ms]",
        "Latency median            :    2.0 ms [WRITE: 2.0 ms]",
        "Latency 95th percentile   :    4.0 ms [WRITE: 4.0 ms]",
        "Latency 99th percentile   :    4.0 ms [WRITE: 4.0 ms]",
        "Latency 99.9th percentile :    4.0 ms [WRITE: 4.0 ms]",
        "Latency max               :    4.0 ms [WRITE: 4.0 ms]",
        "Total partitions          :          2 [WRITE: 2]",
        "Total rows                :          2 [WRITE: 2]",
        "Total errors              :          0 [WRITE: 0]",
        "Total GC count            : 0",
        "Total GC memory           : 0 B",
        "Total GC time             :    0.0 seconds",
        "Avg GC time               :    NaN ms",
        "StdDev GC time            :    0.0 ms",
        "Total operation time      : 00:00:01",
        "Client CPU per op         :   20.0 us [user: 15.0 us, sys: 5.0 us]",
        "",
    ];
    assert_eq!(lines, expected);
}

#[test]
fn java_number_formats() {
    assert_eq!(grouped(10690.4, 0), "10,690");
    assert_eq!(grouped(1234567.0, 0), "1,234,567");
    assert_eq!(grouped(-1234.5, 1), "-1,234.5");
    assert_eq!(grouped(999.0, 0), "999");
    assert_eq!(grouped(f64::NAN, 0), "NaN");
    assert_eq!(grouped_int(10000), "10,000");
    assert_eq!(java_f(f64::INFINITY, 1), "Infinity");
    assert_eq!(hh_mm_ss(Duration::from_secs(3725)), "01:02:05");
}
