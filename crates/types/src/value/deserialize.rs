//! Decoding and validating serialized cell values against a type, with Cassandra's messages.
use super::cql_literal::to_hex;
use super::{vint, Duration, Value};
use crate::cql_type::{CqlType, NativeType};
use crate::error::TypeError;
use crate::limits::MAX_NESTING;
use bytes::Bytes;
use num_bigint::BigInt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use uuid::Uuid;

/// The parts of a composite value, each with its type; `None` is a null tuple/UDT field.
type Parts<'a> = Vec<(&'a CqlType, Option<&'a [u8]>)>;

impl Value {
    /// Decodes `bytes` as a value of `ty`, validating it fully. A zero-length value of a
    /// type that allows it (see `NativeType::accepts_empty`) is `Value::Empty`. Composite
    /// values nest at most `MAX_NESTING` levels.
    pub fn deserialize(ty: &CqlType, bytes: &[u8]) -> Result<Value, TypeError> {
        decode(ty, bytes, 0)
    }

    /// Checks that `bytes` is a valid value of `ty` without building it.
    pub fn validate(ty: &CqlType, bytes: &[u8]) -> Result<(), TypeError> {
        check(ty, bytes, 0)
    }
}

/// Decodes a value found `depth` composite levels down.
fn decode(ty: &CqlType, bytes: &[u8], depth: usize) -> Result<Value, TypeError> {
    match ty {
        CqlType::Native(n) => deserialize_native(*n, bytes),
        CqlType::Frozen(inner) => decode(inner, bytes, depth),
        CqlType::Custom(_) => Ok(Value::Custom(Bytes::copy_from_slice(bytes))),
        CqlType::Vector(..) if bytes.is_empty() => Ok(Value::Empty),
        _ => assemble(ty, components(ty, bytes, depth)?, depth + 1),
    }
}

fn check(ty: &CqlType, bytes: &[u8], depth: usize) -> Result<(), TypeError> {
    match ty {
        CqlType::Native(n) => check_native(*n, bytes),
        CqlType::Frozen(inner) => check(inner, bytes, depth),
        CqlType::Custom(_) => Ok(()),
        CqlType::Vector(..) if bytes.is_empty() => Ok(()),
        _ => components(ty, bytes, depth)?
            .into_iter()
            .try_for_each(|(t, b)| b.map_or(Ok(()), |b| check(t, b, depth + 1))),
    }
}

fn assemble(ty: &CqlType, parts: Parts<'_>, depth: usize) -> Result<Value, TypeError> {
    let decode_part =
        |(t, b): (&CqlType, Option<&[u8]>)| b.map(|b| decode(t, b, depth)).transpose();
    let mut values = parts.into_iter().map(decode_part);
    let mut required = || -> Result<Vec<Value>, TypeError> {
        values
            .by_ref()
            .map(|v| v?.ok_or_else(null_element))
            .collect()
    };
    Ok(match ty {
        CqlType::List(_) => Value::List(required()?),
        CqlType::Set(_) => Value::Set(required()?),
        CqlType::Vector(..) => Value::Vector(required()?),
        CqlType::Map(..) => {
            let flat = required()?;
            let mut pairs = Vec::with_capacity(flat.len() / 2);
            let mut it = flat.into_iter();
            while let (Some(k), Some(v)) = (it.next(), it.next()) {
                pairs.push((k, v));
            }
            Value::Map(pairs)
        }
        CqlType::Udt(udt) => {
            let fields: Result<Vec<Option<Value>>, TypeError> = values.collect();
            let names = udt.fields.iter().map(|(name, _)| name.clone());
            Value::Udt(names.zip(fields?).collect())
        }
        _ => Value::Tuple(values.collect::<Result<_, _>>()?),
    })
}

fn null_element() -> TypeError {
    TypeError("Null value read when not allowed".into())
}

