//! Literal conversion cases, following Cassandra's assignment rules and messages.
use super::*;
use num_bigint::BigInt;

fn native(n: NativeType) -> CqlType {
    CqlType::native(n)
}

fn parse(n: NativeType, kind: LiteralKind, text: &str) -> Result<Value, TypeError> {
    parse_literal(&native(n), kind, text)
}

fn err(n: NativeType, kind: LiteralKind, text: &str) -> String {
    match parse(n, kind, text) {
        Err(TypeError(m)) => m,
        Ok(v) => format!("accepted {v:?}"),
    }
}

use LiteralKind as K;
use NativeType as N;

#[test]
fn integers_to_numeric_types() {
    assert_eq!(parse(N::Int, K::Integer, "-7"), Ok(Value::Int(-7)));
    assert_eq!(
        parse(N::Bigint, K::Integer, "9223372036854775807"),
        Ok(Value::Bigint(i64::MAX))
    );
    assert_eq!(parse(N::Counter, K::Integer, "3"), Ok(Value::Counter(3)));
    assert_eq!(
        parse(N::Smallint, K::Integer, "-32768"),
        Ok(Value::Smallint(i16::MIN))
    );
    assert_eq!(parse(N::Tinyint, K::Integer, "5"), Ok(Value::Tinyint(5)));
    assert_eq!(
        parse(N::Varint, K::Integer, "123456789012345678901234567890").map(|v| v.to_cql_literal()),
        Ok("123456789012345678901234567890".into())
    );
    assert_eq!(parse(N::Double, K::Integer, "2"), Ok(Value::Double(2.0)));
    assert_eq!(parse(N::Float, K::Integer, "2"), Ok(Value::Float(2.0)));
    assert_eq!(
        parse(N::Decimal, K::Integer, "10"),
        Ok(Value::Decimal {
            unscaled: BigInt::from(10),
            scale: 0
        })
    );
    assert_eq!(
        parse(N::Timestamp, K::Integer, "1000"),
        Ok(Value::Timestamp(1000))
    );
    assert_eq!(
        parse(N::Date, K::Integer, "2147483648"),
        Ok(Value::Date(1 << 31))
    );
    assert_eq!(parse(N::Time, K::Integer, "5"), Ok(Value::Time(5)));
    assert_eq!(
        err(N::Int, K::Integer, "2147483648"),
        "Unable to make int from '2147483648'"
    );
    assert_eq!(
        err(N::Tinyint, K::Integer, "128"),
        "Unable to make byte from '128'"
    );
    assert_eq!(
        err(N::Smallint, K::Integer, "40000"),
        "Unable to make short from '40000'"
    );
    assert_eq!(
        err(N::Duration, K::Integer, "5"),
        "Unable to convert '5' to a duration"
    );
}

#[test]
fn floats() {
    assert_eq!(
        parse(N::Double, K::Float, "1.5e2"),
        Ok(Value::Double(150.0))
    );
    assert_eq!(
        parse(N::Float, K::Float, "-Infinity"),
        Ok(Value::Float(f32::NEG_INFINITY))
    );
    assert!(matches!(parse(N::Double, K::Float, "NaN"), Ok(Value::Double(v)) if v.is_nan()));
    assert_eq!(
        parse(N::Decimal, K::Float, "1.50"),
        Ok(Value::Decimal {
            unscaled: BigInt::from(150),
            scale: 2
        })
    );
    assert_eq!(
        err(N::Decimal, K::Float, "Infinity"),
        "unable to make BigDecimal from 'Infinity'"
    );
    assert_eq!(
        err(N::Int, K::Float, "1.5"),
        "Invalid FLOAT constant (1.5) for type int"
    );
}

