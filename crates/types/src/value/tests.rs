//! Round trips and known byte vectors for the value codecs.
use super::*;
use crate::cql_type::{CqlType, NativeType, UdtType};
use crate::error::TypeError;
use proptest::prelude::*;
use std::sync::Arc;

fn ty(s: &str) -> CqlType {
    let udt = Arc::new(UdtType::new(
        "ks",
        "address",
        vec![
            ("street".into(), CqlType::native(NativeType::Text)),
            ("zip".into(), CqlType::native(NativeType::Int)),
        ],
    ));
    CqlType::parse(s, &|_| Some(udt.clone())).unwrap_or(CqlType::Custom("bad".into()))
}

fn round_trip(t: &str, v: Value) {
    let bytes = v.to_bytes();
    assert_eq!(Value::validate(&ty(t), &bytes), Ok(()), "{t}");
    assert_eq!(Value::deserialize(&ty(t), &bytes), Ok(v), "{t}");
}

fn decode(t: &str, bytes: &[u8]) -> Result<Value, TypeError> {
    let checked = Value::validate(&ty(t), bytes);
    let decoded = Value::deserialize(&ty(t), bytes);
    assert_eq!(checked.is_ok(), decoded.is_ok(), "{t} {bytes:?}");
    decoded
}

fn err(t: &str, bytes: &[u8]) -> String {
    match Value::validate(&ty(t), bytes) {
        Err(TypeError(m)) => m,
        Ok(()) => "accepted".into(),
    }
}

#[test]
fn known_vectors() {
    assert_eq!(
        Value::Varint(BigInt::from(128)).to_bytes().as_ref(),
        [0x00, 0x80]
    );
    assert_eq!(Value::Varint(BigInt::from(-1)).to_bytes().as_ref(), [0xff]);
    assert_eq!(Value::Varint(BigInt::from(0)).to_bytes().as_ref(), [0x00]);
    assert_eq!(
        Value::Varint(BigInt::from(-129)).to_bytes().as_ref(),
        [0xff, 0x7f]
    );
    let decimal = Value::Decimal {
        unscaled: BigInt::from(12345),
        scale: 2,
    };
    assert_eq!(decimal.to_bytes().as_ref(), [0, 0, 0, 2, 0x30, 0x39]);
    assert_eq!(Value::Date(1 << 31).to_bytes().as_ref(), [0x80, 0, 0, 0]);
    let hour = Value::Duration(Duration {
        months: 1,
        days: -0,
        nanos: 3_600_000_000_000,
    });
    // 2 * 3.6e12 = 7.2e12 needs 43 bits: six bytes with prefix 0b111110.
    assert_eq!(
        hour.to_bytes().as_ref(),
        [0x02, 0x00, 0xfc, 0x06, 0x8c, 0x61, 0x71, 0x40, 0x00]
    );
    let list = Value::List(vec![Value::Int(1), Value::Int(2)]);
    assert_eq!(
        list.to_bytes().as_ref(),
        [0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 2]
    );
    let tuple = Value::Tuple(vec![Some(Value::Int(1)), None]);
    assert_eq!(
        tuple.to_bytes().as_ref(),
        [0, 0, 0, 4, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]
    );
    let floats = Value::Vector(vec![Value::Float(1.0), Value::Float(2.0)]);
    assert_eq!(
        floats.to_bytes().as_ref(),
        [0x3f, 0x80, 0, 0, 0x40, 0, 0, 0]
    );
    let texts = Value::Vector(vec![Value::Text("ab".into()), Value::Text(String::new())]);
    assert_eq!(texts.to_bytes().as_ref(), [2, b'a', b'b', 0]);
}

