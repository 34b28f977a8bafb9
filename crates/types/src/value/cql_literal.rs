//! CQL literal text of values, as DESCRIBE and cqlsh print them.
use super::{calendar, Duration, Value};
use crate::cql_type::quote_identifier;
use num_bigint::BigInt;

impl Value {
    /// The value as CQL literal text: `'it''s'`, `0xcafe`, `'2024-01-02 03:04:05.000000+0000'`,
    /// `[1, 2]`, `{'k': 1}`, `(1, null)`, `{street: 'x'}`, `1h30m`. `Empty` prints `null`, as
    /// Cassandra's `toCQLLiteral` does.
    pub fn to_cql_literal(&self) -> String {
        match self {
            Value::Ascii(s) | Value::Text(s) => quote(s),
            Value::Blob(b) | Value::Custom(b) => format!("0x{}", to_hex(b)),
            Value::Boolean(b) => b.to_string(),
            Value::Bigint(v) | Value::Counter(v) => v.to_string(),
            Value::Int(v) => v.to_string(),
            Value::Smallint(v) => v.to_string(),
            Value::Tinyint(v) => v.to_string(),
            Value::Varint(v) => v.to_string(),
            Value::Decimal { unscaled, scale } => plain_decimal(unscaled, *scale),
            Value::Double(v) => java_double_string(*v),
            Value::Float(v) => java_float_string(*v),
            Value::Timestamp(ms) => quote(&calendar::format_timestamp(*ms)),
            Value::Date(d) => quote(&calendar::format_date(i64::from(*d) - calendar::DATE_EPOCH)),
            Value::Time(ns) => quote(&calendar::format_time(*ns)),
            Value::Uuid(u) | Value::Timeuuid(u) => u.hyphenated().to_string(),
            Value::Inet(ip) => quote(&ip.to_string()),
            Value::Duration(d) => format_duration(d),
            Value::List(items) | Value::Vector(items) => format!("[{}]", join(items)),
            Value::Set(items) => format!("{{{}}}", join(items)),
            Value::Map(pairs) => {
                let entries: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{}: {}", k.to_cql_literal(), v.to_cql_literal()))
                    .collect();
                format!("{{{}}}", entries.join(", "))
            }
            Value::Tuple(fields) => {
                let items: Vec<String> = fields.iter().map(|f| optional(f.as_ref())).collect();
                format!("({})", items.join(", "))
            }
            Value::Udt(fields) => {
                let entries: Vec<String> = fields
                    .iter()
                    .map(|(name, f)| {
                        format!("{}: {}", quote_identifier(name), optional(f.as_ref()))
                    })
                    .collect();
                format!("{{{}}}", entries.join(", "))
            }
            Value::Empty => "null".to_string(),
        }
    }
}

pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn optional(value: Option<&Value>) -> String {
    value.map_or_else(|| "null".to_string(), Value::to_cql_literal)
}

fn join(items: &[Value]) -> String {
    let parts: Vec<String> = items.iter().map(Value::to_cql_literal).collect();
    parts.join(", ")
}

/// `unscaled * 10^-scale` without exponent, as Java's `BigDecimal.toPlainString`.
fn plain_decimal(unscaled: &BigInt, scale: i32) -> String {
    let digits = unscaled.magnitude().to_string();
    let sign = if unscaled.sign() == num_bigint::Sign::Minus {
        "-"
    } else {
        ""
    };
    let scale = i64::from(scale);
    if scale <= 0 {
        let zeros = if digits == "0" { 0 } else { -scale };
        return format!("{sign}{digits}{}", "0".repeat(zeros as usize));
    }
    let scale = scale as usize;
    let padded = format!(
        "{}{digits}",
        "0".repeat((scale + 1).saturating_sub(digits.len()))
    );
    let (int_part, frac_part) = padded.split_at(padded.len() - scale);
    format!("{sign}{int_part}.{frac_part}")
}

/// Java's `Double.toString`: `1.0`, `0.001`, `1.0E7`, `1.5E-5`, `NaN`, `Infinity`.
pub fn java_double_string(v: f64) -> String {
    java_float(v, v.to_string(), format!("{v:e}"))
}

/// Java's `Float.toString` (shortest digits of the `float`).
pub fn java_float_string(v: f32) -> String {
    java_float(f64::from(v), v.to_string(), format!("{v:e}"))
}

/// Java's `BigDecimal.toString`: plain digits while the scale is not negative and the
/// adjusted exponent is at least -6, else scientific (`1E+3`, `1.23E-7`).
pub fn java_decimal_string(unscaled: &BigInt, scale: i32) -> String {
    let digits = unscaled.magnitude().to_string();
    let sign = if unscaled.sign() == num_bigint::Sign::Minus {
        "-"
    } else {
        ""
    };
    let adjusted = digits.len() as i64 - 1 - i64::from(scale);
    if scale >= 0 && adjusted >= -6 {
        return plain_decimal(unscaled, scale);
    }
    let (first, rest) = digits.split_at(1);
    let mantissa = if rest.is_empty() {
        first.to_string()
    } else {
        format!("{first}.{rest}")
    };
    let exp_sign = if adjusted >= 0 { "+" } else { "" };
    format!("{sign}{mantissa}E{exp_sign}{adjusted}")
}

/// Java's `Double.toString` shape from Rust's shortest digits: `1.0`, `0.001`, `1.0E7`,
/// `1.5E-5`, `NaN`, `Infinity`.
fn java_float(v: f64, plain: String, scientific: String) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let magnitude = v.abs();
    if magnitude == 0.0 || (1e-3..1e7).contains(&magnitude) {
        return if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        };
    }
    match scientific.split_once('e') {
        Some((mantissa, exp)) if mantissa.contains('.') => format!("{mantissa}E{exp}"),
        Some((mantissa, exp)) => format!("{mantissa}.0E{exp}"),
        None => scientific,
    }
}

/// Cassandra's `Duration.toString`: `1y2mo3d4h5m6s7ms8us9ns`, `-` in front when negative.
/// A zero duration prints `0s` (Cassandra prints nothing, which does not parse back).
pub fn format_duration(d: &Duration) -> String {
    if d.months == 0 && d.days == 0 && d.nanos == 0 {
        return "0s".into();
    }
    let mut out = String::new();
    if d.months < 0 || d.days < 0 || d.nanos < 0 {
        out.push('-');
    }
    let months = i128::from(d.months).abs();
    let rest = append(&mut out, months, 12, "y");
    append(&mut out, rest, 1, "mo");
    append(&mut out, i128::from(d.days).abs(), 1, "d");
    let mut rest = i128::from(d.nanos).abs();
    for (unit, name) in [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ] {
        rest = append(&mut out, rest, unit, name);
    }
    out
}

fn append(out: &mut String, dividend: i128, divisor: i128, unit: &str) -> i128 {
    if dividend < divisor {
        return dividend;
    }
    out.push_str(&format!("{}{unit}", dividend / divisor));
    dividend % divisor
}
