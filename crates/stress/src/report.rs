//! cassandra-stress's output: the interval table (header and one row per operation type per
//! interval) and the `Results:` block, formatted as its Java `String.format` patterns print
//! them (`%,8.0f` grouping, `NaN`, `HH:mm:ss`).

use std::time::Duration;

use crate::metrics::Span;
use crate::pacer::Lateness;

/// `%-50s%10s,%8s,…` of cassandra-stress's `StressMetrics.HEAD`.
pub fn header() -> String {
    let names = [
        "op/s", "pk/s", "row/s", "mean", "med", ".95", ".99", ".999", "max", "time", "stderr",
        "errors", "gc: #", "max ms", "sum ms", "sdv ms", "mb",
    ];
    let widths = [8, 8, 8, 8, 8, 8, 8, 8, 8, 7, 9, 7, 7, 8, 8, 8, 8];
    let mut s = format!("{:<50}{:>10}", "type", "total ops");
    for (n, w) in names.iter().zip(widths) {
        s.push_str(&format!(",{n:>w$}"));
    }
    s
}

/// One interval row: `interval` for the rates and latencies, `total_ops` and `run_time`
/// for the whole run so far; GC columns are zero (no garbage collector here).
pub fn row(kind: &str, interval: &Span, total_ops: u64, run_time: Duration, stderr: f64) -> String {
    format!(
        "{:<50}{:>10},{:>8},{:>8},{:>8},{:>8},{:>8},{:>8},{:>8},{:>8},{:>8},{:>7},{:>9},{:>7},{:>7},{:>8},{:>8},{:>8},{:>8}",
        format!("{kind},"),
        total_ops,
        java_f(interval.op_rate(), 0),
        java_f(interval.partition_rate(), 0),
        java_f(interval.row_rate(), 0),
        java_f(interval.mean_ms(), 1),
        java_f(interval.percentile_ms(50.0), 1),
        java_f(interval.percentile_ms(95.0), 1),
        java_f(interval.percentile_ms(99.0), 1),
        java_f(interval.percentile_ms(99.9), 1),
        java_f(interval.max_ms(), 1),
        java_f(run_time.as_millis() as f64 / 1000.0, 1),
        java_f(stderr, 5),
        interval.stats.errors,
        0,
        0,
        0,
        0,
        0,
    )
}

/// Client CPU used by the run, for the extra `Client CPU per op` line.
#[derive(Debug, Clone, Copy)]
pub struct CpuUse {
    pub user: Duration,
    pub system: Duration,
}

