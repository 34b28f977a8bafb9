//! Each type's reading of a decoded JSON value (Cassandra's `fromJSONObject`), with its
//! messages, including the odd ones (`"ts": 1000` is refused because Jackson decodes 1000 as
//! an `Integer` and only a `Long` is taken as milliseconds).
use super::{parse, Json};
use crate::comparable::compare;
use crate::cql_type::{CqlType, NativeType, UdtType};
use crate::error::TypeError;
use crate::literal::{from_string, parse_literal, LiteralKind};
use crate::value::Value;
use num_bigint::BigInt;
use std::cmp::Ordering;

/// `json` as a value of `ty`; `Ok(None)` for JSON `null`.
pub fn from_json(ty: &CqlType, json: &Json) -> Result<Option<Value>, TypeError> {
    if *json == Json::Null {
        return Ok(None);
    }
    match ty.unfrozen() {
        CqlType::Native(n) => native(*n, json).map(Some),
        CqlType::List(elem) => elements(elem, json, "list").map(|v| Some(Value::List(v))),
        CqlType::Set(elem) => set(elem, json).map(Some),
        CqlType::Map(k, v) => map(k, v, json).map(Some),
        CqlType::Tuple(types) => tuple(types, json).map(Some),
        CqlType::Udt(udt) => user_type(udt, json).map(Some),
        CqlType::Vector(elem, n) => vector(elem, *n, json).map(Some),
        CqlType::Custom(_) => match json {
            Json::String(s) => parse_literal(ty, LiteralKind::Hex, s).map(Some),
            other => Err(expected("a string", other)),
        },
        CqlType::Frozen(_) => Err(TypeError("unexpected frozen type".into())),
    }
}

fn expected(what: &str, got: &Json) -> TypeError {
    TypeError(format!(
        "Expected {what}, but got a {}: {}",
        got.class_name(),
        got.java_string()
    ))
}

fn from_text(n: NativeType, text: &str) -> Result<Value, TypeError> {
    from_string(n, text)
}

fn native(n: NativeType, json: &Json) -> Result<Value, TypeError> {
    use NativeType as N;
    match (n, json) {
        (_, Json::String(s)) if n != N::Blob && n != N::Ascii && n != N::Text => from_text(n, s),
        (N::Text, Json::String(s)) => Ok(Value::Text(s.clone())),
        (N::Text, other) => Err(expected("a UTF-8 string", other)),
        (N::Ascii, Json::String(s)) if s.is_ascii() => Ok(Value::Ascii(s.clone())),
        (N::Ascii, Json::String(_)) => Err(TypeError(
            "Invalid ASCII character in string literal: java.nio.charset.UnmappableCharacterException: Input length = 1".into(),
        )),
        (N::Ascii, other) => Err(expected("an ascii string", other)),
        (N::Blob, json) => blob(json),
        (N::Int, Json::Int(v)) => Ok(Value::Int(*v)),
        (N::Int, other) => Err(expected("an int value", other)),
        (N::Bigint | N::Counter, json) => bigint(n, json),
        (N::Smallint | N::Tinyint, json @ (Json::Int(_) | Json::Long(_) | Json::BigInt(_) | Json::Double(_))) => {
            from_text(n, &json.java_string())
        }
        (N::Varint, json) => varint(json),
        (N::Decimal, json) => decimal(json),
        (N::Float, json) => float(json).map(|v| Value::Float(v as f32)),
        (N::Double, json) => float(json).map(Value::Double),
        (N::Boolean, Json::Bool(b)) => Ok(Value::Boolean(*b)),
        (N::Boolean, other) => Err(expected("a boolean value", other)),
        (N::Timestamp, Json::Long(v)) => Ok(Value::Timestamp(*v)),
        (N::Timestamp, other) => Err(expected(
            "a long or a datestring representation of a timestamp value",
            other,
        )),
        (N::Date, other) => Err(expected("a string representation of a date value", other)),
        (N::Time, other) => Err(expected("a string representation of a time value", other)),
        (N::Duration, other) => Err(expected("a string representation of a duration", other)),
        (N::Inet, other) => Err(expected("a string representation of an inet value", other)),
        (N::Uuid | N::Timeuuid, other) => Err(expected("a string representation of a uuid", other)),
        (N::Smallint, other) => Err(expected("a short value", other)),
        (N::Tinyint, other) => Err(expected("a byte value", other)),
    }
}