/// Splits a composite value found `depth` levels down into typed parts. Tuples and UDTs get
/// one part per field, missing trailing fields as nulls.
fn components<'a>(ty: &'a CqlType, bytes: &'a [u8], depth: usize) -> Result<Parts<'a>, TypeError> {
    if depth >= MAX_NESTING {
        return Err(TypeError(format!(
            "Value nested too deeply: collections, tuples, user types and vectors nest at most \
             {MAX_NESTING} levels"
        )));
    }
    match ty {
        CqlType::List(e) => with_type(split_collection(bytes, "list", 1)?, |_| e),
        CqlType::Set(e) => with_type(split_collection(bytes, "set", 1)?, |_| e),
        CqlType::Map(k, v) => {
            let parts = split_collection(bytes, "map", 2)?;
            with_type(parts, |i| if i % 2 == 0 { k } else { v })
        }
        CqlType::Tuple(items) => Ok(items
            .iter()
            .zip(split_fields(bytes, items.len())?)
            .collect()),
        CqlType::Udt(udt) => {
            let fields = split_fields(bytes, udt.fields.len())?;
            Ok(udt.fields.iter().map(|(_, t)| t).zip(fields).collect())
        }
        CqlType::Vector(e, n) => with_type(split_vector(e, *n, bytes)?, |_| e),
        CqlType::Frozen(inner) => components(inner, bytes, depth),
        CqlType::Native(_) | CqlType::Custom(_) => Ok(Vec::new()),
    }
}

fn with_type<'a>(
    parts: Vec<&'a [u8]>,
    type_at: impl Fn(usize) -> &'a CqlType,
) -> Result<Parts<'a>, TypeError> {
    Ok(parts
        .into_iter()
        .enumerate()
        .map(|(i, b)| (type_at(i), Some(b)))
        .collect())
}

fn take<'a>(buf: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if buf.len() < n {
        return None;
    }
    let (head, rest) = buf.split_at(n);
    *buf = rest;
    Some(head)
}

fn take_i32(buf: &mut &[u8]) -> Option<i32> {
    take(buf, 4)
        .and_then(|b| b.try_into().ok())
        .map(i32::from_be_bytes)
}

/// v3+ collection layout: i32 count, then `count * per_entry` i32-length-prefixed values.
pub(super) fn split_collection<'a>(
    bytes: &'a [u8],
    kind: &str,
    per_entry: usize,
) -> Result<Vec<&'a [u8]>, TypeError> {
    let short = || TypeError(format!("Not enough bytes to read a {kind}"));
    let mut buf = bytes;
    let count = take_i32(&mut buf).ok_or_else(short)?;
    let total = usize::try_from(count).map_err(|_| short())? * per_entry;
    let mut parts = Vec::new();
    for _ in 0..total {
        let len = take_i32(&mut buf).ok_or_else(short)?;
        let len = usize::try_from(len).map_err(|_| null_element())?;
        parts.push(take(&mut buf, len).ok_or_else(short)?);
    }
    if !buf.is_empty() {
        return Err(TypeError(format!(
            "Unexpected extraneous bytes after {kind} value"
        )));
    }
    Ok(parts)
}

/// Tuple/UDT layout: i32-length-prefixed fields, -1 for null; trailing fields may be absent.
pub(super) fn split_fields(bytes: &[u8], arity: usize) -> Result<Vec<Option<&[u8]>>, TypeError> {
    let mut buf = bytes;
    let mut fields = Vec::with_capacity(arity);
    for i in 0..arity {
        if buf.is_empty() {
            fields.push(None);
            continue;
        }
        let len = take_i32(&mut buf).ok_or_else(|| {
            TypeError(format!("Not enough bytes to read size of {i}th component"))
        })?;
        let field =
            match usize::try_from(len) {
                Ok(len) => Some(take(&mut buf, len).ok_or_else(|| {
                    TypeError(format!("Not enough bytes to read {i}th component"))
                })?),
                Err(_) => None,
            };
        fields.push(field);
    }
    if !buf.is_empty() {
        return Err(TypeError(format!(
            "Expected {arity} components, but got more"
        )));
    }
    Ok(fields)
}

