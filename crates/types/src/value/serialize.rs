//! Encoding values into Cassandra's serialized cell form (the content of a protocol `[bytes]`).
use super::{vint, Duration, Value};
use crate::cql_type::NativeType;
use bytes::Bytes;
use std::net::IpAddr;

impl Value {
    /// Appends the serialized form: big-endian fixed-size numbers, minimal two's complement
    /// varints, v3+ collections, length-prefixed tuple/UDT fields, Cassandra 5 vectors.
    pub fn serialize(&self, out: &mut Vec<u8>) {
        match self {
            Value::Ascii(s) | Value::Text(s) => out.extend_from_slice(s.as_bytes()),
            Value::Blob(b) | Value::Custom(b) => out.extend_from_slice(b),
            Value::Bigint(v) | Value::Counter(v) | Value::Time(v) | Value::Timestamp(v) => {
                out.extend_from_slice(&v.to_be_bytes())
            }
            Value::Boolean(b) => out.push(u8::from(*b)),
            Value::Date(d) => out.extend_from_slice(&d.to_be_bytes()),
            Value::Decimal { unscaled, scale } => {
                out.extend_from_slice(&scale.to_be_bytes());
                out.extend_from_slice(&unscaled.to_signed_bytes_be());
            }
            Value::Double(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Float(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Duration(d) => serialize_duration(d, out),
            Value::Inet(IpAddr::V4(ip)) => out.extend_from_slice(&ip.octets()),
            Value::Inet(IpAddr::V6(ip)) => out.extend_from_slice(&ip.octets()),
            Value::Int(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Smallint(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Tinyint(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Uuid(u) | Value::Timeuuid(u) => out.extend_from_slice(u.as_bytes()),
            Value::Varint(v) => out.extend_from_slice(&v.to_signed_bytes_be()),
            Value::List(items) | Value::Set(items) => {
                put_count(out, items.len());
                items.iter().for_each(|v| put_prefixed(out, Some(v)));
            }
            Value::Map(pairs) => {
                put_count(out, pairs.len());
                for (k, v) in pairs {
                    put_prefixed(out, Some(k));
                    put_prefixed(out, Some(v));
                }
            }
            Value::Tuple(fields) => fields.iter().for_each(|f| put_prefixed(out, f.as_ref())),
            Value::Udt(fields) => fields
                .iter()
                .for_each(|(_, f)| put_prefixed(out, f.as_ref())),
            Value::Vector(items) => items.iter().for_each(|v| put_vector_element(out, v)),
            Value::Empty => {}
        }
    }

    pub fn to_bytes(&self) -> Bytes {
        let mut out = Vec::new();
        self.serialize(&mut out);
        Bytes::from(out)
    }

    /// The native type a non-collection value belongs to (`None` for collections, tuples,
    /// UDTs, vectors, custom and empty values).
    pub fn cql_type_of_native(&self) -> Option<NativeType> {
        use NativeType as N;
        Some(match self {
            Value::Ascii(_) => N::Ascii,
            Value::Bigint(_) => N::Bigint,
            Value::Blob(_) => N::Blob,
            Value::Boolean(_) => N::Boolean,
            Value::Counter(_) => N::Counter,
            Value::Date(_) => N::Date,
            Value::Decimal { .. } => N::Decimal,
            Value::Double(_) => N::Double,
            Value::Duration(_) => N::Duration,
            Value::Float(_) => N::Float,
            Value::Inet(_) => N::Inet,
            Value::Int(_) => N::Int,
            Value::Smallint(_) => N::Smallint,
            Value::Text(_) => N::Text,
            Value::Time(_) => N::Time,
            Value::Timestamp(_) => N::Timestamp,
            Value::Timeuuid(_) => N::Timeuuid,
            Value::Tinyint(_) => N::Tinyint,
            Value::Uuid(_) => N::Uuid,
            Value::Varint(_) => N::Varint,
            _ => return None,
        })
    }
}

fn serialize_duration(d: &Duration, out: &mut Vec<u8>) {
    vint::write_signed(out, i64::from(d.months));
    vint::write_signed(out, i64::from(d.days));
    vint::write_signed(out, d.nanos);
}

/// Sizes in the i32 fields of the format; a cell can never approach 2 GiB.
fn to_i32(len: usize) -> i32 {
    i32::try_from(len).unwrap_or(i32::MAX)
}

fn put_count(out: &mut Vec<u8>, count: usize) {
    out.extend_from_slice(&to_i32(count).to_be_bytes());
}

/// An i32 length then the value, or -1 for null.
fn put_prefixed(out: &mut Vec<u8>, value: Option<&Value>) {
    let Some(value) = value else {
        out.extend_from_slice(&(-1i32).to_be_bytes());
        return;
    };
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    value.serialize(out);
    let len = to_i32(out.len() - start - 4);
    out[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

/// Fixed-size elements are concatenated; the others carry an unsigned vint length.
fn put_vector_element(out: &mut Vec<u8>, value: &Value) {
    let fixed = value
        .cql_type_of_native()
        .and_then(NativeType::fixed_length)
        .is_some();
    if fixed {
        value.serialize(out);
    } else {
        let bytes = value.to_bytes();
        vint::write_unsigned(out, bytes.len() as u64);
        out.extend_from_slice(&bytes);
    }
}
