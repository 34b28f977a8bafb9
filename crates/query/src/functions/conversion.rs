//! CAST (Cassandra's `CastFcts`): `cast_as_<type>` functions from every numeric type to
//! every other (Java's `Number` accessors; decimals are made from the `double` value and
//! varints from the `long` value, as Cassandra does), to text and ascii from the numeric
//! types and from inet, boolean, timeuuid, timestamp, date, time and uuid, from ascii to text,
//! and between timestamp, date and timeuuid. A cast to the argument's own type is the argument
//! itself; a target with no cast functions (blob, uuid, varchar, …) cannot be cast to, nor
//! can anything but text be cast to varchar (there is no `cast_as_varchar`).
use types::json::{java_inet, json_timestamp};
use types::value::calendar::{format_date, format_time, DATE_EPOCH, MILLIS_PER_DAY};
use types::value::{java_decimal_string, java_double_string, java_float_string};
use types::{CqlError, CqlResult, CqlType, NativeType, Value};

use super::numeric::{Decimal, Num, NUMERIC};
use super::time::uuid_millis;
use super::{Function, Registry};

/// The function CAST(x AS `target`) calls (`cast_as_varchar` has no overloads).
pub fn cast_name(target: &str) -> String {
    format!("cast_as_{target}")
}

/// The types whose values cast to text and ascii besides the numeric ones.
const TEXT_SOURCES: [NativeType; 7] = [
    NativeType::Inet,
    NativeType::Boolean,
    NativeType::Timeuuid,
    NativeType::Timestamp,
    NativeType::Date,
    NativeType::Time,
    NativeType::Uuid,
];

pub fn register(r: &mut Registry) {
    use NativeType as N;
    for source in NUMERIC {
        for target in NUMERIC
            .into_iter()
            .filter(|t| *t != N::Counter && *t != source)
        {
            r.add(cast(source, target, move |v| {
                Num::of(v).map(|n| numeric(&n, target)).transpose()
            }));
        }
    }
    for target in [N::Ascii, N::Text] {
        for source in NUMERIC.into_iter().chain(TEXT_SOURCES) {
            r.add(cast(source, target, move |v| {
                Ok(text_of(v).map(|text| match target {
                    N::Ascii => Value::Ascii(text),
                    _ => Value::Text(text),
                }))
            }));
        }
    }
    r.add(cast(N::Ascii, N::Text, |v| match v {
        Value::Ascii(s) => Ok(Some(Value::Text(s.clone()))),
        _ => Ok(None),
    }));
    for (source, target) in [
        (N::Timeuuid, N::Date),
        (N::Timeuuid, N::Timestamp),
        (N::Timestamp, N::Date),
        (N::Date, N::Timestamp),
    ] {
        r.add(cast(source, target, move |v| Ok(temporal(v, target))));
    }
}

/// A number cast to another numeric type as Cassandra 5.0's `CastFcts` converts: to decimal
/// a float through its `Float.toString`, a double through `BigDecimal.valueOf(double)`, a
/// varint exactly, other integers through their `long`; to varint through the `long`; the
/// rest by Java's narrowing and widening. NaN and infinities have no decimal: Cassandra
/// fails with a server error then.
fn numeric(n: &Num, target: NativeType) -> CqlResult<Value> {
    Ok(match target {
        NativeType::Decimal => Num::Dec(to_decimal(n)?).into_value(target),
        NativeType::Varint => Num::Big(n.to_i64().into()).into_value(target),
        _ => n.clone().into_value(target),
    })
}

fn to_decimal(n: &Num) -> CqlResult<Decimal> {
    let text = match n {
        Num::F32(v) => java_float_string(*v),
        Num::F64(v) => java_double_string(*v),
        Num::Big(v) => return Ok(Decimal::new(v.clone(), 0)),
        Num::Dec(d) => return Ok(d.clone()),
        other => return Ok(Decimal::new(other.to_i64().into(), 0)),
    };
    Decimal::parse(&text).ok_or_else(|| {
        let c = text.trim_start_matches('-').chars().next().unwrap_or('?');
        CqlError::Server(format!(
            "java.lang.NumberFormatException: Character {c} is neither a decimal digit number, decimal point, nor \"e\" notation exponential mark."
        ))
    })
}

fn cast(
    source: NativeType,
    target: NativeType,
    convert: impl Fn(&Value) -> CqlResult<Option<Value>> + Send + Sync + 'static,
) -> Function {
    Function::scalar(
        &cast_name(target.name()),
        vec![CqlType::Native(source)],
        CqlType::Native(target),
        move |args, _| Ok(args[0].as_ref().map(&convert).transpose()?.flatten()),
    )
}

fn temporal(v: &Value, target: NativeType) -> Option<Value> {
    let ms = match v {
        Value::Timestamp(ms) => *ms,
        Value::Date(d) => (i64::from(*d) - DATE_EPOCH) * MILLIS_PER_DAY,
        Value::Timeuuid(u) => uuid_millis(u),
        _ => return None,
    };
    Some(match target {
        NativeType::Date => super::time::date_of_millis(ms),
        _ => Value::Timestamp(ms),
    })
}

/// The text a value casts to (`2024-01-01T12:00:00.000Z`, `1.5E300`).
pub fn text_of(v: &Value) -> Option<String> {
    Some(match v {
        Value::Ascii(s) | Value::Text(s) => s.clone(),
        Value::Bigint(n) | Value::Counter(n) => n.to_string(),
        Value::Int(n) => n.to_string(),
        Value::Smallint(n) => n.to_string(),
        Value::Tinyint(n) => n.to_string(),
        Value::Varint(n) => n.to_string(),
        Value::Decimal { unscaled, scale } => java_decimal_string(unscaled, *scale),
        Value::Double(d) => java_double_string(*d),
        Value::Float(f) => java_float_string(*f),
        Value::Boolean(b) => b.to_string(),
        Value::Timestamp(ms) => json_timestamp(*ms).replacen(' ', "T", 1),
        Value::Date(d) => format_date(i64::from(*d) - DATE_EPOCH),
        Value::Time(ns) => format_time(*ns),
        Value::Uuid(u) | Value::Timeuuid(u) => u.hyphenated().to_string(),
        Value::Inet(ip) => java_inet(ip),
        _ => return None,
    })
}