#[test]
fn strings() {
    assert_eq!(
        parse(N::Text, K::String, "héllo"),
        Ok(Value::Text("héllo".into()))
    );
    assert_eq!(
        parse(N::Ascii, K::String, "abc"),
        Ok(Value::Ascii("abc".into()))
    );
    assert_eq!(
        err(N::Ascii, K::String, "é"),
        "Invalid ASCII character in string literal: é"
    );
    assert_eq!(
        parse(N::Timestamp, K::String, "1970-01-01 00:00:01+0000"),
        Ok(Value::Timestamp(1000))
    );
    assert_eq!(
        parse(N::Timestamp, K::String, "1000"),
        Ok(Value::Timestamp(1000))
    );
    assert_eq!(parse(N::Timestamp, K::String, ""), Ok(Value::Empty));
    assert_eq!(
        err(N::Timestamp, K::String, "xyz"),
        "Unable to parse a date/time from 'xyz'"
    );
    assert_eq!(
        parse(N::Date, K::String, "1970-01-02"),
        Ok(Value::Date((1 << 31) + 1))
    );
    assert_eq!(
        parse(N::Time, K::String, "00:00:01"),
        Ok(Value::Time(1_000_000_000))
    );
    assert_eq!(
        parse(N::Inet, K::String, "::1"),
        Ok(Value::Inet("::1".parse().unwrap_or(IpAddr::from([0u8; 4]))))
    );
    assert_eq!(
        parse(N::Inet, K::String, "10.1.2.3"),
        Ok(Value::Inet(IpAddr::from([10, 1, 2, 3])))
    );
    assert_eq!(
        err(N::Inet, K::String, "host"),
        "Unable to make inet address from 'host'"
    );
    assert_eq!(
        err(N::Int, K::String, "1"),
        "Invalid STRING constant (1) for type int"
    );
    assert_eq!(
        err(N::Uuid, K::String, "x"),
        "Invalid STRING constant (x) for type uuid"
    );
    assert_eq!(
        err(N::Blob, K::String, "x"),
        "Invalid STRING constant (x) for type blob"
    );
    assert_eq!(
        err(N::Duration, K::String, "1h"),
        "Invalid STRING constant (1h) for type duration"
    );
}

#[test]
fn uuids_booleans_hex_durations() {
    let v1 = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";
    let v4 = "550e8400-e29b-41d4-a716-446655440000";
    assert!(matches!(parse(N::Uuid, K::Uuid, v4), Ok(Value::Uuid(_))));
    assert!(matches!(
        parse(N::Timeuuid, K::Uuid, v1),
        Ok(Value::Timeuuid(_))
    ));
    assert_eq!(
        err(N::Timeuuid, K::Uuid, v4),
        "TimeUUID supports only version 1 UUIDs"
    );
    assert_eq!(
        parse(N::Boolean, K::Boolean, "TRUE"),
        Ok(Value::Boolean(true))
    );
    assert_eq!(
        err(N::Text, K::Boolean, "true"),
        "Invalid BOOLEAN constant (true) for type text"
    );
    assert_eq!(
        parse(N::Blob, K::Hex, "0xCAfe"),
        Ok(Value::Blob(Bytes::from_static(&[0xca, 0xfe])))
    );
    assert_eq!(parse(N::Blob, K::Hex, "0x"), Ok(Value::Blob(Bytes::new())));
    assert_eq!(
        err(N::Blob, K::Hex, "0xabc"),
        "cannot parse 'abc' as hex bytes"
    );
    assert_eq!(
        err(N::Int, K::Hex, "0x01"),
        "Invalid HEX constant (0x01) for type int"
    );
    assert_eq!(
        parse(N::Duration, K::Duration, "1h30m").map(|v| v.to_cql_literal()),
        Ok("1h30m".into())
    );
}

#[test]
fn composite_and_custom_targets() {
    let list = CqlType::List(Box::new(native(N::Int)));
    assert_eq!(
        parse_literal(&list, K::Integer, "1"),
        Err(TypeError(
            "Invalid INTEGER constant (1) for type list<int>".into()
        ))
    );
    let custom = CqlType::Custom("com.example.T".into());
    assert_eq!(
        parse_literal(&custom, K::Hex, "0x01"),
        Ok(Value::Custom(Bytes::from_static(&[1])))
    );
    assert!(parse_literal(&custom, K::String, "x").is_err());
    assert!(is_assignable(&custom, K::Integer));
    assert!(!is_assignable(&native(N::Boolean), K::Integer));
}

#[test]
fn floats_a_double_does_not_hold_exactly_prefer_decimal() {
    for text in [
        "1.5",
        "0.1",
        "1e10",
        "1.10",
        "-2.5E-3",
        "0.0e-5000",
        "NaN",
        "-Infinity",
    ] {
        assert!(!float_needs_decimal(text), "{text}");
    }
    for text in [
        "12345678901234567890.123",
        "0.1000000000000000000001",
        "1e400",
        "1e-400",
    ] {
        assert!(float_needs_decimal(text), "{text}");
    }
}
