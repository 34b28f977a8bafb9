//! How long the coordinator waits for replicas (Cassandra's `*_request_timeout`), changeable
//! at run time (`nodetool settimeout`): each timeout is an atomic number of milliseconds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The request timeouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    pub read: Duration,
    pub range: Duration,
    pub write: Duration,
    pub counter_write: Duration,
}

impl Default for Timeouts {
    /// Cassandra 5.0's defaults.
    fn default() -> Self {
        Timeouts {
            read: Duration::from_millis(5000),
            range: Duration::from_millis(10000),
            write: Duration::from_millis(2000),
            counter_write: Duration::from_millis(5000),
        }
    }
}

/// One of the [`Timeouts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutKind {
    Read,
    Range,
    Write,
    CounterWrite,
}

impl TimeoutKind {
    pub const ALL: [TimeoutKind; 4] = [
        TimeoutKind::Read,
        TimeoutKind::Range,
        TimeoutKind::Write,
        TimeoutKind::CounterWrite,
    ];

    /// The name `nodetool gettimeout` uses.
    pub fn name(self) -> &'static str {
        match self {
            TimeoutKind::Read => "read",
            TimeoutKind::Range => "range",
            TimeoutKind::Write => "write",
            TimeoutKind::CounterWrite => "counterwrite",
        }
    }

    pub fn from_name(name: &str) -> Option<TimeoutKind> {
        TimeoutKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// [`Timeouts`] that may change while requests run.
#[derive(Debug)]
pub struct LiveTimeouts {
    millis: [AtomicU64; 4],
}

impl LiveTimeouts {
    pub fn new(t: Timeouts) -> LiveTimeouts {
        let ms = |d: Duration| AtomicU64::new(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        LiveTimeouts {
            millis: [ms(t.read), ms(t.range), ms(t.write), ms(t.counter_write)],
        }
    }

    pub fn get(&self, kind: TimeoutKind) -> Duration {
        Duration::from_millis(self.millis[kind as usize].load(Ordering::Relaxed))
    }

    pub fn set(&self, kind: TimeoutKind, timeout: Duration) {
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        self.millis[kind as usize].store(ms, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> Timeouts {
        Timeouts {
            read: self.get(TimeoutKind::Read),
            range: self.get(TimeoutKind::Range),
            write: self.get(TimeoutKind::Write),
            counter_write: self.get(TimeoutKind::CounterWrite),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_change_at_run_time() {
        let live = LiveTimeouts::new(Timeouts::default());
        live.set(TimeoutKind::Write, Duration::from_millis(8000));
        assert_eq!(live.snapshot().write, Duration::from_millis(8000));
        assert_eq!(live.get(TimeoutKind::Read), Duration::from_millis(5000));
    }

    #[test]
    fn names_round_trip() {
        for kind in TimeoutKind::ALL {
            assert_eq!(TimeoutKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(TimeoutKind::from_name("misc"), None);
    }
}
