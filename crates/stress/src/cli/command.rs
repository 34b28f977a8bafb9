//! The command word and its options: `n=`, `duration=`, `err<` `n>` `n<`, `cl=`,
//! `no-warmup`, `add=` (counters), `ratio(…)` (mixed), `profile=` `ops(…)` (user).

use std::time::Duration;

use super::{key_value, sub_options, CliError};
use crate::dist::{parse_long, DistSpec};
use crate::settings::{CommandSettings, OpKind, Stop, UserCommand};

const CONSISTENCY_LEVELS: &[&str] = &[
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
];

/// Options being collected for one command.
struct Builder {
    count: Option<u64>,
    duration: Option<Stop>,
    target: Option<f64>,
    min: u32,
    max: u32,
    consistency: String,
    no_warmup: bool,
    add: DistSpec,
    ratio: Option<Vec<(OpKind, f64)>>,
    profile: Option<String>,
    user_ops: Option<Vec<(String, f64)>>,
}

pub(super) fn parse(name: &str, params: &[String]) -> Result<CommandSettings, CliError> {
    let (name, single) = match name {
        "write" => ("write", Some(OpKind::Write)),
        "read" => ("read", Some(OpKind::Read)),
        "counter_write" => ("counter_write", Some(OpKind::CounterWrite)),
        "counter_read" => ("counter_read", Some(OpKind::CounterRead)),
        "mixed" => ("mixed", None),
        "user" => ("user", None),
        other => return Err(CliError::new(format!("Unknown command: {other}"), Some(""))),
    };
    let mut b = Builder::new();
    for p in params {
        b.accept(p, name)
            .map_err(|m| CliError::new(m, Some(name)))?;
    }
    b.finish(name, single)
}

impl Builder {
    fn new() -> Builder {
        Builder {
            count: None,
            duration: None,
            target: None,
            min: 30,
            max: 200,
            consistency: "LOCAL_ONE".into(),
            no_warmup: false,
            add: DistSpec::fixed(1),
            ratio: None,
            profile: None,
            user_ops: None,
        }
    }

    fn accept(&mut self, p: &str, command: &str) -> Result<(), String> {
        let invalid = || format!("Invalid {command} option: {p}");
        if let Some(v) = key_value(p, "n=") {
            self.count = Some(parse_count(v).ok_or_else(invalid)?);
        } else if let Some(v) = key_value(p, "duration=") {
            self.duration = Some(parse_duration(v).ok_or_else(invalid)?);
        } else if let Some(v) = key_value(p, "err<") {
            self.target = Some(v.parse().map_err(|_| invalid())?);
        } else if let Some(v) = key_value(p, "n>") {
            self.min = v.parse().map_err(|_| invalid())?;
        } else if let Some(v) = key_value(p, "n<") {
            self.max = v.parse().map_err(|_| invalid())?;
        } else if let Some(v) = key_value(p, "cl=") {
            let cl = v.to_ascii_uppercase();
            if !CONSISTENCY_LEVELS.contains(&cl.as_str()) {
                return Err(invalid());
            }
            self.consistency = cl;
        } else if p.eq_ignore_ascii_case("no-warmup") {
            self.no_warmup = true;
        } else {
            self.accept_specific(p, command).ok_or_else(invalid)?;
        }
        Ok(())
    }

    /// Options only some commands take; `None` when `p` is not one of them.
    fn accept_specific(&mut self, p: &str, command: &str) -> Option<()> {
        if let Some(v) = key_value(p, "add=").filter(|_| command.starts_with("counter")) {
            self.add = DistSpec::parse(v).ok()?;
        } else if let Some(parts) = sub_options(p, "ratio").filter(|_| command == "mixed") {
            let ratio = parse_weights(&parts)?;
            self.ratio = Some(
                ratio
                    .into_iter()
                    .map(|(k, w)| Some((OpKind::parse(k)?, w)))
                    .collect::<Option<_>>()?,
            );
        } else if let Some(v) = key_value(p, "profile=").filter(|_| command == "user") {
            self.profile = Some(v.to_string());
        } else if let Some(parts) = sub_options(p, "ops").filter(|_| command == "user") {
            let ops = parse_weights(&parts)?;
            self.user_ops = Some(ops.into_iter().map(|(k, w)| (k.to_string(), w)).collect());
        } else {
            return None;
        }
        Some(())
    }

    fn finish(
        self,
        name: &'static str,
        single: Option<OpKind>,
    ) -> Result<CommandSettings, CliError> {
        let stop = match (self.count, self.duration, self.target) {
            (Some(n), None, None) => Stop::Count(n),
            (None, Some(d), None) => d,
            (None, None, t) => Stop::Uncertainty {
                target: t.unwrap_or(0.02),
                min: self.min,
                max: self.max,
            },
            _ => {
                return Err(CliError::new(
                    "Specify only one of n=, duration= and err<",
                    Some(name),
                ))
            }
        };
        let ops = match (single, self.ratio) {
            (Some(k), _) => vec![(k, 1.0)],
            (None, Some(r)) => r,
            (None, None) if name == "mixed" => vec![(OpKind::Write, 1.0), (OpKind::Read, 1.0)],
            (None, None) => Vec::new(),
        };
        let user = self.profile.map(|profile| UserCommand {
            profile,
            ops: self.user_ops.unwrap_or_default(),
        });
        if name == "user" && user.is_none() {
            return Err(CliError::new("user requires profile=FILE", Some(name)));
        }
        Ok(CommandSettings {
            name,
            ops,
            stop,
            consistency: self.consistency,
            no_warmup: self.no_warmup,
            add: self.add,
            user,
        })
    }
}

/// `n=` takes cassandra-stress's suffixes (`n=1M`).
fn parse_count(v: &str) -> Option<u64> {
    u64::try_from(parse_long(v)?).ok()
}

/// `duration=30s`, `duration=5m`, `duration=1h`.
fn parse_duration(v: &str) -> Option<Stop> {
    let v = v.trim().to_ascii_lowercase();
    let (digits, unit, secs) = match v.as_bytes().last()? {
        b's' => (&v[..v.len() - 1], "seconds", 1),
        b'm' => (&v[..v.len() - 1], "minutes", 60),
        b'h' => (&v[..v.len() - 1], "hours", 3600),
        _ => return None,
    };
    let amount: u64 = digits.parse().ok()?;
    Some(Stop::Duration {
        time: Duration::from_secs(amount.checked_mul(secs)?),
        unit,
        amount,
    })
}

/// `a=1,b=3` into weights.
fn parse_weights<'a>(parts: &[&'a str]) -> Option<Vec<(&'a str, f64)>> {
    let weights: Vec<(&str, f64)> = parts
        .iter()
        .map(|p| {
            let (k, w) = p.split_once('=')?;
            Some((k.trim(), w.trim().parse().ok()?))
        })
        .collect::<Option<_>>()?;
    (!weights.is_empty() && weights.iter().all(|&(_, w)| w >= 0.0)).then_some(weights)
}