/// Cassandra 5 vector layout: fixed-size elements back to back, others unsigned-vint-prefixed.
fn split_vector<'a>(
    element: &CqlType,
    dimension: u32,
    bytes: &'a [u8],
) -> Result<Vec<&'a [u8]>, TypeError> {
    let short = || TypeError("Not enough bytes to read a vector".into());
    let mut buf = bytes;
    let mut parts = Vec::new();
    for _ in 0..dimension {
        let len = match element.fixed_length() {
            Some(len) => len,
            None => usize::try_from(vint::read_unsigned(&mut buf)?).map_err(|_| short())?,
        };
        parts.push(take(&mut buf, len).ok_or_else(short)?);
    }
    if !buf.is_empty() {
        return Err(TypeError(
            "Unexpected extraneous bytes after vector value".into(),
        ));
    }
    Ok(parts)
}

fn sized(bytes: &[u8], sizes: &[usize], message: &str) -> Result<(), TypeError> {
    if sizes.contains(&bytes.len()) {
        Ok(())
    } else {
        Err(TypeError(format!("{message} ({})", bytes.len())))
    }
}

fn check_native(n: NativeType, b: &[u8]) -> Result<(), TypeError> {
    use NativeType::*;
    match n {
        Ascii => match b.iter().find(|&&c| c > 127) {
            Some(&c) => Err(TypeError(format!("Invalid byte for ascii: {}", c as i8))),
            None => Ok(()),
        },
        Text => std::str::from_utf8(b)
            .map(|_| ())
            .map_err(|_| TypeError("String didn't validate.".into())),
        Blob | Varint => Ok(()),
        Bigint | Counter => sized(b, &[0, 8], "Expected 8 or 0 byte long"),
        Int => sized(b, &[0, 4], "Expected 4 or 0 byte int"),
        Smallint => sized(b, &[2], "Expected 2 bytes for a smallint"),
        Tinyint => sized(b, &[1], "Expected 1 byte for a tinyint"),
        Float => sized(b, &[0, 4], "Expected 4 or 0 byte value for a float"),
        Double => sized(b, &[0, 8], "Expected 8 or 0 byte value for a double"),
        Boolean => sized(b, &[0, 1], "Expected 1 or 0 byte value"),
        Uuid => sized(b, &[0, 16], "UUID should be 16 or 0 bytes"),
        Timeuuid => {
            sized(b, &[0, 16], "UUID should be 16 or 0 bytes")?;
            match b.get(6) {
                Some(v) if v >> 4 != 1 => {
                    Err(TypeError("Invalid version for TimeUUID type.".into()))
                }
                _ => Ok(()),
            }
        }
        Timestamp => sized(b, &[0, 8], "Expected 8 or 0 byte long for date"),
        Date => sized(b, &[4], "Expected 4 byte long for date"),
        Time => sized(b, &[8], "Expected 8 byte long for time"),
        Decimal if !b.is_empty() && b.len() < 4 => Err(TypeError(format!(
            "Expected 0 or at least 4 bytes ({})",
            b.len()
        ))),
        Decimal => Ok(()),
        Inet => match b.len() {
            0 | 4 | 16 => Ok(()),
            _ => Err(TypeError(format!(
                "Expected 4 or 16 byte inetaddress; got 0x{}",
                to_hex(b)
            ))),
        },
        Duration => decode_duration(b).map(|_| ()),
    }
}

