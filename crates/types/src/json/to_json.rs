//! Each type's JSON text, as Cassandra's `toJSONString` writes it.
use crate::value::calendar::{format_date, format_time, DATE_EPOCH, MILLIS_PER_DAY};
use crate::value::{
    format_duration, java_decimal_string, java_double_string, java_float_string, to_hex, Value,
};

/// The JSON text of a value: numbers and booleans bare, everything else that is not a
/// collection as a JSON string; lists, sets, vectors and tuples as arrays; maps and UDTs as
/// objects (map keys that are not strings hold their own JSON text as a string; UDT field
/// names are keyed as `json_key` says). `None` (null) is `null`.
pub fn to_json(value: Option<&Value>) -> String {
    let mut out = String::new();
    write(&mut out, value);
    out
}

/// A column or field name as a key of Cassandra's JSON objects: in double quotes when it
/// has upper-case letters (`"Zip"` becomes `\"Zip\"` once quoted), as it is otherwise
/// (`a b`, `select`, `system.tojson(c)`).
pub fn json_key(name: &str) -> String {
    if name.to_lowercase() == name {
        name.to_string()
    } else {
        format!("\"{name}\"")
    }
}

/// `s` as a JSON string literal, escaped as Jackson escapes it (quote, backslash and control
/// characters; everything else as is).
pub fn quote_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_quoted(&mut out, s);
    out
}

fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write(out: &mut String, value: Option<&Value>) {
    let Some(value) = value else {
        out.push_str("null");
        return;
    };
    match value {
        Value::List(items) | Value::Set(items) | Value::Vector(items) => {
            write_array(out, items.iter().map(Some))
        }
        Value::Tuple(fields) => write_array(out, fields.iter().map(Option::as_ref)),
        Value::Map(pairs) => {
            out.push('{');
            for (i, (k, v)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                push_key(out, &to_json(Some(k)));
                write(out, Some(v));
            }
            out.push('}');
        }
        Value::Udt(fields) => {
            out.push('{');
            for (i, (name, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                push_quoted(out, &json_key(name));
                out.push_str(": ");
                write(out, v.as_ref());
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar_json(scalar)),
    }
}

fn write_array<'a>(out: &mut String, items: impl Iterator<Item = Option<&'a Value>>) {
    out.push('[');
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write(out, item);
    }
    out.push(']');
}

/// A map key: already a JSON string stays as is; other JSON text becomes a string.
fn push_key(out: &mut String, key_json: &str) {
    if key_json.starts_with('"') {
        out.push_str(key_json);
    } else {
        push_quoted(out, key_json);
    }
    out.push_str(": ");
}

fn scalar_json(value: &Value) -> String {
    match value {
        Value::Ascii(s) | Value::Text(s) => quote_string(s),
        Value::Bigint(v) | Value::Counter(v) => v.to_string(),
        Value::Int(v) => v.to_string(),
        Value::Smallint(v) => v.to_string(),
        Value::Tinyint(v) => v.to_string(),
        Value::Varint(v) => v.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Decimal { unscaled, scale } => java_decimal_string(unscaled, *scale),
        // JSON has no NaN nor infinities: Cassandra writes them as null, at any depth.
        Value::Double(v) if !v.is_finite() => "null".into(),
        Value::Float(v) if !v.is_finite() => "null".into(),
        Value::Double(v) => java_double_string(*v),
        Value::Float(v) => java_float_string(*v),
        Value::Blob(b) | Value::Custom(b) => quote_string(&format!("0x{}", to_hex(b))),
        Value::Timestamp(ms) => quote_string(&json_timestamp(*ms)),
        Value::Date(d) => quote_string(&format_date(i64::from(*d) - DATE_EPOCH)),
        Value::Time(ns) => quote_string(&format_time(*ns)),
        Value::Duration(d) => quote_string(&format_duration(d)),
        Value::Uuid(u) | Value::Timeuuid(u) => quote_string(&u.hyphenated().to_string()),
        Value::Inet(ip) => quote_string(&java_inet(ip)),
        _ => "null".into(),
    }
}

/// `2024-01-01 12:00:00.123Z`: Cassandra's JSON form of a timestamp, always in UTC.
pub fn json_timestamp(millis: i64) -> String {
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let in_day = millis.rem_euclid(MILLIS_PER_DAY);
    format!(
        "{} {:02}:{:02}:{:02}.{:03}Z",
        format_date(days),
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

/// Java's `InetAddress.getHostAddress`: IPv6 as eight unpadded hex groups, never `::`.
pub fn java_inet(ip: &std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => {
            let groups: Vec<String> = v6.segments().iter().map(|g| format!("{g:x}")).collect();
            groups.join(":")
        }
    }
}