fn blob(json: &Json) -> Result<Value, TypeError> {
    let invalid = |reason: String| {
        TypeError(format!(
            "Value '{}' is not a valid blob representation: {reason}",
            json.java_string()
        ))
    };
    let Json::String(s) = json else {
        return Err(invalid(format!(
            "class java.lang.{0} cannot be cast to class java.lang.String (java.lang.{0} and java.lang.String are in module java.base of loader 'bootstrap')",
            json.class_name()
        )));
    };
    if !s.starts_with("0x") {
        return Err(invalid(format!(
            "String representation of blob is missing 0x prefix: {s}"
        )));
    }
    parse_literal(&CqlType::Native(NativeType::Blob), LiteralKind::Hex, s).map_err(|e| invalid(e.0))
}

fn bigint(n: NativeType, json: &Json) -> Result<Value, TypeError> {
    let v = match json {
        Json::Int(v) => i64::from(*v),
        Json::Long(v) => *v,
        other => return Err(expected("a bigint value", other)),
    };
    Ok(if n == NativeType::Counter {
        Value::Counter(v)
    } else {
        Value::Bigint(v)
    })
}

fn varint(json: &Json) -> Result<Value, TypeError> {
    let text = json.java_string();
    let parsed = match json {
        Json::Int(_) | Json::Long(_) | Json::BigInt(_) | Json::Double(_) => {
            text.parse::<BigInt>().ok()
        }
        _ => None,
    };
    parsed.map(Value::Varint).ok_or_else(|| {
        TypeError(format!(
            "Value '{text}' is not a valid representation of a varint value"
        ))
    })
}

fn decimal(json: &Json) -> Result<Value, TypeError> {
    let text = json.java_string();
    let numeric = matches!(
        json,
        Json::Int(_) | Json::Long(_) | Json::BigInt(_) | Json::Double(_)
    );
    let parsed = numeric
        .then(|| from_string(NativeType::Decimal, &text).ok())
        .flatten();
    parsed.ok_or_else(|| {
        TypeError(format!(
            "Value '{text}' is not a valid representation of a decimal value"
        ))
    })
}

/// A JSON number as a Java `double` (`Number.doubleValue()`).
fn float(json: &Json) -> Result<f64, TypeError> {
    match json {
        Json::Int(v) => Ok(f64::from(*v)),
        Json::Long(v) => Ok(*v as f64),
        Json::BigInt(v) => Ok(v.to_string().parse().unwrap_or(f64::INFINITY)),
        Json::Double(v) => Ok(*v),
        other => Err(expected("a float value", other)),
    }
}

/// A collection given as a string holds its own JSON text.
fn decoded(json: &Json) -> Result<std::borrow::Cow<'_, Json>, TypeError> {
    match json {
        Json::String(s) => parse(s)
            .map(std::borrow::Cow::Owned)
            .map_err(|e| TypeError(format!("Error decoding JSON string: {e}"))),
        other => Ok(std::borrow::Cow::Borrowed(other)),
    }
}

fn elements(elem: &CqlType, json: &Json, what: &str) -> Result<Vec<Value>, TypeError> {
    let json = decoded(json)?;
    let Json::Array(items) = json.as_ref() else {
        return Err(expected(&format!("a {what}"), &json));
    };
    items
        .iter()
        .map(|item| {
            from_json(elem, item)?
                .ok_or_else(|| TypeError(format!("Invalid null element in {what}")))
        })
        .collect()
}

