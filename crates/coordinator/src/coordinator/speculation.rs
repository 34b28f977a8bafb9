//! A table's `speculative_retry` option, as Cassandra 5.0 reads it: how long a read waits for
//! its replicas before asking one more. `NONE` never does, `ALWAYS` asks one more at once,
//! `99p` (or `99PERCENTILE`) waits the table's 99th percentile read latency, `50ms` a fixed
//! time, and `MIN(a,b)` / `MAX(a,b)` the shorter or longer of two.
use std::time::Duration;

use crate::latency::LatencySnapshot;

/// When a read asks one more replica.
#[derive(Clone, Debug, PartialEq)]
pub enum SpeculativeRetry {
    Never,
    Always,
    Percentile(f64),
    Fixed(Duration),
    Min(Box<SpeculativeRetry>, Box<SpeculativeRetry>),
    Max(Box<SpeculativeRetry>, Box<SpeculativeRetry>),
}

impl Default for SpeculativeRetry {
    /// Cassandra's default, `99p`.
    fn default() -> Self {
        SpeculativeRetry::Percentile(99.0)
    }
}

impl SpeculativeRetry {
    /// Parses the option's text; `None` when Cassandra would refuse it.
    pub fn parse(text: &str) -> Option<SpeculativeRetry> {
        let upper = text.trim().to_ascii_uppercase();
        if upper == "NONE" {
            return Some(SpeculativeRetry::Never);
        }
        if upper == "ALWAYS" {
            return Some(SpeculativeRetry::Always);
        }
        for (name, both) in [("MIN(", true), ("MAX(", false)] {
            if let Some(inner) = upper.strip_prefix(name).and_then(|r| r.strip_suffix(')')) {
                let (a, b) = inner.split_once(',')?;
                let (a, b) = (Box::new(Self::parse(a)?), Box::new(Self::parse(b)?));
                return Some(if both {
                    SpeculativeRetry::Min(a, b)
                } else {
                    SpeculativeRetry::Max(a, b)
                });
            }
        }
        if let Some(ms) = upper.strip_suffix("MS") {
            let ms: f64 = ms.trim().parse().ok().filter(|v: &f64| *v >= 0.0)?;
            return Some(SpeculativeRetry::Fixed(Duration::from_secs_f64(
                ms / 1000.0,
            )));
        }
        let percent = upper
            .strip_suffix("PERCENTILE")
            .or_else(|| upper.strip_suffix('P'))?;
        let percent: f64 = percent.trim().parse().ok()?;
        (percent > 0.0 && percent < 100.0).then_some(SpeculativeRetry::Percentile(percent))
    }

    /// How long to wait before asking one more replica, given the table's read latencies;
    /// `None` for never (a percentile of a table not read yet included).
    pub fn delay(&self, latencies: &LatencySnapshot) -> Option<Duration> {
        match self {
            SpeculativeRetry::Never => None,
            SpeculativeRetry::Always => Some(Duration::ZERO),
            SpeculativeRetry::Fixed(d) => Some(*d),
            SpeculativeRetry::Percentile(p) => (latencies.count > 0)
                .then(|| Duration::from_micros(latencies.quantile_micros(p / 100.0))),
            SpeculativeRetry::Min(a, b) => match (a.delay(latencies), b.delay(latencies)) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            },
            SpeculativeRetry::Max(a, b) => a.delay(latencies).max(b.delay(latencies)),
        }
    }
}

/// What a table's options ask of reads from several replicas.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadPolicy {
    pub speculative_retry: SpeculativeRetry,
    /// `read_repair = 'BLOCKING'` (the default): replicas found stale are repaired before the
    /// client is answered; `'NONE'`: they are not.
    pub read_repair: bool,
}

impl Default for ReadPolicy {
    fn default() -> Self {
        ReadPolicy {
            speculative_retry: SpeculativeRetry::default(),
            read_repair: true,
        }
    }
}

impl ReadPolicy {
    /// The policy of a table's `speculative_retry` and `read_repair` option texts (a text
    /// Cassandra would refuse keeps the default).
    pub fn from_options(speculative_retry: &str, read_repair: &str) -> ReadPolicy {
        ReadPolicy {
            speculative_retry: SpeculativeRetry::parse(speculative_retry).unwrap_or_default(),
            read_repair: !read_repair.eq_ignore_ascii_case("NONE"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_cassandra_accepts() {
        use SpeculativeRetry::*;
        assert_eq!(SpeculativeRetry::parse("99p"), Some(Percentile(99.0)));
        assert_eq!(
            SpeculativeRetry::parse("95PERCENTILE"),
            Some(Percentile(95.0))
        );
        assert_eq!(SpeculativeRetry::parse("none"), Some(Never));
        assert_eq!(SpeculativeRetry::parse("ALWAYS"), Some(Always));
        assert_eq!(
            SpeculativeRetry::parse("50ms"),
            Some(Fixed(Duration::from_millis(50)))
        );
        assert_eq!(
            SpeculativeRetry::parse("MIN(99p,50ms)"),
            Some(Min(
                Box::new(Percentile(99.0)),
                Box::new(Fixed(Duration::from_millis(50)))
            ))
        );
        for bad in ["", "100p", "0p", "-1ms", "fast", "MIN(99p)"] {
            assert_eq!(SpeculativeRetry::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn delays_follow_the_table_latencies() {
        let empty = LatencySnapshot::default();
        assert_eq!(SpeculativeRetry::default().delay(&empty), None);
        assert_eq!(SpeculativeRetry::Always.delay(&empty), Some(Duration::ZERO));
        let histogram = crate::latency::LatencyHistogram::default();
        for _ in 0..99 {
            histogram.record(Duration::from_micros(900));
        }
        histogram.record(Duration::from_millis(40));
        let seen = histogram.snapshot();
        assert_eq!(
            SpeculativeRetry::Percentile(50.0).delay(&seen),
            Some(Duration::from_millis(1))
        );
        let bounded = SpeculativeRetry::parse("MAX(50p,20ms)").unwrap();
        assert_eq!(bounded.delay(&seen), Some(Duration::from_millis(20)));
    }
}
