//! CQL literal text (constants in statements) converted into typed values, following
//! Cassandra's `Constants.Literal` assignment rules and each type's `fromString`.
use crate::cql_type::{CqlType, NativeType};
use crate::error::TypeError;
use crate::value::Value;
use bytes::Bytes;
use std::net::IpAddr;
use uuid::Uuid;

mod duration;
mod number;
mod system_v;
mod temporal;
mod timestamp;
mod tuple_text;
mod zone;
mod zone_names;

pub use duration::parse_duration;
pub use number::float_needs_decimal;
pub use temporal::{parse_date, parse_time};
pub use timestamp::parse_timestamp;
pub use tuple_text::tuple_from_string;

/// The lexical kind of a constant, as the CQL lexer tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LiteralKind {
    String,
    Integer,
    Float,
    Boolean,
    Uuid,
    Hex,
    Duration,
}

impl LiteralKind {
    /// The name Cassandra uses in messages (`STRING`, `INTEGER`, ...).
    pub fn name(self) -> &'static str {
        match self {
            LiteralKind::String => "STRING",
            LiteralKind::Integer => "INTEGER",
            LiteralKind::Float => "FLOAT",
            LiteralKind::Boolean => "BOOLEAN",
            LiteralKind::Uuid => "UUID",
            LiteralKind::Hex => "HEX",
            LiteralKind::Duration => "DURATION",
        }
    }
}

/// Whether a constant of `kind` may be assigned to `ty` (Cassandra's `testAssignment`):
/// never to collections, tuples, UDTs or vectors, always to custom types (which only
/// `parse_literal` of a hex constant can fill).
pub fn is_assignable(ty: &CqlType, kind: LiteralKind) -> bool {
    use NativeType::*;
    let native = match ty.unfrozen() {
        CqlType::Native(n) => *n,
        CqlType::Custom(_) => return true,
        _ => return false,
    };
    match kind {
        LiteralKind::String => matches!(native, Ascii | Text | Inet | Date | Time | Timestamp),
        LiteralKind::Integer => matches!(
            native,
            Bigint
                | Counter
                | Date
                | Decimal
                | Double
                | Duration
                | Float
                | Int
                | Smallint
                | Time
                | Timestamp
                | Tinyint
                | Varint
        ),
        LiteralKind::Float => matches!(native, Decimal | Double | Float),
        LiteralKind::Boolean => native == Boolean,
        LiteralKind::Uuid => matches!(native, Uuid | Timeuuid),
        LiteralKind::Hex => native == Blob,
        LiteralKind::Duration => native == Duration,
    }
}

/// Converts constant `text` (without quotes; hex with its `0x`) into a value of `ty`.
/// A constant the type does not take gives `Invalid <KIND> constant (<text>) for type <ty>`;
/// the caller adds the column name as Cassandra does (`... for "col" of type int`).
pub fn parse_literal(ty: &CqlType, kind: LiteralKind, text: &str) -> Result<Value, TypeError> {
    let invalid = || {
        TypeError(format!(
            "Invalid {} constant ({text}) for type {}",
            kind.name(),
            ty.cql_name()
        ))
    };
    if !is_assignable(ty, kind) {
        return Err(invalid());
    }
    match ty.unfrozen() {
        CqlType::Custom(_) if kind == LiteralKind::Hex => Ok(Value::Custom(hex(text)?)),
        CqlType::Native(_) if kind == LiteralKind::Hex => Ok(Value::Blob(hex(text)?)),
        CqlType::Native(n) => from_string(*n, text),
        _ => Err(invalid()),
    }
}

/// The bytes of a `0x...` literal.
fn hex(text: &str) -> Result<Bytes, TypeError> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    let error = || TypeError(format!("cannot parse '{digits}' as hex bytes"));
    if !digits.len().is_multiple_of(2) || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(error());
    }
    let bytes: Result<Vec<u8>, TypeError> = (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).map_err(|_| error()))
        .collect();
    Ok(Bytes::from(bytes?))
}

/// The type's `fromString` on text (a literal's, or a string given for it in JSON).
pub fn from_string(n: NativeType, text: &str) -> Result<Value, TypeError> {
    use NativeType as N;
    if text.is_empty() && matches!(n, N::Timestamp | N::Inet | N::Boolean) {
        return Ok(Value::Empty);
    }
    Ok(match n {
        N::Ascii => Value::Ascii(ascii(text)?),
        N::Text => Value::Text(text.to_string()),
        N::Bigint => Value::Bigint(number::integer(text, "long")?),
        N::Counter => Value::Counter(number::integer(text, "long")?),
        N::Int => Value::Int(number::integer(text, "int")?),
        N::Smallint => Value::Smallint(number::integer(text, "short")?),
        N::Tinyint => Value::Tinyint(number::integer(text, "byte")?),
        N::Varint => Value::Varint(number::varint(text)?),
        N::Float => Value::Float(number::double(text, "float")? as f32),
        N::Double => Value::Double(number::double(text, "double")?),
        N::Decimal => {
            let (unscaled, scale) = number::decimal(text)?;
            Value::Decimal { unscaled, scale }
        }
        N::Boolean => Value::Boolean(boolean(text)?),
        N::Timestamp => Value::Timestamp(parse_timestamp(text)?),
        N::Date => Value::Date(parse_date(text)?),
        N::Time => Value::Time(parse_time(text)?),
        N::Duration => Value::Duration(parse_duration(text)?),
        N::Inet => Value::Inet(
            text.parse::<IpAddr>()
                .map_err(|_| TypeError(format!("Unable to make inet address from '{text}'")))?,
        ),
        N::Uuid => Value::Uuid(uuid(text)?),
        N::Timeuuid => Value::Timeuuid(timeuuid(text)?),
        N::Blob => Value::Blob(hex(text)?),
    })
}

fn ascii(text: &str) -> Result<String, TypeError> {
    if text.is_ascii() {
        Ok(text.to_string())
    } else {
        Err(TypeError(format!(
            "Invalid ASCII character in string literal: {text}"
        )))
    }
}

fn boolean(text: &str) -> Result<bool, TypeError> {
    match text.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(TypeError(format!("Unable to make boolean from '{text}'"))),
    }
}

fn uuid(text: &str) -> Result<Uuid, TypeError> {
    let hyphenated = text.len() == 36 && text.matches('-').count() == 4;
    hyphenated
        .then(|| Uuid::parse_str(text).ok())
        .flatten()
        .ok_or_else(|| TypeError(format!("Unable to make UUID from '{text}'")))
}

fn timeuuid(text: &str) -> Result<Uuid, TypeError> {
    let parsed = uuid(text)?;
    if parsed.get_version_num() == 1 {
        Ok(parsed)
    } else {
        Err(TypeError("TimeUUID supports only version 1 UUIDs".into()))
    }
}

#[cfg(test)]
mod tests;
