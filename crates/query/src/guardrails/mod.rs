//! Cassandra 5.0's guardrails and batch checks: the warnings and failures that catch bad data
//! models. Each guardrail is one of three generic kinds ([`check`]): a threshold on a number,
//! a flag on a feature, or a list of consistency levels; [`catalog`] names them with
//! Cassandra's messages, and the statements call them where Cassandra does ([`reads`],
//! [`writes`], [`batch`], [`schema`]; [`partitions`] at flush and compaction).
//!
//! Cassandra exempts superusers and internal queries. Helenus runs without authentication, where
//! Cassandra treats every client as a superuser and so never applies these to queries; Helenus
//! instead applies them to every client request, as Cassandra does to an ordinary role (see
//! docs/differences.md). The node's own writes (schema, system tables, traces) do not go
//! through statements and are never checked.
pub(crate) mod batch;
pub(crate) mod catalog;
pub(crate) mod check;
pub(crate) mod partitions;
pub(crate) mod reads;
pub(crate) mod schema;
pub(crate) mod writes;

use std::sync::{Arc, Mutex};

pub use partitions::{PartitionGuardrails, WatchFloors, WrittenAt};

/// What the checks compare against: cassandra.yaml's guardrails and batch thresholds.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub guardrails: config::Guardrails,
    /// `batch_size_warn_threshold`, in bytes.
    pub batch_size_warn: u64,
    /// `batch_size_fail_threshold`, in bytes.
    pub batch_size_fail: u64,
    /// `unlogged_batch_across_partitions_warn_threshold`.
    pub unlogged_batch_partitions: u64,
}

impl Default for Limits {
    /// Cassandra's defaults: guardrails off, batches warned past 5 KiB and refused past 50 KiB.
    fn default() -> Self {
        Limits::from_config(&config::Config::default())
    }
}

impl Limits {
    pub fn from_config(config: &config::Config) -> Limits {
        Limits {
            guardrails: config.guardrails.clone(),
            batch_size_warn: config.batch_size_warn_threshold.as_bytes(),
            batch_size_fail: config.batch_size_fail_threshold.as_bytes(),
            unlogged_batch_partitions: u64::from(
                config.unlogged_batch_across_partitions_warn_threshold,
            ),
        }
    }
}

/// The client warnings of one request (Cassandra's `ClientWarn`), shared by its statements and
/// sent with its result.
#[derive(Clone, Debug, Default)]
pub struct Warnings(Arc<Mutex<Vec<String>>>);

impl Warnings {
    pub fn add(&self, warning: String) {
        self.lock().push(warning);
    }

    /// The warnings so far, in the order they were given; the list is left empty.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests;
