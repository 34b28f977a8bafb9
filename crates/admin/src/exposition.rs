//! The Prometheus text exposition format (version 0.0.4): what Prometheus scrapes and
//! `promtool check metrics` checks. Every family has `# HELP` and `# TYPE` lines named as its
//! samples are (a counter's name ends in `_total`), then its samples: a histogram's cumulative
//! `_bucket{le=…}` ending at `+Inf`, a summary's `{quantile=…}` samples; both with `_sum` and
//! `_count`.
use std::fmt::Write;

use coordinator::metrics::{LatencySnapshot, LATENCY_BOUNDS_MICROS};

pub(crate) type Labels = Vec<(&'static str, String)>;

/// The content type of the format.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// One metric family: its name, help, and samples (all of one type).
#[derive(Debug)]
struct Family {
    name: &'static str,
    help: &'static str,
    samples: Vec<(Labels, Sample)>,
}

#[derive(Debug)]
pub(crate) enum Sample {
    Counter(u64),
    Gauge(i64),
    /// A latency histogram, exposed in seconds.
    Latency(LatencySnapshot),
    Summary(Summary),
}

/// Quantiles of observations, with their number and sum (a Prometheus summary).
#[derive(Debug)]
pub(crate) struct Summary {
    /// (quantile as exposed, value) pairs, `"1"` being the maximum.
    pub quantiles: Vec<(&'static str, f64)>,
    pub count: u64,
    pub sum: f64,
}

impl Sample {
    fn type_name(&self) -> &'static str {
        match self {
            Sample::Counter(_) => "counter",
            Sample::Gauge(_) => "gauge",
            Sample::Latency(_) => "histogram",
            Sample::Summary(_) => "summary",
        }
    }
}

/// The figures of one scrape, families in the order they were added.
#[derive(Debug, Default)]
pub(crate) struct Snapshot(Vec<Family>);

impl Snapshot {
    /// Adds a family (none when it has no samples). A counter's name ends in `_total`.
    pub(crate) fn add(
        &mut self,
        name: &'static str,
        help: &'static str,
        samples: Vec<(Labels, Sample)>,
    ) {
        let counter = matches!(samples.first(), Some((_, Sample::Counter(_))));
        debug_assert!(
            !counter || name.ends_with("_total"),
            "counter {name}: no _total"
        );
        if !samples.is_empty() {
            self.0.push(Family {
                name,
                help,
                samples,
            });
        }
    }

    pub(crate) fn one(&mut self, name: &'static str, help: &'static str, sample: Sample) {
        self.add(name, help, vec![(Vec::new(), sample)]);
    }

    /// The families in the text format.
    pub(crate) fn encode(&self) -> String {
        let mut out = String::new();
        for family in &self.0 {
            let name = family.name;
            let _ = writeln!(out, "# HELP {name} {}", escape_help(family.help));
            let _ = writeln!(out, "# TYPE {name} {}", family.samples[0].1.type_name());
            for (labels, sample) in &family.samples {
                encode_sample(&mut out, name, labels, sample);
            }
        }
        out
    }
}

fn encode_sample(out: &mut String, name: &str, labels: &Labels, sample: &Sample) {
    match sample {
        Sample::Counter(v) => line(out, name, labels, None, &v.to_string()),
        Sample::Gauge(v) => line(out, name, labels, None, &v.to_string()),
        Sample::Latency(h) => {
            let bucket = format!("{name}_bucket");
            let mut cumulative = 0;
            for (i, n) in h.buckets.iter().enumerate() {
                cumulative += n;
                let le = match LATENCY_BOUNDS_MICROS.get(i) {
                    Some(&micros) => number(micros as f64 / 1e6),
                    None => "+Inf".to_string(),
                };
                line(
                    out,
                    &bucket,
                    labels,
                    Some(("le", &le)),
                    &cumulative.to_string(),
                );
            }
            let sum = number(h.sum_micros as f64 / 1e6);
            totals(out, name, labels, &sum, h.count);
        }
        Sample::Summary(s) => {
            for (q, v) in &s.quantiles {
                line(out, name, labels, Some(("quantile", q)), &number(*v));
            }
            totals(out, name, labels, &number(s.sum), s.count);
        }
    }
}

/// The `_sum` and `_count` samples of a histogram or summary.
fn totals(out: &mut String, name: &str, labels: &Labels, sum: &str, count: u64) {
    line(out, &format!("{name}_sum"), labels, None, sum);
    line(
        out,
        &format!("{name}_count"),
        labels,
        None,
        &count.to_string(),
    );
}

fn line(out: &mut String, name: &str, labels: &Labels, extra: Option<(&str, &str)>, value: &str) {
    out.push_str(name);
    let pairs = labels.iter().map(|(k, v)| (*k, v.as_str())).chain(extra);
    for (i, (key, value)) in pairs.enumerate() {
        out.push(if i == 0 { '{' } else { ',' });
        let _ = write!(out, "{key}=\"{}\"", escape_label(value));
    }
    if !labels.is_empty() || extra.is_some() {
        out.push('}');
    }
    out.push(' ');
    out.push_str(value);
    out.push('\n');
}

/// A float as the format writes it (Go's parser reads Rust's decimal form).
fn number(v: f64) -> String {
    match v {
        v if v.is_nan() => "NaN".to_string(),
        f64::INFINITY => "+Inf".to_string(),
        f64::NEG_INFINITY => "-Inf".to_string(),
        v => v.to_string(),
    }
}

fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

fn escape_label(text: &str) -> String {
    escape_help(text).replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&'static str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
    }

    #[test]
    fn every_type_is_written_with_help_type_and_its_samples() {
        let mut snapshot = Snapshot::default();
        snapshot.one("a_total", "Things done", Sample::Counter(3));
        snapshot.add(
            "b_bytes",
            "Back\\slash\nand line",
            vec![(labels(&[("t", "q\"x\\y\nz")]), Sample::Gauge(-2))],
        );
        snapshot.add("empty_total", "No samples: no family", Vec::new());
        let mut buckets = vec![0; LATENCY_BOUNDS_MICROS.len() + 1];
        (buckets[0], buckets[3], buckets[16]) = (1, 2, 1);
        let latency = LatencySnapshot {
            count: 4,
            sum_micros: 20_001_500,
            buckets,
        };
        snapshot.add(
            "c_seconds",
            "Latency",
            vec![(labels(&[("k", "v")]), Sample::Latency(latency))],
        );
        let summary = Summary {
            quantiles: vec![("0.5", 1.0), ("1", 7.0)],
            count: 3,
            sum: 9.0,
        };
        snapshot.one("d", "Per read", Sample::Summary(summary));
        let text = snapshot.encode();
        let expected_start = "# HELP a_total Things done\n# TYPE a_total counter\na_total 3\n\
            # HELP b_bytes Back\\\\slash\\nand line\n# TYPE b_bytes gauge\n\
            b_bytes{t=\"q\\\"x\\\\y\\nz\"} -2\n\
            # HELP c_seconds Latency\n# TYPE c_seconds histogram\n\
            c_seconds_bucket{k=\"v\",le=\"0.0001\"} 1\n\
            c_seconds_bucket{k=\"v\",le=\"0.00025\"} 1\n";
        assert!(text.starts_with(expected_start), "{text}");
        assert!(text.contains("c_seconds_bucket{k=\"v\",le=\"0.001\"} 3\n"));
        assert!(text.contains("c_seconds_bucket{k=\"v\",le=\"10\"} 3\n"));
        let expected_end = "c_seconds_bucket{k=\"v\",le=\"+Inf\"} 4\n\
            c_seconds_sum{k=\"v\"} 20.0015\nc_seconds_count{k=\"v\"} 4\n\
            # HELP d Per read\n# TYPE d summary\n\
            d{quantile=\"0.5\"} 1\nd{quantile=\"1\"} 7\nd_sum 9\nd_count 3\n";
        assert!(text.ends_with(expected_end), "{text}");
        assert!(!text.contains("empty_total"));
    }

    #[test]
    fn special_floats_are_written_as_prometheus_reads_them() {
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(f64::NEG_INFINITY), "-Inf");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(0.00025), "0.00025");
        assert_eq!(number(2.5), "2.5");
    }
}