fn set(elem: &CqlType, json: &Json) -> Result<Value, TypeError> {
    let mut items = elements(elem, json, "set")?;
    sort_dedup(elem, &mut items, |v| v);
    Ok(Value::Set(items))
}

/// Sorts by the type's order and drops repeats (the last of equal keys wins, as a later
/// entry replaces an earlier one in Cassandra's maps).
fn sort_dedup<T>(ty: &CqlType, items: &mut Vec<T>, key: impl Fn(&T) -> &Value) {
    let mut keyed: Vec<(bytes::Bytes, T)> =
        items.drain(..).map(|t| (key(&t).to_bytes(), t)).collect();
    keyed.reverse();
    keyed.sort_by(|a, b| compare(ty, &a.0, &b.0));
    keyed.dedup_by(|b, a| compare(ty, &a.0, &b.0) == Ordering::Equal);
    items.extend(keyed.into_iter().map(|(_, t)| t));
}

fn map(key_ty: &CqlType, value_ty: &CqlType, json: &Json) -> Result<Value, TypeError> {
    let json = decoded(json)?;
    let Json::Object(entries) = json.as_ref() else {
        return Err(expected("a map", &json));
    };
    let mut pairs = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        // Keys are strings, read by the key type as strings (collections and UDTs parse them).
        let key = from_json(key_ty, &Json::String(k.clone()))?
            .ok_or_else(|| TypeError("Invalid null key in map".into()))?;
        let value =
            from_json(value_ty, v)?.ok_or_else(|| TypeError("Invalid null value in map".into()))?;
        pairs.push((key, value));
    }
    sort_dedup(key_ty, &mut pairs, |p| &p.0);
    Ok(Value::Map(pairs))
}

fn tuple(types: &[CqlType], json: &Json) -> Result<Value, TypeError> {
    let json = decoded(json)?;
    let Json::Array(items) = json.as_ref() else {
        return Err(expected("a list representation of a tuple", &json));
    };
    let shown = json.java_string();
    if items.len() > types.len() {
        return Err(TypeError(format!(
            "Tuple contains extra items (expected {}): {shown}",
            types.len()
        )));
    }
    if items.len() < types.len() {
        return Err(TypeError(format!(
            "Tuple is missing items (expected {}): {shown}",
            types.len()
        )));
    }
    let fields = types
        .iter()
        .zip(items)
        .map(|(t, item)| from_json(t, item))
        .collect::<Result<_, _>>()?;
    Ok(Value::Tuple(fields))
}

/// A UDT field name as a JSON key: quoted keys are taken as written, others lower-cased.
fn field_name(key: &str) -> String {
    match key.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
        Some(quoted) if key.len() >= 2 => quoted.replace("\"\"", "\""),
        _ => key.to_lowercase(),
    }
}

fn user_type(udt: &UdtType, json: &Json) -> Result<Value, TypeError> {
    let json = decoded(json)?;
    let Json::Object(entries) = json.as_ref() else {
        return Err(expected("a map", &json));
    };
    let mut given: Vec<(String, &Json)> = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        let name = field_name(key);
        if !udt.fields.iter().any(|(f, _)| *f == name) {
            return Err(TypeError(format!(
                "Unknown field '{name}' in value of user defined type {}",
                udt.name
            )));
        }
        given.push((name, value));
    }
    let mut fields = Vec::with_capacity(udt.fields.len());
    for (name, ty) in &udt.fields {
        let value = match given.iter().find(|(n, _)| n == name) {
            Some((_, json)) => from_json(ty, json)?,
            None => None,
        };
        fields.push((name.clone(), value));
    }
    Ok(Value::Udt(fields))
}

fn vector(elem: &CqlType, dimension: u32, json: &Json) -> Result<Value, TypeError> {
    let shown = decoded(json)?.java_string();
    let items = elements(elem, json, "list")?;
    if items.len() != dimension as usize {
        return Err(TypeError(format!(
            "List had incorrect size: expected {dimension} but given {}; {shown}",
            items.len()
        )));
    }
    Ok(Value::Vector(items))
}