#[test]
fn natives_round_trip() {
    round_trip("ascii", Value::Ascii("abc".into()));
    round_trip("text", Value::Text("héllo".into()));
    round_trip("blob", Value::Blob(Bytes::from_static(&[1, 2, 3])));
    round_trip("boolean", Value::Boolean(true));
    round_trip("counter", Value::Counter(-5));
    round_trip("date", Value::Date(12));
    round_trip(
        "inet",
        Value::Inet("10.0.0.1".parse().unwrap_or(IpAddr::from([0u8; 4]))),
    );
    round_trip(
        "inet",
        Value::Inet("::1".parse().unwrap_or(IpAddr::from([0u8; 4]))),
    );
    round_trip("smallint", Value::Smallint(-300));
    round_trip("tinyint", Value::Tinyint(-3));
    round_trip("time", Value::Time(1));
    round_trip("timestamp", Value::Timestamp(-1));
    round_trip("uuid", Value::Uuid(Uuid::from_u128(7)));
    let v1 = Uuid::from_u128(0x1234_5678_1234_11e0_8000_0000_0000_0001);
    round_trip("timeuuid", Value::Timeuuid(v1));
    round_trip(
        "duration",
        Value::Duration(Duration {
            months: -1,
            days: -2,
            nanos: -3,
        }),
    );
}

#[test]
fn composites_round_trip() {
    round_trip(
        "list<int>",
        Value::List(vec![Value::Int(1), Value::Int(-1)]),
    );
    round_trip("set<text>", Value::Set(vec![Value::Text("a".into())]));
    round_trip(
        "map<text, frozen<list<int>>>",
        Value::Map(vec![(
            Value::Text("k".into()),
            Value::List(vec![Value::Int(3)]),
        )]),
    );
    round_trip(
        "tuple<int, text, uuid>",
        Value::Tuple(vec![
            Some(Value::Int(1)),
            None,
            Some(Value::Uuid(Uuid::nil())),
        ]),
    );
    round_trip(
        "address",
        Value::Udt(vec![
            ("street".into(), Some(Value::Text("x".into()))),
            ("zip".into(), None),
        ]),
    );
    round_trip(
        "vector<float, 2>",
        Value::Vector(vec![Value::Float(1.5), Value::Float(-0.0)]),
    );
    round_trip(
        "vector<text, 2>",
        Value::Vector(vec![Value::Text("a".into()), Value::Text("bcd".into())]),
    );
    round_trip("'a.B'", Value::Custom(Bytes::from_static(b"xyz")));
}

#[test]
fn empty_values() {
    for t in [
        "int",
        "bigint",
        "uuid",
        "timestamp",
        "varint",
        "decimal",
        "inet",
        "boolean",
    ] {
        assert_eq!(decode(t, &[]), Ok(Value::Empty), "{t}");
    }
    assert_eq!(decode("vector<float, 2>", &[]), Ok(Value::Empty));
    assert_eq!(decode("text", &[]), Ok(Value::Text(String::new())));
    assert_eq!(decode("blob", &[]), Ok(Value::Blob(Bytes::new())));
    assert_eq!(
        decode("tuple<int, int>", &[]),
        Ok(Value::Tuple(vec![None, None]))
    );
    for t in [
        "smallint",
        "tinyint",
        "date",
        "time",
        "duration",
        "list<int>",
    ] {
        assert!(decode(t, &[]).is_err(), "{t}");
    }
    assert_eq!(Value::Empty.to_bytes().len(), 0);
}

#[test]
fn cassandra_messages() {
    assert_eq!(err("int", &[1, 2, 3]), "Expected 4 or 0 byte int (3)");
    assert_eq!(err("bigint", &[1]), "Expected 8 or 0 byte long (1)");
    assert_eq!(err("smallint", &[1]), "Expected 2 bytes for a smallint (1)");
    assert_eq!(err("date", &[]), "Expected 4 byte long for date (0)");
    assert_eq!(err("ascii", &[b'a', 0xc3]), "Invalid byte for ascii: -61");
    assert_eq!(err("text", &[0xff]), "String didn't validate.");
    assert_eq!(
        Value::deserialize(&ty("text"), &[0xff]),
        Err(TypeError("Invalid UTF-8 bytes 0xff".into()))
    );
    let v4 = Uuid::from_u128(0x1234_5678_1234_41e0_8000_0000_0000_0001);
    assert_eq!(
        err("timeuuid", v4.as_bytes()),
        "Invalid version for TimeUUID type."
    );
    assert_eq!(
        err("decimal", &[0, 0]),
        "Expected 0 or at least 4 bytes (2)"
    );
    assert_eq!(
        err("inet", &[1, 2]),
        "Expected 4 or 16 byte inetaddress; got 0x0102"
    );
    assert_eq!(
        err("duration", &[2, 1]),
        "Expected at least 3 bytes for a duration (2)"
    );
    assert_eq!(
        err("duration", &[2, 1, 0]),
        "The duration months, days and nanoseconds must be all of the same sign (1, -1, 0)"
    );
    assert_eq!(
        err("list<int>", &[0, 0, 0, 1]),
        "Not enough bytes to read a list"
    );
    assert_eq!(
        err("list<int>", &[0, 0, 0, 0, 9]),
        "Unexpected extraneous bytes after list value"
    );
    assert_eq!(
        err("list<int>", &[0, 0, 0, 1, 0, 0, 0, 3, 1, 2, 3]),
        "Expected 4 or 0 byte int (3)"
    );
    assert_eq!(
        err("list<int>", &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff]),
        "Null value read when not allowed"
    );
    assert_eq!(
        err("map<int, int>", &[0xff, 0xff, 0xff, 0xff]),
        "Not enough bytes to read a map"
    );
    assert_eq!(
        err("tuple<int>", &[0, 0]),
        "Not enough bytes to read size of 0th component"
    );
    assert_eq!(
        err("tuple<int>", &[0, 0, 0, 0, 0, 0, 0, 0]),
        "Expected 1 components, but got more"
    );
    assert_eq!(
        err("vector<float, 2>", &[0; 7]),
        "Not enough bytes to read a vector"
    );
    assert_eq!(
        err("vector<float, 2>", &[0; 9]),
        "Unexpected extraneous bytes after vector value"
    );
}

