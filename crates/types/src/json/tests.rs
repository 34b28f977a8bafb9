use super::*;
use crate::cql_type::{CqlType, NativeType, UdtType};
use crate::value::Value;
use std::sync::Arc;

fn native(n: NativeType) -> CqlType {
    CqlType::Native(n)
}

/// A value's JSON text after reading `json` as `ty`.
fn round_trip(ty: &CqlType, json: &str) -> String {
    let parsed = parse(json).unwrap_or_else(|e| panic!("{e}"));
    let value = from_json(ty, &parsed).unwrap_or_else(|e| panic!("{e}"));
    to_json(value.as_ref())
}

fn error(ty: &CqlType, json: &str) -> String {
    let parsed = parse(json).unwrap_or_else(|e| panic!("{e}"));
    match from_json(ty, &parsed) {
        Err(e) => e.0,
        Ok(v) => panic!("accepted as {v:?}"),
    }
}

#[test]
fn numbers_take_jacksons_classes() {
    assert_eq!(parse("7"), Ok(Json::Int(7)));
    assert_eq!(parse("99999999999"), Ok(Json::Long(99_999_999_999)));
    assert!(matches!(parse("99999999999999999999"), Ok(Json::BigInt(_))));
    assert_eq!(parse("1.0"), Ok(Json::Double(1.0)));
    assert_eq!(parse("1e3"), Ok(Json::Double(1000.0)));
}

#[test]
fn objects_keep_order_and_the_last_of_repeated_keys() {
    let parsed = parse(r#"{"b": 1, "a": [true, null], "b": "x"}"#);
    let expected = Json::Object(vec![
        ("b".into(), Json::String("x".into())),
        ("a".into(), Json::Array(vec![Json::Bool(true), Json::Null])),
    ]);
    assert_eq!(parsed, Ok(expected));
}

#[test]
fn bad_documents_get_jacksons_message() {
    assert_eq!(
        parse("not json"),
        Err("Unrecognized token 'not': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')\n at [Source: (String)\"not json\"; line: 1, column: 4]".into())
    );
    assert!(parse(r#"{"a" 1}"#).is_err());
    assert!(parse("[1,").is_err());
    assert!(parse("\"\\q\"").is_err());
}

#[test]
fn strings_escape_as_jackson_does() {
    assert_eq!(quote_string("a\"b\\c\nd\u{1}é"), r#""a\"b\\c\nd\u0001é""#);
    assert_eq!(parse(r#""\u00e9\n""#), Ok(Json::String("é\n".into())));
}

#[test]
fn scalars_write_cassandras_json_text() {
    let cases: Vec<(Value, &str)> = vec![
        (
            Value::Timestamp(1_704_110_400_123),
            "\"2024-01-01 12:00:00.123Z\"",
        ),
        (Value::Double(1.5e300), "1.5E300"),
        (Value::Float(3.25), "3.25"),
        (
            Value::Blob(bytes::Bytes::from_static(&[0xca, 0xfe])),
            "\"0xcafe\"",
        ),
        (
            Value::Decimal {
                unscaled: 1.into(),
                scale: -3,
            },
            "1E+3",
        ),
        (
            Value::Decimal {
                unscaled: 123_456.into(),
                scale: 3,
            },
            "123.456",
        ),
        (Value::Text("x".into()), "\"x\""),
    ];
    for (value, text) in cases {
        assert_eq!(to_json(Some(&value)), text);
    }
}

#[test]
fn map_keys_are_strings_and_udt_fields_quoted_when_needed() {
    let set = CqlType::Set(Box::new(native(NativeType::Int))).freeze();
    let map = CqlType::Map(
        Box::new(set),
        Box::new(CqlType::List(Box::new(native(NativeType::Int))).freeze()),
    );
    assert_eq!(round_trip(&map, r#"{"[2, 1]": [3]}"#), r#"{"[1, 2]": [3]}"#);
    let udt = CqlType::Udt(Arc::new(UdtType {
        keyspace: "ks".into(),
        name: "addr".into(),
        fields: vec![
            ("street".into(), native(NativeType::Text)),
            ("Zip".into(), native(NativeType::Int)),
        ],
    }));
    assert_eq!(
        round_trip(&udt, r#"{"\"Zip\"": 1}"#),
        r#"{"street": null, "\"Zip\"": 1}"#
    );
    assert_eq!(
        error(&udt, r#"{"zip": 1}"#),
        "Unknown field 'zip' in value of user defined type addr"
    );
}

#[test]
fn collections_given_as_strings_are_decoded_first() {
    let list = CqlType::List(Box::new(native(NativeType::Int)));
    assert_eq!(round_trip(&list, r#""[1, 2]""#), "[1, 2]");
    assert!(
        error(&list, r#""x""#).starts_with("Error decoding JSON string: Unrecognized token 'x'")
    );
    assert_eq!(error(&list, "[null]"), "Invalid null element in list");
}

#[test]
fn odd_cassandra_rules_are_kept() {
    // Jackson reads 1000 as an Integer and TimestampType takes only a Long or a string.
    assert_eq!(
        error(&native(NativeType::Timestamp), "1000"),
        "Expected a long or a datestring representation of a timestamp value, but got a Integer: 1000"
    );
    assert_eq!(
        round_trip(&native(NativeType::Timestamp), "99999999999"),
        "\"1973-03-03 09:46:39.999Z\""
    );
    assert_eq!(
        error(&native(NativeType::Int), "99999999999"),
        "Expected an int value, but got a Long: 99999999999"
    );
    assert_eq!(
        error(&native(NativeType::Smallint), "70000"),
        "Unable to make short from '70000'"
    );
    assert_eq!(
        error(&native(NativeType::Varint), "1.5"),
        "Value '1.5' is not a valid representation of a varint value"
    );
    assert_eq!(
        error(&native(NativeType::Blob), "1"),
        "Value '1' is not a valid blob representation: class java.lang.Integer cannot be cast to class java.lang.String (java.lang.Integer and java.lang.String are in module java.base of loader 'bootstrap')"
    );
    assert_eq!(round_trip(&native(NativeType::Decimal), "1.5e3"), "1500.0");
    assert_eq!(round_trip(&native(NativeType::Int), "\"7\""), "7");
}

#[test]
fn tuples_and_vectors_check_their_sizes() {
    let tuple = CqlType::Tuple(vec![native(NativeType::Int), native(NativeType::Text)]);
    assert_eq!(
        error(&tuple, r#"[1, "a", 3]"#),
        "Tuple contains extra items (expected 2): [1, a, 3]"
    );
    assert_eq!(
        error(&tuple, "[1]"),
        "Tuple is missing items (expected 2): [1]"
    );
    assert_eq!(round_trip(&tuple, r#"[1, null]"#), "[1, null]");
    let vector = CqlType::Vector(Box::new(native(NativeType::Float)), 3);
    assert_eq!(
        error(&vector, "[1, 2]"),
        "List had incorrect size: expected 3 but given 2; [1, 2]"
    );
    assert_eq!(round_trip(&vector, "[1, 2, 3]"), "[1.0, 2.0, 3.0]");
}
