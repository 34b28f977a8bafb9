//! The guardrails of cassandra.yaml (Cassandra 5.0's `*_warn_threshold` / `*_fail_threshold`,
//! `*_enabled` and consistency-level keys): parsed with Cassandra's rules, disabled by default
//! as in Cassandra, checked together as Cassandra's `GuardrailsOptions` does, and listed for
//! `system_views.settings`. What they guard is decided in the `query` crate.

use std::fmt;
use std::time::Duration;

use crate::error::ConfigError;
use crate::listing::Setting;
use crate::spec::{format_duration, parse_duration, DataSize, SizeUnit, TimeUnit};
use crate::values::Value;
use crate::yaml::Node;

/// A warn/fail pair; `None` leaves that side disabled (Cassandra's `-1` or empty value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threshold<T> {
    pub warn: Option<T>,
    pub fail: Option<T>,
}

impl<T> Default for Threshold<T> {
    fn default() -> Self {
        Threshold {
            warn: None,
            fail: None,
        }
    }
}

/// What values a threshold accepts, as Cassandra's `GuardrailsOptions` validates them.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    /// The largest value accepted.
    max: u64,
    /// Whether `0` is a valid value (otherwise it must be written `-1`).
    zero: bool,
    /// A lower bound (`minimum_replication_factor`): the warn value must not be below the fail one.
    lower: bool,
}

const INT: Bounds = Bounds {
    max: i32::MAX as u64,
    zero: false,
    lower: false,
};
const LONG: Bounds = Bounds {
    max: i64::MAX as u64,
    zero: false,
    lower: false,
};
const MIN_INT: Bounds = Bounds { lower: true, ..INT };
const SIZE: Bounds = LONG;
const TIMESTAMP: Bounds = Bounds { zero: true, ..LONG };

/// A threshold's value type.
pub trait Limit: Copy {
    /// The value the guardrail compares (a count, bytes, microseconds).
    fn amount(self) -> u64;
}

/// How a threshold's value is written in cassandra.yaml and printed back.
trait Syntax: Limit + Sized {
    fn parse(v: Value, bounds: Bounds) -> Result<Option<Self>, ConfigError>;
    /// The value as `system_views.settings` prints it (`None` prints as null).
    fn show(value: Option<Self>) -> Option<String>;
}

impl Limit for u64 {
    fn amount(self) -> u64 {
        self
    }
}

impl Syntax for u64 {
    /// A whole number; `-1` disables, other negatives and (unless allowed) `0` are refused.
    fn parse(v: Value, bounds: Bounds) -> Result<Option<u64>, ConfigError> {
        let n: i64 = v.integer()?;
        if n == -1 {
            return Ok(None);
        }
        check_amount(v.key, n, bounds).map(Some)
    }

    fn show(value: Option<u64>) -> Option<String> {
        Some(value.map_or_else(|| "-1".to_string(), |n| n.to_string()))
    }
}

impl Limit for DataSize {
    fn amount(self) -> u64 {
        self.as_bytes()
    }
}

impl Syntax for DataSize {
    fn parse(v: Value, bounds: Bounds) -> Result<Option<DataSize>, ConfigError> {
        let size = v.size(SizeUnit::Bytes)?;
        if size.as_bytes() == 0 && !bounds.zero {
            return Err(v.invalid(format!(
                "Invalid value for {}: 0 is not allowed; if attempting to disable use an empty value",
                v.key
            )));
        }
        Ok(Some(size))
    }

    fn show(value: Option<DataSize>) -> Option<String> {
        value.map(|size| size.to_string())
    }
}

impl Limit for Duration {
    fn amount(self) -> u64 {
        u64::try_from(self.as_micros()).unwrap_or(u64::MAX)
    }
}

impl Syntax for Duration {
    /// A duration in microseconds or larger units (`1d`, `3600s`).
    fn parse(v: Value, bounds: Bounds) -> Result<Option<Duration>, ConfigError> {
        let duration =
            parse_duration(&v.text()?, TimeUnit::Microseconds).map_err(|e| v.invalid(e))?;
        let micros = i64::try_from(duration.as_micros()).unwrap_or(i64::MAX);
        check_amount(v.key, micros, bounds)?;
        Ok(Some(duration))
    }

    fn show(value: Option<Duration>) -> Option<String> {
        value.map(format_duration)
    }
}

/// Cassandra's `validatePositiveNumeric`, with its messages.
fn check_amount(key: &str, n: i64, bounds: Bounds) -> Result<u64, ConfigError> {
    let reason = if n < 0 {
        format!("Invalid value {n} for {key}: negative values are not allowed, outside of -1 which disables the guardrail")
    } else if n as u64 > bounds.max {
        format!(
            "Invalid value {n} for {key}: maximum allowed value is {}",
            bounds.max
        )
    } else if n == 0 && !bounds.zero {
        format!("Invalid value for {key}: 0 is not allowed; if attempting to disable use -1")
    } else {
        return Ok(n as u64);
    };
    Err(ConfigError::invalid(key, n, reason))
}