fn deserialize_native(n: NativeType, b: &[u8]) -> Result<Value, TypeError> {
    use NativeType as N;
    let string_like = matches!(n, N::Ascii | N::Text | N::Blob);
    if b.is_empty() && n.accepts_empty() && !string_like {
        return Ok(Value::Empty);
    }
    if n != N::Text {
        check_native(n, b)?;
    }
    Ok(match n {
        N::Text => String::from_utf8(b.to_vec())
            .map(Value::Text)
            .map_err(|_| TypeError(format!("Invalid UTF-8 bytes 0x{}", to_hex(b))))?,
        N::Ascii => Value::Ascii(b.iter().map(|&c| char::from(c)).collect()),
        N::Blob => Value::Blob(Bytes::copy_from_slice(b)),
        N::Bigint => Value::Bigint(i64::from_be_bytes(fixed(b)?)),
        N::Counter => Value::Counter(i64::from_be_bytes(fixed(b)?)),
        N::Timestamp => Value::Timestamp(i64::from_be_bytes(fixed(b)?)),
        N::Time => Value::Time(i64::from_be_bytes(fixed(b)?)),
        N::Int => Value::Int(i32::from_be_bytes(fixed(b)?)),
        N::Smallint => Value::Smallint(i16::from_be_bytes(fixed(b)?)),
        N::Tinyint => Value::Tinyint(i8::from_be_bytes(fixed(b)?)),
        N::Float => Value::Float(f32::from_be_bytes(fixed(b)?)),
        N::Double => Value::Double(f64::from_be_bytes(fixed(b)?)),
        N::Date => Value::Date(u32::from_be_bytes(fixed(b)?)),
        N::Boolean => Value::Boolean(b != [0]),
        N::Uuid => Value::Uuid(Uuid::from_bytes(fixed(b)?)),
        N::Timeuuid => Value::Timeuuid(Uuid::from_bytes(fixed(b)?)),
        N::Varint => Value::Varint(BigInt::from_signed_bytes_be(b)),
        N::Decimal => decode_decimal(b)?,
        N::Inet if b.len() == 4 => Value::Inet(IpAddr::V4(Ipv4Addr::from(fixed::<4>(b)?))),
        N::Inet => Value::Inet(IpAddr::V6(Ipv6Addr::from(fixed::<16>(b)?))),
        N::Duration => Value::Duration(decode_duration(b)?),
    })
}

/// i32 scale then the unscaled varint (an absent varint reads as zero).
fn decode_decimal(b: &[u8]) -> Result<Value, TypeError> {
    let (scale, unscaled) = b
        .split_first_chunk::<4>()
        .ok_or_else(|| TypeError(format!("Expected 0 or at least 4 bytes ({})", b.len())))?;
    Ok(Value::Decimal {
        scale: i32::from_be_bytes(*scale),
        unscaled: BigInt::from_signed_bytes_be(unscaled),
    })
}

fn fixed<const N: usize>(b: &[u8]) -> Result<[u8; N], TypeError> {
    b.try_into()
        .map_err(|_| TypeError(format!("Expected {N} bytes ({})", b.len())))
}

fn decode_duration(b: &[u8]) -> Result<Duration, TypeError> {
    if b.len() < 3 {
        return Err(TypeError(format!(
            "Expected at least 3 bytes for a duration ({})",
            b.len()
        )));
    }
    let mut buf = b;
    let months = vint::read_signed(&mut buf)?;
    let days = vint::read_signed(&mut buf)?;
    let nanos = vint::read_signed(&mut buf)?;
    let months = i32::try_from(months).map_err(|_| {
        TypeError(format!(
            "The duration months must be a 32 bits integer but was: {months}"
        ))
    })?;
    let days = i32::try_from(days).map_err(|_| {
        TypeError(format!(
            "The duration days must be a 32 bits integer but was: {days}"
        ))
    })?;
    let all_positive = months >= 0 && days >= 0 && nanos >= 0;
    let all_negative = months <= 0 && days <= 0 && nanos <= 0;
    if !all_positive && !all_negative {
        return Err(TypeError(format!(
            "The duration months, days and nanoseconds must be all of the same sign ({months}, {days}, {nanos})"
        )));
    }
    Ok(Duration {
        months,
        days,
        nanos,
    })
}
