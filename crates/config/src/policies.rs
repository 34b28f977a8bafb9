//! `disk_failure_policy` and `commit_failure_policy`: what the node does when a data
//! directory, an SSTable or the commit log fails (Cassandra 5.0's values and defaults).

use crate::error::ConfigError;
use crate::values::Value;

/// `disk_failure_policy` (Cassandra's default: `stop`); what each does is described in the
/// `storage` crate's `health` module, which applies them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DiskFailurePolicy {
    Die,
    StopParanoid,
    #[default]
    Stop,
    BestEffort,
    Ignore,
}

impl DiskFailurePolicy {
    const ALL: [DiskFailurePolicy; 5] = [
        DiskFailurePolicy::Die,
        DiskFailurePolicy::StopParanoid,
        DiskFailurePolicy::Stop,
        DiskFailurePolicy::BestEffort,
        DiskFailurePolicy::Ignore,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DiskFailurePolicy::Die => "die",
            DiskFailurePolicy::StopParanoid => "stop_paranoid",
            DiskFailurePolicy::Stop => "stop",
            DiskFailurePolicy::BestEffort => "best_effort",
            DiskFailurePolicy::Ignore => "ignore",
        }
    }

    pub(crate) fn parse(v: Value) -> Result<DiskFailurePolicy, ConfigError> {
        named(v, &Self::ALL, Self::name)
    }
}

/// `commit_failure_policy` (Cassandra's default: `stop`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CommitFailurePolicy {
    Die,
    #[default]
    Stop,
    StopCommit,
    Ignore,
}

impl CommitFailurePolicy {
    const ALL: [CommitFailurePolicy; 4] = [
        CommitFailurePolicy::Die,
        CommitFailurePolicy::Stop,
        CommitFailurePolicy::StopCommit,
        CommitFailurePolicy::Ignore,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CommitFailurePolicy::Die => "die",
            CommitFailurePolicy::Stop => "stop",
            CommitFailurePolicy::StopCommit => "stop_commit",
            CommitFailurePolicy::Ignore => "ignore",
        }
    }

    pub(crate) fn parse(v: Value) -> Result<CommitFailurePolicy, ConfigError> {
        named(v, &Self::ALL, Self::name)
    }
}

/// The one of `all` whose name `v` gives; the error lists the names.
fn named<T: Copy>(v: Value, all: &[T], name: fn(T) -> &'static str) -> Result<T, ConfigError> {
    let text = v.text()?;
    all.iter()
        .copied()
        .find(|p| name(*p) == text)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|p| name(*p)).collect();
            let (last, first) = names.split_last().unwrap_or((&"", &[]));
            v.invalid(format!("expected {} or {last}", first.join(", ")))
        })
}
