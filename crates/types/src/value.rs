//! CQL values and their serialized (native protocol / on-disk cell) form: encoding,
//! validating decoding, and CQL literal text.
use bytes::Bytes;
use num_bigint::BigInt;
use std::net::IpAddr;
use uuid::Uuid;

pub mod calendar;
mod cql_literal;
pub(crate) use cql_literal::to_hex;
pub use cql_literal::{
    format_duration, java_decimal_string, java_double_string, java_float_string,
};
mod deserialize;
mod element_key;
mod normalize;
mod serialize;
pub mod vint;

#[cfg(test)]
mod tests;

/// A CQL duration: months, days and nanoseconds, each signed, all with the same sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Duration {
    pub months: i32,
    pub days: i32,
    pub nanos: i64,
}

/// A decoded CQL value. Null is represented outside (`Option<Value>`).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Ascii(String),
    Bigint(i64),
    Blob(Bytes),
    Boolean(bool),
    Counter(i64),
    /// Days since the epoch, offset by 2^31 as Cassandra serialises `date`.
    Date(u32),
    Decimal {
        unscaled: BigInt,
        scale: i32,
    },
    Double(f64),
    Duration(Duration),
    Float(f32),
    Inet(IpAddr),
    Int(i32),
    Smallint(i16),
    Text(String),
    /// Nanoseconds since midnight.
    Time(i64),
    /// Milliseconds since the epoch.
    Timestamp(i64),
    Timeuuid(Uuid),
    Tinyint(i8),
    Uuid(Uuid),
    Varint(BigInt),
    List(Vec<Value>),
    Set(Vec<Value>),
    Map(Vec<(Value, Value)>),
    /// Tuple and UDT fields may be null.
    Tuple(Vec<Option<Value>>),
    Udt(Vec<(String, Option<Value>)>),
    Vector(Vec<Value>),
    /// A value of a custom type, carried as bytes.
    Custom(Bytes),
    /// The zero-length value Cassandra accepts for most non-string types (`int`, `uuid`,
    /// `timestamp`, ...): a present cell with no content, distinct from null.
    Empty,
}