#[test]
fn literals() {
    assert_eq!(Value::Text("it's".into()).to_cql_literal(), "'it''s'");
    assert_eq!(
        Value::Blob(Bytes::from_static(&[0xca, 0xfe])).to_cql_literal(),
        "0xcafe"
    );
    assert_eq!(
        Value::Timestamp(1_704_164_645_000).to_cql_literal(),
        "'2024-01-02 03:04:05.000000+0000'"
    );
    assert_eq!(
        Value::Date((1 << 31) + 19_724).to_cql_literal(),
        "'2024-01-02'"
    );
    assert_eq!(
        Value::Time(29_574_123_456_789).to_cql_literal(),
        "'08:12:54.123456789'"
    );
    assert_eq!(
        Value::Uuid(Uuid::from_u128(1)).to_cql_literal(),
        "00000000-0000-0000-0000-000000000001"
    );
    assert_eq!(Value::Boolean(false).to_cql_literal(), "false");
    assert_eq!(Value::Double(1.0).to_cql_literal(), "1.0");
    assert_eq!(Value::Double(1e10).to_cql_literal(), "1.0E10");
    assert_eq!(Value::Float(1.5e-5).to_cql_literal(), "1.5E-5");
    assert_eq!(
        Value::Double(f64::NEG_INFINITY).to_cql_literal(),
        "-Infinity"
    );
    assert_eq!(Value::Float(0.25).to_cql_literal(), "0.25");
    let dec = |u: i64, scale| Value::Decimal {
        unscaled: BigInt::from(u),
        scale,
    };
    assert_eq!(dec(12345, 2).to_cql_literal(), "123.45");
    assert_eq!(dec(-5, 3).to_cql_literal(), "-0.005");
    assert_eq!(dec(123, -2).to_cql_literal(), "12300");
    let list = Value::List(vec![Value::Int(1), Value::Int(2)]);
    assert_eq!(list.to_cql_literal(), "[1, 2]");
    assert_eq!(Value::Set(vec![Value::Int(1)]).to_cql_literal(), "{1}");
    let map = Value::Map(vec![(Value::Text("k".into()), Value::Int(1))]);
    assert_eq!(map.to_cql_literal(), "{'k': 1}");
    let tuple = Value::Tuple(vec![Some(Value::Int(1)), None]);
    assert_eq!(tuple.to_cql_literal(), "(1, null)");
    let udt = Value::Udt(vec![("Street".into(), Some(Value::Text("x".into())))]);
    assert_eq!(udt.to_cql_literal(), "{\"Street\": 'x'}");
    let d = |months, days, nanos| {
        Value::Duration(Duration {
            months,
            days,
            nanos,
        })
        .to_cql_literal()
    };
    assert_eq!(d(0, 0, 5_400_000_000_000), "1h30m");
    assert_eq!(d(14, 3, 1), "1y2mo3d1ns");
    assert_eq!(d(-1, 0, -1000), "-1mo1us");
    assert_eq!(d(0, 0, 0), "0s");
    assert_eq!(
        Value::Inet(IpAddr::from([127, 0, 0, 1])).to_cql_literal(),
        "'127.0.0.1'"
    );
}

