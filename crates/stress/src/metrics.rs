//! Latency and count recording. Workers record into a few sharded, briefly locked
//! [`OpStats`] (one per operation type per shard); the reporter drains the shards once per
//! interval. Latencies are HDR histograms in microseconds: service time (request sent to
//! response) and, under `-rate fixed=`, response time from the operation's intended start,
//! which includes any queueing delay (no coordinated omission).

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use parking_lot::Mutex;

/// Longest latency a histogram tracks exactly (longer ones are clamped): one hour.
const MAX_MICROS: u64 = 3_600_000_000;

#[expect(
    clippy::expect_used,
    reason = "the bounds are constants hdrhistogram accepts"
)]
pub fn new_histogram() -> Histogram<u64> {
    // The bounds are constants that hdrhistogram accepts; failure would be a programming error.
    Histogram::new_with_bounds(1, MAX_MICROS, 3).expect("valid histogram bounds")
}

/// One finished operation.
#[derive(Debug, Clone, Copy)]
pub struct Measurement {
    pub intended: Option<Instant>,
    pub started: Instant,
    pub ended: Instant,
    pub partitions: u64,
    pub rows: u64,
    pub error: bool,
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros())
        .unwrap_or(MAX_MICROS)
        .clamp(1, MAX_MICROS)
}

/// Counts and latencies of one operation type over some span.
#[derive(Debug, Clone)]
pub struct OpStats {
    pub service: Histogram<u64>,
    pub response: Histogram<u64>,
    pub partitions: u64,
    pub rows: u64,
    pub errors: u64,
}

impl OpStats {
    pub fn new() -> OpStats {
        OpStats {
            service: new_histogram(),
            response: new_histogram(),
            partitions: 0,
            rows: 0,
            errors: 0,
        }
    }

    pub fn record(&mut self, m: &Measurement) {
        self.service.saturating_record(micros(m.ended - m.started));
        if let Some(intended) = m.intended {
            self.response
                .saturating_record(micros(m.ended.saturating_duration_since(intended)));
        }
        self.partitions += m.partitions;
        self.rows += m.rows;
        self.errors += u64::from(m.error);
    }

    pub fn add(&mut self, other: &OpStats) {
        // Both histograms share bounds, so adding cannot fail; clamp defensively anyway.
        let _ = self.service.add(&other.service);
        let _ = self.response.add(&other.response);
        self.partitions += other.partitions;
        self.rows += other.rows;
        self.errors += other.errors;
    }

    pub fn reset(&mut self) {
        self.service.reset();
        self.response.reset();
        self.partitions = 0;
        self.rows = 0;
        self.errors = 0;
    }

    /// The histogram cassandra-stress reports: response time under a fixed rate, else service.
    pub fn latency(&self, fixed: bool) -> &Histogram<u64> {
        if fixed && !self.response.is_empty() {
            &self.response
        } else {
            &self.service
        }
    }
}

/// Per-shard, per-operation-type stats that workers record into.
pub struct Recorder {
    shards: Vec<Mutex<Vec<OpStats>>>,
}

impl Recorder {
    pub fn new(shards: usize, op_types: usize) -> Recorder {
        let shards = (0..shards.max(1))
            .map(|_| Mutex::new((0..op_types).map(|_| OpStats::new()).collect()))
            .collect();
        Recorder { shards }
    }

    pub fn record(&self, worker: usize, op: usize, m: &Measurement) {
        self.shards[worker % self.shards.len()].lock()[op].record(m);
    }

    /// Adds everything recorded since the last drain into `into` (one entry per op type).
    pub fn drain(&self, into: &mut [OpStats]) {
        for shard in &self.shards {
            let mut stats = shard.lock();
            for (acc, s) in into.iter_mut().zip(stats.iter_mut()) {
                acc.add(s);
                s.reset();
            }
        }
    }
}

/// Stats over a time span, with the span, for rates.
#[derive(Debug, Clone)]
pub struct Span {
    pub stats: OpStats,
    pub elapsed: Duration,
    pub fixed: bool,
}