impl<T: Limit> Threshold<T> {
    /// The warn and fail values as the amounts the guardrail compares.
    pub fn amounts(&self) -> (Option<u64>, Option<u64>) {
        (self.warn.map(Limit::amount), self.fail.map(Limit::amount))
    }
}

/// The warn value must not exceed the fail value (not go below it for lower bounds).
fn validate<T: Syntax>(t: &Threshold<T>, name: &str, bounds: Bounds) -> Result<(), ConfigError> {
    let (Some(warn), Some(fail)) = (t.warn, t.fail) else {
        return Ok(());
    };
    let (w, f) = (warn.amount(), fail.amount());
    let (wrong, relation) = if bounds.lower {
        (f > w, "greater")
    } else {
        (f < w, "lower")
    };
    if !wrong {
        return Ok(());
    }
    let key = format!("{name}_warn_threshold");
    let w = T::show(Some(warn)).unwrap_or_default();
    let f = T::show(Some(fail)).unwrap_or_default();
    Err(ConfigError::invalid(
        &key,
        &w,
        format!(
            "The warn threshold {w} for {key} should be {relation} than the fail threshold {f}"
        ),
    ))
}

/// Consistency levels in the order of Cassandra's `ConsistencyLevel` enum (bit `i` of
/// [`ConsistencyLevels`] is level `i`; the first eleven are the native protocol's codes).
pub const CONSISTENCY_LEVELS: [&str; 12] = [
    "ANY",
    "ONE",
    "TWO",
    "THREE",
    "QUORUM",
    "ALL",
    "LOCAL_QUORUM",
    "EACH_QUORUM",
    "SERIAL",
    "LOCAL_SERIAL",
    "LOCAL_ONE",
    "NODE_LOCAL",
];

/// A set of consistency levels (`read_consistency_levels_warned: [ALL, QUORUM]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConsistencyLevels(u16);

impl ConsistencyLevels {
    /// The set holding the levels with these protocol codes.
    pub fn of(codes: &[u16]) -> ConsistencyLevels {
        ConsistencyLevels(codes.iter().fold(0, |bits, c| bits | 1 << c))
    }

    pub fn contains(self, code: u16) -> bool {
        code < 16 && self.0 & (1 << code) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The levels both sets hold.
    pub fn intersection(self, other: ConsistencyLevels) -> ConsistencyLevels {
        ConsistencyLevels(self.0 & other.0)
    }

    fn parse(v: Value) -> Result<ConsistencyLevels, ConfigError> {
        let items = match v.node {
            Node::Seq(items) => items.as_slice(),
            _ => return Err(v.invalid("expected a list of consistency levels")),
        };
        let mut codes = Vec::with_capacity(items.len());
        for item in items {
            let name = item.scalar_text().unwrap_or_default();
            let code = CONSISTENCY_LEVELS
                .iter()
                .position(|level| *level == name)
                .ok_or_else(|| {
                    v.invalid(format!(
                        "'{name}' is not a consistency level (one of {})",
                        CONSISTENCY_LEVELS.join(", ")
                    ))
                })?;
            codes.push(code as u16);
        }
        Ok(ConsistencyLevels::of(&codes))
    }
}

/// `[ALL, QUORUM]` in enum order, as Cassandra prints an `EnumSet`.
impl fmt::Display for ConsistencyLevels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = CONSISTENCY_LEVELS
            .iter()
            .enumerate()
            .filter(|(code, _)| self.contains(*code as u16))
            .map(|(_, name)| *name)
            .collect();
        write!(f, "[{}]", names.join(", "))
    }
}

/// A setting that is not a threshold: a flag or a set of levels.
trait Choice: Sized + fmt::Display {
    fn parse(v: Value) -> Result<Self, ConfigError>;
}

impl Choice for bool {
    fn parse(v: Value) -> Result<bool, ConfigError> {
        v.boolean()
    }
}

impl Choice for ConsistencyLevels {
    fn parse(v: Value) -> Result<ConsistencyLevels, ConfigError> {
        ConsistencyLevels::parse(v)
    }
}

