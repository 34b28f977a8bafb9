//! The parsed cassandra-stress settings: one struct per option group, as cassandra-stress's
//! `Settings*` classes, with its defaults.

use std::time::Duration;

use crate::dist::DistSpec;

/// One kind of operation; its name is what the interval table and results print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpKind {
    CounterRead,
    CounterWrite,
    Read,
    Write,
}

impl OpKind {
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Write => "WRITE",
            OpKind::Read => "READ",
            OpKind::CounterWrite => "COUNTER_WRITE",
            OpKind::CounterRead => "COUNTER_READ",
        }
    }

    pub fn is_write(self) -> bool {
        matches!(self, OpKind::Write | OpKind::CounterWrite)
    }

    /// `write`, `read`, `counter_write`/`counter_add`, `counter_read` (as in `ratio(...)`).
    pub fn parse(s: &str) -> Option<OpKind> {
        match s.to_ascii_lowercase().as_str() {
            "write" | "insert" => Some(OpKind::Write),
            "read" => Some(OpKind::Read),
            "counter_write" | "counter_add" | "counterwrite" => Some(OpKind::CounterWrite),
            "counter_read" | "counterread" => Some(OpKind::CounterRead),
            _ => None,
        }
    }
}

/// The stress command and its own options.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSettings {
    pub name: &'static str,
    /// Operations with their weights: one entry except for `mixed`.
    pub ops: Vec<(OpKind, f64)>,
    pub stop: Stop,
    pub consistency: String,
    pub no_warmup: bool,
    /// `add=`: the counter increment distribution.
    pub add: DistSpec,
    /// `user profile=… ops(…)`.
    pub user: Option<UserCommand>,
}

impl CommandSettings {
    pub fn count(&self) -> Option<u64> {
        match self.stop {
            Stop::Count(n) => Some(n),
            _ => None,
        }
    }

    pub fn writes(&self) -> bool {
        self.ops.iter().any(|(k, _)| k.is_write())
    }
}

/// `user profile=… ops(…)`.
#[derive(Debug, Clone, PartialEq)]
pub struct UserCommand {
    pub profile: String,
    pub ops: Vec<(String, f64)>,
}

/// When a run ends.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    Count(u64),
    Duration {
        time: Duration,
        unit: &'static str,
        amount: u64,
    },
    /// `err<` with `n>` / `n<`: until the op rate's standard error is small enough.
    Uncertainty {
        target: f64,
        min: u32,
        max: u32,
    },
}

/// `-rate`.
#[derive(Debug, Clone, PartialEq)]
pub enum Rate {
    Threads { threads: u32, limit: Option<Limit> },
    Auto { min: u32, max: u32, auto: bool },
}

/// `fixed=N/s` (latency from intended start) or `throttle=N/s` (service time only).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    pub per_second: u64,
    pub fixed: bool,
}

/// `-pop`.
#[derive(Debug, Clone, PartialEq)]
pub enum Population {
    Seq { start: i64, end: i64, wrap: bool },
    Dist(DistSpec),
}

/// `-mode`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mode {
    pub protocol_version: u8,
    pub compression: Option<String>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub max_pending: u32,
    pub connections_per_host: u32,
}

/// `-col`.
#[derive(Debug, Clone, PartialEq)]
pub struct Columns {
    pub count: DistSpec,
    pub size: DistSpec,
    pub names: Vec<String>,
}

/// `-schema`.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    pub keyspace: String,
    pub strategy: String,
    pub replication: Vec<(String, String)>,
    pub compaction: Option<String>,
    pub compaction_options: Vec<(String, String)>,
    pub compression: Option<String>,
}

/// `-log`.
#[derive(Debug, Clone, PartialEq)]
pub struct Log {
    pub interval: Duration,
    pub file: Option<String>,
    pub hdr_file: Option<String>,
    pub no_summary: bool,
    pub no_settings: bool,
    pub level: String,
}

/// `-graph`.
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    pub file: Option<String>,
    pub title: Option<String>,
    pub revision: String,
    pub op: Option<String>,
    /// `-graph png=FILE` or `--png FILE`: the same charts as a PNG image.
    pub png: Option<String>,
}

/// `-errors`.
#[derive(Debug, Clone, PartialEq)]
pub struct Errors {
    pub ignore: bool,
    pub tries: u32,
}

/// Everything one cassandra-stress command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub command: CommandSettings,
    pub rate: Rate,
    pub population: Population,
    pub nodes: Vec<String>,
    pub datacenter: Option<String>,
    pub native_port: u16,
    pub jmx_port: u16,
    pub mode: Mode,
    pub columns: Columns,
    pub schema: Schema,
    pub log: Log,
    pub graph: Graph,
    pub errors: Errors,
}
