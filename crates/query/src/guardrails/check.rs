//! The three kinds of guardrail Cassandra 5.0 has, each one small generic type: a
//! [`Threshold`] on a number (`MaxThreshold`, `MinThreshold`), a [`Flag`] on a feature
//! (`EnableFlag`) and a [`Levels`] guard on consistency levels (`Values`). A triggered guardrail
//! is reported through a [`Notice`]: logged, traced, sent to the client as a warning, and for a
//! failure refused with InvalidRequest — unless nobody asked (flush, compaction), in which case
//! a failure is only logged.
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use config::ConsistencyLevels;
use coordinator::trace::trace;
use coordinator::Trace;
use types::{CqlError, CqlResult};

use super::Warnings;

/// Whether a threshold was passed at its warning or its failure level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    Warn,
    Fail,
}

impl Level {
    /// The word Cassandra's messages use: "warning" or "failure".
    pub fn word(self) -> &'static str {
        match self {
            Level::Warn => "warning",
            Level::Fail => "failure",
        }
    }
}

/// Builds a triggered threshold's message from what was measured, the value and the threshold.
pub(crate) type Message = fn(Level, &str, &str, &str) -> String;

/// Where a triggered guardrail reports.
pub(crate) struct Notice<'a> {
    /// The request's client warnings, when it has them.
    warnings: Option<&'a Warnings>,
    trace: Option<&'a Trace>,
    /// Whether a failure refuses the work (a client waits for it).
    refuse: bool,
}

impl<'a> Notice<'a> {
    /// For a client request: warnings reach the client, failures refuse the request.
    pub fn client(warnings: &'a Warnings, trace: Option<&'a Trace>) -> Notice<'a> {
        Notice {
            warnings: Some(warnings),
            trace,
            refuse: true,
        }
    }

    /// For a statement checked while it is analysed, before it has warnings to send:
    /// failures still refuse it.
    pub fn analysis() -> Notice<'static> {
        Notice {
            warnings: None,
            trace: None,
            refuse: true,
        }
    }

    /// For background work (flush, compaction): everything is only logged.
    pub fn background() -> Notice<'static> {
        Notice {
            warnings: None,
            trace: None,
            refuse: false,
        }
    }

    fn warn(&self, message: String) {
        log(Level::Warn, &message);
        trace(self.trace, || message.clone());
        if let Some(w) = self.warnings {
            w.add(message);
        }
    }

    /// Cassandra logs and traces a failure, then throws when a client is waiting.
    fn fail(&self, message: String) -> CqlResult<()> {
        log(Level::Fail, &message);
        trace(self.trace, || message.clone());
        if self.refuse {
            Err(CqlError::invalid(message))
        } else {
            Ok(())
        }
    }
}

/// Cassandra's guardrail logger repeats a message at most every ten minutes (`NoSpamLogger`).
const LOG_INTERVAL: Duration = Duration::from_secs(600);
/// Messages remembered for that interval; beyond this many the oldest memory is dropped.
const LOG_MEMORY: usize = 10_000;

fn log(level: Level, message: &str) {
    static LAST: OnceLock<Mutex<HashMap<String, Instant>>> = OnceLock::new();
    let now = Instant::now();
    {
        let mut last = LAST
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if last
            .get(message)
            .is_some_and(|at| now.duration_since(*at) < LOG_INTERVAL)
        {
            return;
        }
        if last.len() >= LOG_MEMORY {
            last.retain(|_, at| now.duration_since(*at) < LOG_INTERVAL);
            if last.len() >= LOG_MEMORY {
                last.clear();
            }
        }
        last.insert(message.to_string(), now);
    }
    match level {
        Level::Warn => tracing::warn!("{message}"),
        Level::Fail => tracing::error!("{message}"),
    }
}

/// `Guardrail <name> violated: <message>` and the guardrail's reason, as Cassandra decorates.
pub(crate) fn decorate(name: &str, reason: Option<&str>, message: &str) -> String {
    let mut out = format!("Guardrail {name} violated: {message}");
    if let Some(reason) = reason {
        out.push_str(if message.ends_with('.') { " " } else { ". " });
        out.push_str(reason);
    }
    out
}