/// Declares [`Guardrails`] from one list: each threshold `name: type = bounds` gives the keys
/// `name_warn_threshold` and `name_fail_threshold`; each option `key: type = default` one key.
macro_rules! guardrails {
    (
        thresholds { $($t:ident: $ty:ty = $bounds:expr,)* }
        options { $($o:ident: $oty:ty = $default:expr,)* }
    ) => {
        /// The guardrails Helenus enforces, as cassandra.yaml sets them.
        #[derive(Debug, Clone, PartialEq)]
        pub struct Guardrails {
            $(pub $t: Threshold<$ty>,)*
            $(pub $o: $oty,)*
        }

        impl Default for Guardrails {
            fn default() -> Self {
                Guardrails {
                    $($t: Threshold::default(),)*
                    $($o: $default,)*
                }
            }
        }

        impl Guardrails {
            /// Sets the guardrail `v.key` names; `Ok(false)` when it names none.
            pub(crate) fn apply(&mut self, v: Value) -> Result<bool, ConfigError> {
                $(
                    if v.key == concat!(stringify!($t), "_warn_threshold") {
                        self.$t.warn = <$ty as Syntax>::parse(v, $bounds)?;
                        return Ok(true);
                    }
                    if v.key == concat!(stringify!($t), "_fail_threshold") {
                        self.$t.fail = <$ty as Syntax>::parse(v, $bounds)?;
                        return Ok(true);
                    }
                )*
                $(
                    if v.key == stringify!($o) {
                        self.$o = <$oty as Choice>::parse(v)?;
                        return Ok(true);
                    }
                )*
                Ok(false)
            }

            /// Every guardrail key with its value, as `system_views.settings` lists them.
            pub(crate) fn settings(&self) -> Vec<Setting> {
                vec![
                    $(
                        (concat!(stringify!($t), "_warn_threshold"), <$ty as Syntax>::show(self.$t.warn)),
                        (concat!(stringify!($t), "_fail_threshold"), <$ty as Syntax>::show(self.$t.fail)),
                    )*
                    $((stringify!($o), Some(self.$o.to_string())),)*
                ]
            }

            /// Checks each warn/fail pair, as Cassandra does at startup.
            pub(crate) fn validate(&self) -> Result<(), ConfigError> {
                $(validate(&self.$t, stringify!($t), $bounds)?;)*
                self.validate_replication_factors()
            }
        }
    };
}

guardrails! {
    thresholds {
        keyspaces: u64 = INT,
        tables: u64 = INT,
        columns_per_table: u64 = INT,
        page_size: u64 = INT,
        partition_keys_in_select: u64 = INT,
        in_select_cartesian_product: u64 = INT,
        items_per_collection: u64 = INT,
        fields_per_udt: u64 = INT,
        partition_tombstones: u64 = LONG,
        minimum_replication_factor: u64 = MIN_INT,
        maximum_replication_factor: u64 = INT,
        collection_size: DataSize = SIZE,
        column_value_size: DataSize = SIZE,
        partition_size: DataSize = SIZE,
        maximum_timestamp: Duration = TIMESTAMP,
        minimum_timestamp: Duration = TIMESTAMP,
    }
    options {
        user_timestamps_enabled: bool = true,
        group_by_enabled: bool = true,
        alter_table_enabled: bool = true,
        drop_truncate_table_enabled: bool = true,
        drop_keyspace_enabled: bool = true,
        uncompressed_tables_enabled: bool = true,
        compact_tables_enabled: bool = true,
        read_before_write_list_operations_enabled: bool = true,
        allow_filtering_enabled: bool = true,
        simplestrategy_enabled: bool = true,
        zero_ttl_on_twcs_warned: bool = true,
        zero_ttl_on_twcs_enabled: bool = true,
        read_consistency_levels_warned: ConsistencyLevels = ConsistencyLevels::default(),
        read_consistency_levels_disallowed: ConsistencyLevels = ConsistencyLevels::default(),
        write_consistency_levels_warned: ConsistencyLevels = ConsistencyLevels::default(),
        write_consistency_levels_disallowed: ConsistencyLevels = ConsistencyLevels::default(),
    }
}

/// Cassandra's `default_keyspace_rf` (Helenus does not read that key).
const DEFAULT_KEYSPACE_RF: u64 = 1;

impl Guardrails {
    /// The replication-factor thresholds must admit `default_keyspace_rf`, as in Cassandra.
    fn validate_replication_factors(&self) -> Result<(), ConfigError> {
        let rf = DEFAULT_KEYSPACE_RF;
        if let Some(fail) = self.minimum_replication_factor.fail.filter(|f| *f > rf) {
            return Err(ConfigError::invalid(
                "minimum_replication_factor_fail_threshold",
                fail,
                format!("minimum_replication_factor_fail_threshold to be set ({fail}) cannot be greater than default_keyspace_rf ({rf})"),
            ));
        }
        if let Some(fail) = self.maximum_replication_factor.fail.filter(|f| *f < rf) {
            return Err(ConfigError::invalid(
                "maximum_replication_factor_fail_threshold",
                fail,
                format!("maximum_replication_factor_fail_threshold to be set ({fail}) cannot be lesser than default_keyspace_rf ({rf})"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "guardrails_tests.rs"]
mod tests;
