//! The run's timeline for `-graph`: one point per reporting interval (throughput and
//! latency percentiles over all operation types), one series per measured run (a thread
//! count of `-rate auto` is a run of its own).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::metrics::Span;

/// One interval: when it ended (seconds into the run), its rates and latencies (ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub time: f64,
    pub op_rate: f64,
    pub row_rate: f64,
    pub mean: f64,
    pub median: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub errors: u64,
}

impl Point {
    pub fn of(at: Duration, span: &Span) -> Point {
        Point {
            time: at.as_secs_f64(),
            op_rate: span.op_rate(),
            row_rate: span.row_rate(),
            mean: span.mean_ms(),
            median: span.percentile_ms(50.0),
            p95: span.percentile_ms(95.0),
            p99: span.percentile_ms(99.0),
            p999: span.percentile_ms(99.9),
            max: span.max_ms(),
            errors: span.stats.errors,
        }
    }
}

/// One measured run's points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub label: String,
    pub points: Vec<Point>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    pub series: Vec<Series>,
}

impl Timeline {
    pub fn begin(&mut self, label: &str) {
        self.series.push(Series {
            label: label.to_string(),
            points: Vec::new(),
        });
    }

    pub fn record(&mut self, at: Duration, span: &Span) {
        if self.series.is_empty() {
            self.begin("run");
        }
        if let Some(s) = self.series.last_mut() {
            s.points.push(Point::of(at, span));
        }
    }
}