impl Span {
    pub fn ops(&self) -> u64 {
        self.stats.latency(self.fixed).len()
    }

    fn per_second(&self, n: u64) -> f64 {
        n as f64 / self.elapsed.as_secs_f64()
    }

    pub fn op_rate(&self) -> f64 {
        self.per_second(self.ops())
    }

    pub fn partition_rate(&self) -> f64 {
        self.per_second(self.stats.partitions)
    }

    pub fn row_rate(&self) -> f64 {
        self.per_second(self.stats.rows)
    }

    /// cassandra-stress's rate for its uncertainty: rows over the span less the max latency.
    pub fn adjusted_row_rate(&self) -> f64 {
        let max = Duration::from_micros(self.stats.latency(self.fixed).max());
        self.stats.rows as f64 / self.elapsed.saturating_sub(max).as_secs_f64()
    }

    pub fn mean_ms(&self) -> f64 {
        self.stats.latency(self.fixed).mean() / 1000.0
    }

    pub fn percentile_ms(&self, p: f64) -> f64 {
        self.stats.latency(self.fixed).value_at_quantile(p / 100.0) as f64 / 1000.0
    }

    pub fn max_ms(&self) -> f64 {
        self.stats.latency(self.fixed).max() as f64 / 1000.0
    }

    pub fn service_mean_ms(&self) -> f64 {
        self.stats.service.mean() / 1000.0
    }
}

/// cassandra-stress's `Uncertainty`: the relative standard error of the per-interval rates.
#[derive(Debug, Clone, Default)]
pub struct Uncertainty {
    pub measurements: u32,
    sum: f64,
    sum_squares: f64,
    pub value: f64,
}

impl Uncertainty {
    pub fn update(&mut self, v: f64) {
        self.measurements += 1;
        self.sum += v;
        self.sum_squares += v * v;
        let n = f64::from(self.measurements);
        let mean = self.sum / n;
        let stdev = (self.sum_squares / n - mean * mean).max(0.0).sqrt();
        self.value = (stdev / n.sqrt()) / mean;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(start: Instant, service_ms: u64, queued_ms: u64) -> Measurement {
        let started = start + Duration::from_millis(queued_ms);
        Measurement {
            intended: Some(start),
            started,
            ended: started + Duration::from_millis(service_ms),
            partitions: 1,
            rows: 1,
            error: false,
        }
    }

    #[test]
    fn fixed_rate_latency_includes_queueing() {
        let now = Instant::now();
        let mut s = OpStats::new();
        s.record(&m(now, 2, 10));
        let span = Span {
            stats: s.clone(),
            elapsed: Duration::from_secs(1),
            fixed: true,
        };
        assert!((span.mean_ms() - 12.0).abs() < 0.1);
        assert!((span.service_mean_ms() - 2.0).abs() < 0.1);
        let span = Span {
            stats: s,
            elapsed: Duration::from_secs(1),
            fixed: false,
        };
        assert!((span.mean_ms() - 2.0).abs() < 0.1);
    }

    #[test]
    fn recorder_drains_all_shards() {
        let r = Recorder::new(4, 2);
        let now = Instant::now();
        for w in 0..8 {
            r.record(w, w % 2, &m(now, 1, 0));
        }
        let mut acc = vec![OpStats::new(), OpStats::new()];
        r.drain(&mut acc);
        assert_eq!(
            (acc[0].service.len(), acc[1].service.len(), acc[0].rows),
            (4, 4, 4)
        );
        r.drain(&mut acc);
        assert_eq!(acc[0].service.len(), 4);
    }

    #[test]
    fn uncertainty_matches_cassandra_stress() {
        let mut u = Uncertainty::default();
        u.update(100.0);
        assert_eq!(u.value, 0.0);
        u.update(200.0);
        // mean 150, stdev 50, /sqrt(2) /150
        assert!((u.value - 50.0 / 2f64.sqrt() / 150.0).abs() < 1e-12);
    }
}
