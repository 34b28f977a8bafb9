//! JSON as Cassandra reads and writes it for `SELECT JSON`, `INSERT JSON`, `toJson()` and
//! `fromJson()`: a parser that reads as Jackson does (its number classes `Integer`, `Long`,
//! `BigInteger`, `Double`, its errors), each type's JSON text (`to_json`) and each type's
//! reading of a parsed JSON value (`from_json`), with Cassandra's messages.
use num_bigint::BigInt;

mod error;
mod from_json;
mod parse;
#[cfg(test)]
mod tests;
mod to_json;

pub use error::JsonError;
pub use from_json::from_json;
pub use parse::{parse, parse_object};
pub use to_json::{java_inet, json_key, json_timestamp, quote_string, to_json};

/// A parsed JSON value. Objects keep their keys in document order (a repeated key keeps its
/// first place and its last value, as a `LinkedHashMap` does).
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// A whole number that fits Java's `int`.
    Int(i32),
    /// A whole number that fits Java's `long` but not `int`.
    Long(i64),
    /// A whole number beyond `long`.
    BigInt(BigInt),
    /// A number with a fraction or an exponent.
    Double(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The Java class Jackson decodes the value into, as Cassandra's messages name it.
    pub fn class_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "Boolean",
            Json::Int(_) => "Integer",
            Json::Long(_) => "Long",
            Json::BigInt(_) => "BigInteger",
            Json::Double(_) => "Double",
            Json::String(_) => "String",
            Json::Array(_) => "ArrayList",
            Json::Object(_) => "LinkedHashMap",
        }
    }

    /// Java's `toString()` of the decoded value: `1.0`, `[1, a, 3]`, `{a=1}`.
    pub fn java_string(&self) -> String {
        match self {
            Json::Null => "null".into(),
            Json::Bool(b) => b.to_string(),
            Json::Int(v) => v.to_string(),
            Json::Long(v) => v.to_string(),
            Json::BigInt(v) => v.to_string(),
            Json::Double(v) => crate::value::java_double_string(*v),
            Json::String(s) => s.clone(),
            Json::Array(items) => {
                let parts: Vec<String> = items.iter().map(Json::java_string).collect();
                format!("[{}]", parts.join(", "))
            }
            Json::Object(entries) => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.java_string()))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
        }
    }
}
