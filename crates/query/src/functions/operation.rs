//! Arithmetic (Cassandra's `OperationFcts`): `_add`, `_substract`, `_multiply`, `_divide` and
//! `_modulo` for every pair of numeric types (in the type `numeric::result_type` picks),
//! timestamp and date plus or minus a duration, text concatenation, and `_negate`.
use types::value::calendar::{
    civil_from_days, days_from_civil, days_in_month, DATE_EPOCH, MILLIS_PER_DAY,
};
use types::value::{format_duration, Duration};
use types::{CqlType, NativeType, Value};

use super::numeric::{self, Num, NUMERIC};
use super::{Function, Registry};

/// A binary arithmetic operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

impl Operator {
    pub fn symbol(self) -> char {
        match self {
            Operator::Add => '+',
            Operator::Sub => '-',
            Operator::Mul => '*',
            Operator::Div => '/',
            Operator::Mod => '%',
        }
    }

    const ALL: [Operator; 5] = [
        Operator::Add,
        Operator::Sub,
        Operator::Mul,
        Operator::Div,
        Operator::Mod,
    ];
}

/// The function an operator calls.
pub fn operation_name(op: Operator) -> &'static str {
    match op {
        Operator::Add => "_add",
        Operator::Sub => "_substract",
        Operator::Mul => "_multiply",
        Operator::Div => "_divide",
        Operator::Mod => "_modulo",
    }
}

/// The operator of an operation function's name (`_add`, `system._add`).
pub fn symbol_of(name: &str) -> Option<char> {
    let bare = name.strip_prefix("system.").unwrap_or(name);
    Operator::ALL
        .into_iter()
        .find(|op| operation_name(*op) == bare)
        .map(Operator::symbol)
}

fn native(n: NativeType) -> CqlType {
    CqlType::Native(n)
}

pub fn register(r: &mut Registry) {
    for left in NUMERIC {
        for right in NUMERIC {
            for op in Operator::ALL {
                r.add(numeric_operation(op, left, right));
            }
        }
        r.add(negation(left));
    }
    for ty in [NativeType::Timestamp, NativeType::Date] {
        for op in [Operator::Add, Operator::Sub] {
            r.add(temporal_operation(op, ty));
        }
    }
    for ty in [NativeType::Text, NativeType::Ascii] {
        r.add(Function::scalar("_add", vec![native(ty), native(ty)], native(ty), move |args, _| {
            Ok(match args {
                [Some(Value::Text(a) | Value::Ascii(a)), Some(Value::Text(b) | Value::Ascii(b))] => {
                    let joined = format!("{a}{b}");
                    Some(if ty == NativeType::Ascii { Value::Ascii(joined) } else { Value::Text(joined) })
                }
                _ => None,
            })
        }));
    }
}

/// The two operands, or `None` when either is null or empty (the result is then null).
fn operands(args: &[Option<Value>]) -> Option<(&Value, &Value)> {
    match args {
        [Some(a), Some(b)] if *a != Value::Empty && *b != Value::Empty => Some((a, b)),
        _ => None,
    }
}

fn numeric_operation(op: Operator, left: NativeType, right: NativeType) -> Function {
    let ret = numeric::result_type(left, right);
    let signature = format!("{} {} {}", left.name(), op.symbol(), right.name());
    Function::scalar(
        operation_name(op),
        vec![native(left), native(right)],
        native(ret),
        move |args, _| {
            let Some((a, b)) = operands(args) else {
                return Ok(None);
            };
            let (Some(a), Some(b)) = (Num::of(a), Num::of(b)) else {
                return Ok(None);
            };
            numeric::arithmetic(op, ret, &a, &b)
                .map(|n| Some(n.into_value(ret)))
                .map_err(|e| operation_failure(&signature, &e))
        },
    )
}

fn operation_failure(signature: &str, reason: &str) -> types::CqlError {
    types::CqlError::FunctionFailure {
        message: format!("the operation '{signature}' failed: {reason}"),
        keyspace: "system".into(),
        function: signature.to_string(),
        arg_types: Vec::new(),
    }
}

fn negation(ty: NativeType) -> Function {
    Function::scalar("_negate", vec![native(ty)], native(ty), move |args, _| {
        Ok(match args {
            [Some(v)] => Num::of(v).map(|n| numeric::negate(&n).into_value(ty)),
            _ => None,
        })
    })
}

fn temporal_operation(op: Operator, ty: NativeType) -> Function {
    let signature = format!("{} {} duration", ty.name(), op.symbol());
    Function::scalar(
        operation_name(op),
        vec![native(ty), native(NativeType::Duration)],
        native(ty),
        move |args, _| {
            let Some((value, Value::Duration(d))) = operands(args) else {
                return Ok(None);
            };
            let d = if op == Operator::Sub {
                negate_duration(d)
            } else {
                *d
            };
            shift(value, &d).map_err(|e| operation_failure(&signature, &e))
        },
    )
}

fn negate_duration(d: &Duration) -> Duration {
    Duration {
        months: d.months.wrapping_neg(),
        days: d.days.wrapping_neg(),
        nanos: d.nanos.wrapping_neg(),
    }
}

/// A timestamp or date moved by a duration: months on the calendar (the day clamped to the
/// month's end), then days, then (timestamps only) the nanoseconds as milliseconds.
fn shift(value: &Value, d: &Duration) -> Result<Option<Value>, String> {
    match value {
        Value::Timestamp(ms) => {
            let days = ms.div_euclid(MILLIS_PER_DAY);
            let in_day = ms.rem_euclid(MILLIS_PER_DAY);
            let moved = add_months(days, d.months) + i64::from(d.days);
            Ok(Some(Value::Timestamp(
                moved * MILLIS_PER_DAY + in_day + d.nanos / 1_000_000,
            )))
        }
        Value::Date(raw) => {
            if d.nanos != 0 {
                return Err(format!(
                    "The duration must have a day precision. Was: {}",
                    format_duration(d)
                ));
            }
            let days = i64::from(*raw) - DATE_EPOCH;
            let moved = add_months(days, d.months) + i64::from(d.days) + DATE_EPOCH;
            u32::try_from(moved)
                .map(|v| Some(Value::Date(v)))
                .map_err(|_| "date out of range".to_string())
        }
        _ => Ok(None),
    }
}

fn add_months(days: i64, months: i32) -> i64 {
    if months == 0 {
        return days;
    }
    let (year, month, day) = civil_from_days(days);
    let total = year * 12 + i64::from(month) - 1 + i64::from(months);
    let (year, month) = (total.div_euclid(12), (total.rem_euclid(12) + 1) as u32);
    days_from_civil(year, month, day.min(days_in_month(year, month)))
}