/// A guardrail on a number: passing the warn value warns, passing the fail value fails.
/// Above for a maximum, below for a minimum (`minimum_replication_factor`).
pub(crate) struct Threshold {
    pub name: &'static str,
    pub reason: Option<&'static str>,
    pub warn: Option<i64>,
    pub fail: Option<i64>,
    pub minimum: bool,
    pub message: Message,
}

impl Threshold {
    /// Whether either side is set (Cassandra skips the check otherwise).
    pub fn enabled(&self) -> bool {
        self.warn.is_some() || self.fail.is_some()
    }

    fn passes(&self, value: i64, threshold: Option<i64>) -> bool {
        match threshold {
            Some(t) if self.minimum => value < t,
            Some(t) => value > t,
            None => false,
        }
    }

    /// The level `value` triggers, if any.
    pub fn level(&self, value: i64) -> Option<Level> {
        if self.passes(value, self.fail) {
            Some(Level::Fail)
        } else if self.passes(value, self.warn) {
            Some(Level::Warn)
        } else {
            None
        }
    }

    /// The decorated message for `value` at `level`; `what` names what was measured.
    pub fn message(&self, level: Level, what: &str, value: i64) -> String {
        let threshold = match level {
            Level::Warn => self.warn,
            Level::Fail => self.fail,
        };
        let threshold = threshold.unwrap_or_default().to_string();
        let text = (self.message)(level, what, &value.to_string(), &threshold);
        decorate(self.name, self.reason, &text)
    }

    /// Checks `value`, reporting through `notice`.
    pub fn guard(&self, value: i64, what: &str, notice: &Notice) -> CqlResult<()> {
        match self.level(value) {
            Some(Level::Fail) => notice.fail(self.message(Level::Fail, what, value)),
            Some(Level::Warn) => {
                notice.warn(self.message(Level::Warn, what, value));
                Ok(())
            }
            None => Ok(()),
        }
    }
}

/// A guardrail on a feature: disabled, using it fails; `warned`, using it warns.
pub(crate) struct Flag {
    pub name: &'static str,
    pub reason: Option<&'static str>,
    pub enabled: bool,
    pub warned: bool,
    /// The feature as the messages name it.
    pub feature: &'static str,
}

impl Flag {
    /// Fails when the feature is disabled, warns when it is warned about.
    pub fn ensure_enabled(&self, notice: &Notice) -> CqlResult<()> {
        self.ensure_enabled_as(self.feature, notice)
    }

    /// [`ensure_enabled`](Self::ensure_enabled) naming the feature `feature`.
    pub fn ensure_enabled_as(&self, feature: &str, notice: &Notice) -> CqlResult<()> {
        if !self.enabled {
            let message = format!("{feature} is not allowed");
            return notice.fail(decorate(self.name, self.reason, &message));
        }
        if self.warned {
            let message = format!("{feature} is not recommended");
            notice.warn(decorate(self.name, self.reason, &message));
        }
        Ok(())
    }
}

/// A guardrail on consistency levels: disallowed ones fail, warned ones warn.
pub(crate) struct Levels {
    pub name: &'static str,
    pub warned: ConsistencyLevels,
    pub disallowed: ConsistencyLevels,
    /// The levels as the messages name them ("read consistency levels").
    pub what: &'static str,
}

impl Levels {
    pub fn guard(&self, used: ConsistencyLevels, notice: &Notice) -> CqlResult<()> {
        let refused = used.intersection(self.disallowed);
        if !refused.is_empty() {
            let message = format!(
                "Provided values {refused} are not allowed for {} (disallowed values are: {})",
                self.what, self.disallowed
            );
            return notice.fail(decorate(self.name, None, &message));
        }
        let warned = used.intersection(self.warned);
        if !warned.is_empty() {
            let message = format!(
                "Provided values {warned} are not recommended for {} (warned values are: {})",
                self.what, self.warned
            );
            notice.warn(decorate(self.name, None, &message));
        }
        Ok(())
    }
}