fn text_strategy() -> impl Strategy<Value = String> {
    ".{0,20}"
}

proptest! {
    #[test]
    fn ints_round_trip(a in any::<i32>(), b in any::<i64>(), c in any::<i16>(), d in any::<i8>()) {
        round_trip("int", Value::Int(a));
        round_trip("bigint", Value::Bigint(b));
        round_trip("smallint", Value::Smallint(c));
        round_trip("tinyint", Value::Tinyint(d));
    }

    #[test]
    fn floats_round_trip(a in any::<f64>().prop_filter("nan", |v| !v.is_nan()), b in any::<f32>().prop_filter("nan", |v| !v.is_nan())) {
        round_trip("double", Value::Double(a));
        round_trip("float", Value::Float(b));
    }

    #[test]
    fn big_numbers_round_trip(digits in "-?[1-9][0-9]{0,40}", scale in any::<i32>()) {
        let n: BigInt = digits.parse().unwrap_or_default();
        round_trip("varint", Value::Varint(n.clone()));
        round_trip("decimal", Value::Decimal { unscaled: n, scale });
    }

    #[test]
    fn durations_round_trip(months in 0..i32::MAX, days in 0..i32::MAX, nanos in 0..i64::MAX, negative in any::<bool>()) {
        let d = if negative { Duration { months: -months, days: -days, nanos: -nanos } } else { Duration { months, days, nanos } };
        round_trip("duration", Value::Duration(d));
    }

    #[test]
    fn strings_and_collections_round_trip(items in prop::collection::vec(text_strategy(), 0..8)) {
        let texts: Vec<Value> = items.iter().cloned().map(Value::Text).collect();
        round_trip("list<text>", Value::List(texts.clone()));
        round_trip("set<text>", Value::Set(texts.clone()));
        let pairs = texts.iter().cloned().zip(items.iter().map(|s| Value::Int(s.len() as i32))).collect();
        round_trip("map<text, int>", Value::Map(pairs));
        let fields = texts.iter().cloned().map(Some).collect::<Vec<_>>();
        let tuple_type = format!("tuple<{}>", vec!["text"; fields.len().max(1)].join(", "));
        if !fields.is_empty() {
            round_trip(&tuple_type, Value::Tuple(fields));
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..40)) {
        for t in ["int", "text", "duration", "list<frozen<map<int, text>>>", "tuple<int, text>", "vector<text, 3>", "vector<int, 2>", "address", "decimal", "inet"] {
            let _ = decode(t, &bytes);
        }
    }
}

/// `frozen<list<...>>` `depth` levels deep around an int, and the value `[[...[7]...]]`.
fn nested_lists(depth: usize) -> (CqlType, Vec<u8>) {
    let mut ty = CqlType::native(NativeType::Int);
    let mut value = Value::Int(7);
    for _ in 0..depth {
        ty = CqlType::List(Box::new(ty)).freeze();
        value = Value::List(vec![value]);
    }
    let bytes = crate::limits::on_worker_stack(|| value.to_bytes().to_vec());
    (ty, bytes)
}

#[test]
fn values_nested_to_the_limit_decode_on_a_worker_stack() {
    let (ty, bytes) = nested_lists(crate::limits::MAX_NESTING);
    let checked = crate::limits::on_worker_stack(|| Value::validate(&ty, &bytes));
    assert_eq!(checked, Ok(()));
    let decoded = crate::limits::on_worker_stack(|| Value::deserialize(&ty, &bytes).is_ok());
    assert!(decoded);
}

#[test]
fn values_nested_past_the_limit_are_refused() {
    let (ty, bytes) = nested_lists(crate::limits::MAX_NESTING + 1);
    let refused = Err(TypeError(
        "Value nested too deeply: collections, tuples, user types and vectors nest at most 100 levels"
            .into(),
    ));
    assert_eq!(Value::validate(&ty, &bytes), refused);
    assert_eq!(Value::deserialize(&ty, &bytes).map(|_| ()), refused);
}