/// The `Results:` block for the whole run (`total`) and each operation type (`per_op`).
pub fn results(total: &Span, per_op: &[(&str, Span)], cpu: CpuUse) -> Vec<String> {
    let list = |f: &dyn Fn(&Span) -> String| -> String {
        let items: Vec<String> = per_op
            .iter()
            .map(|(n, s)| format!("{n}: {}", f(s)))
            .collect();
        format!("[{}]", items.join(", "))
    };
    let lat = |label: &str, v: f64, f: &dyn Fn(&Span) -> f64| {
        format!(
            "{label}: {:>6} ms {}",
            java_f(v, 1),
            list(&|s| format!("{} ms", grouped(f(s), 1)))
        )
    };
    let mut out = vec![
        String::new(),
        String::new(),
        "Results:".to_string(),
        format!(
            "Op rate                   : {:>8} op/s  {}",
            grouped(total.op_rate(), 0),
            list(&|s| format!("{} op/s", grouped(s.op_rate(), 0)))
        ),
        format!(
            "Partition rate            : {:>8} pk/s  {}",
            grouped(total.partition_rate(), 0),
            list(&|s| format!("{} pk/s", grouped(s.partition_rate(), 0)))
        ),
        format!(
            "Row rate                  : {:>8} row/s {}",
            grouped(total.row_rate(), 0),
            list(&|s| format!("{} row/s", grouped(s.row_rate(), 0)))
        ),
        lat("Latency mean              ", total.mean_ms(), &|s| {
            s.mean_ms()
        }),
        lat(
            "Latency median            ",
            total.percentile_ms(50.0),
            &|s| s.percentile_ms(50.0),
        ),
        lat(
            "Latency 95th percentile   ",
            total.percentile_ms(95.0),
            &|s| s.percentile_ms(95.0),
        ),
        lat(
            "Latency 99th percentile   ",
            total.percentile_ms(99.0),
            &|s| s.percentile_ms(99.0),
        ),
        lat(
            "Latency 99.9th percentile ",
            total.percentile_ms(99.9),
            &|s| s.percentile_ms(99.9),
        ),
        lat("Latency max               ", total.max_ms(), &|s| {
            s.max_ms()
        }),
        format!(
            "Total partitions          : {:>10} {}",
            grouped_int(total.stats.partitions),
            list(&|s| grouped_int(s.stats.partitions))
        ),
        // Not in cassandra-stress's summary: the rows the run wrote or read, which bench/run
        // divides the bytes on disk by.
        format!(
            "Total rows                : {:>10} {}",
            grouped_int(total.stats.rows),
            list(&|s| grouped_int(s.stats.rows))
        ),
        format!(
            "Total errors              : {:>10} {}",
            grouped_int(total.stats.errors),
            list(&|s| grouped_int(s.stats.errors))
        ),
        "Total GC count            : 0".to_string(),
        "Total GC memory           : 0 B".to_string(),
        "Total GC time             :    0.0 seconds".to_string(),
        "Avg GC time               :    NaN ms".to_string(),
        "StdDev GC time            :    0.0 ms".to_string(),
        format!("Total operation time      : {}", hh_mm_ss(total.elapsed)),
    ];
    out.push(cpu_line(total.ops(), cpu));
    if total.fixed {
        out.push(format!(
            "Latency measured from     : intended start (fixed rate, no coordinated omission); service time mean {} ms",
            java_f(total.service_mean_ms(), 1)
        ));
    }
    out.push(String::new());
    out
}

/// The extra line on the pacing of `-rate fixed=`/`throttle=`: how late operations started
/// after their due time when their worker was waiting for them (the client's own error).
pub fn pacing_line(l: &Lateness) -> String {
    format!(
        "Pacing lateness           : median {} ms, .99 {} ms, max {} ms ({} ops whose worker waited)",
        java_f(l.median_ms, 3),
        java_f(l.p99_ms, 3),
        java_f(l.max_ms, 3),
        grouped_int(l.count)
    )
}

fn cpu_line(ops: u64, cpu: CpuUse) -> String {
    let per_op = |d: Duration| {
        if ops == 0 {
            f64::NAN
        } else {
            d.as_secs_f64() * 1e6 / ops as f64
        }
    };
    format!(
        "Client CPU per op         : {:>6} us [user: {} us, sys: {} us]",
        java_f(per_op(cpu.user + cpu.system), 1),
        java_f(per_op(cpu.user), 1),
        java_f(per_op(cpu.system), 1)
    )
}

/// Java's `%.Nf`: `NaN` and `Infinity` spelled out.
pub fn java_f(v: f64, decimals: usize) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else {
        format!("{v:.decimals$}")
    }
}

/// Java's `%,.Nf`: thousands separated by commas.
pub fn grouped(v: f64, decimals: usize) -> String {
    let s = java_f(v, decimals);
    if !v.is_finite() {
        return s;
    }
    let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
    let (int, frac) = digits
        .split_once('.')
        .map_or((digits, None), |(i, f)| (i, Some(f)));
    let mut out = String::from(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// Java's `%,d`.
pub fn grouped_int(v: u64) -> String {
    grouped(v as f64, 0)
}

/// Commons-lang `DurationFormatUtils.formatDuration(ms, "HH:mm:ss", true)`.
pub fn hh_mm_ss(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests;
