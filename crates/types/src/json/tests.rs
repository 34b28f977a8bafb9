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

/// The `toString()` of the exception Jackson raises for `json` (checked against Cassandra
/// 5.0.4's messages).
fn parse_error(json: &str) -> String {
    match parse(json) {
        Err(e) => e.java_string(),
        Ok(v) => panic!("accepted as {v:?}"),
    }
}

fn map_error(json: &str) -> String {
    match parse_object(json) {
        Err(e) => e.java_string(),
        Ok(v) => panic!("accepted as {v:?}"),
    }
}

/// The first line of the error and the column it names.
fn message_and_column(json: &str) -> (String, String) {
    let e = parse_error(json);
    let column = e.rsplit("column: ").next().unwrap_or("");
    let first = e.split('\n').next().unwrap_or("");
    (first.to_string(), column.trim_end_matches(']').to_string())
}

const PARSE: &str = "com.fasterxml.jackson.core.JsonParseException";
const EOF: &str = "com.fasterxml.jackson.core.io.JsonEOFException";
const VALUES: &str = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')";

#[test]
fn bad_tokens_are_named_as_jackson_names_them() {
    assert_eq!(
        parse_error("not json"),
        format!("{PARSE}: Unrecognized token 'not': was expecting {VALUES}\n at [Source: (String)\"not json\"; line: 1, column: 4]")
    );
    assert_eq!(
        message_and_column(r#"{"k": NaNx}"#),
        (
            format!("{PARSE}: Unrecognized token 'NaNx': was expecting {VALUES}"),
            "11".into()
        )
    );
    assert_eq!(
        message_and_column(r#"{"k": NaN}"#),
        (format!("{PARSE}: Non-standard token 'NaN': enable JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS to allow"), "10".into())
    );
    assert!(parse_error(r#"{"k": -Infinity}"#).contains("Non-standard token '-Infinity'"));
    assert_eq!(
        message_and_column(r#"{"k": 'x'}"#),
        (
            format!(
                "{PARSE}: Unexpected character (''' (code 39)): expected a valid value {VALUES}"
            ),
            "8".into()
        )
    );
    assert_eq!(
        message_and_column(r#"{"k": é}"#),
        (
            format!("{PARSE}: Unrecognized token 'é': was expecting {VALUES}"),
            "8".into()
        )
    );
}

#[test]
fn unfinished_documents_are_end_of_input_errors() {
    assert_eq!(
        parse_error("{"),
        format!("{EOF}: Unexpected end-of-input: expected close marker for Object (start marker at [Source: (String)\"{{\"; line: 1, column: 1])\n at [Source: (String)\"{{\"; line: 1, column: 2]")
    );
    let starts = |json: &str, start: String| {
        let e = parse_error(json);
        assert!(e.starts_with(&start), "{json}: {e}");
    };
    starts(
        r#"{"k""#,
        format!("{EOF}: Unexpected end-of-input within/between Object entries"),
    );
    starts(
        r#"{"k": 1,"#,
        format!("{PARSE}: Unexpected end-of-input within/between Object entries"),
    );
    starts(
        "[1,",
        format!("{PARSE}: Unexpected end-of-input within/between Array entries"),
    );
    starts(
        r#"{"k"#,
        format!("{EOF}: Unexpected end-of-input in field name"),
    );
    starts(
        "-",
        format!("{EOF}: Unexpected end-of-inputNo digit following minus sign"),
    );
    starts(
        "1e",
        format!("{EOF}: Unexpected end-of-inputexpected a digit for number exponent"),
    );
    starts(
        r#""a\u00"#,
        format!("{EOF}: Unexpected end-of-input in character escape sequence"),
    );
    starts(
        r#""abc"#,
        format!("{EOF}: Unexpected end-of-input: was expecting closing quote for a string value"),
    );
}

#[test]
fn bad_numbers_are_located_as_jacksons_fast_and_slow_paths_locate_them() {
    let dot = format!("{PARSE}: Unexpected character ('}}' (code 125)) in numeric value: Decimal point not followed by a digit");
    assert_eq!(
        message_and_column(r#"{"k": 1.}"#),
        (dot.clone(), "9".into())
    );
    assert_eq!(message_and_column(r#"{"k": 0.}"#), (dot, "10".into()));
    let exponent = format!("{PARSE}: Unexpected character ('}}' (code 125)) in numeric value: Exponent indicator not followed by a digit");
    assert_eq!(message_and_column(r#"{"k": 1e+}"#), (exponent, "9".into()));
    assert_eq!(
        message_and_column(r#"{"k": -01}"#),
        (
            format!("{PARSE}: Invalid numeric value: Leading zeroes not allowed"),
            "9".into()
        )
    );
    assert_eq!(
        message_and_column(r#"{"k": +1}"#),
        (format!("{PARSE}: Unexpected character ('1' (code 49)) in numeric value: expected digit (0-9) to follow minus sign, for valid numeric value"), "9".into())
    );
    assert_eq!(
        message_and_column("12a"),
        (format!("{PARSE}: Unexpected character ('a' (code 97)): Expected space separating root-level values"), "4".into())
    );
    assert_eq!(parse("12 a"), Ok(Json::Int(12)));
    assert_eq!(parse("-0"), Ok(Json::Int(0)));
}

#[test]
fn a_close_brace_where_a_value_is_due_depends_on_how_jackson_reads_the_value() {
    let message = |json: &str| message_and_column(json).0;
    let value = format!("{PARSE}: Unexpected character ('}}' (code 125)): expected a value");
    let valid =
        format!("{PARSE}: Unexpected character ('}}' (code 125)): expected a valid value {VALUES}");
    assert_eq!(message(r#"{"a": }"#), value);
    assert_eq!(message(r#"{"a": 1, "b": }"#), valid);
    assert_eq!(message("[1, }"), value);
    assert!(map_error(r#"{"a": }"#).starts_with(&valid));
}

#[test]
fn mismatched_close_markers_name_the_open_one() {
    assert_eq!(
        parse_error(r#"{"k": [1}"#),
        format!("{PARSE}: Unexpected close marker '}}': expected ']' (for Array starting at [Source: (String)\"{{\"k\": [1}}\"; line: 1, column: 7])\n at [Source: (String)\"{{\"k\": [1}}\"; line: 1, column: 10]")
    );
    assert!(parse_error("]")
        .contains("(for root starting at [Source: (String)\"]\"; line: 1, column: 0])"));
}

#[test]
fn locations_count_lines_and_utf16_columns_and_escape_control_characters() {
    assert!(parse_error("\n {\"k\": 1,\n \"v\": x}").ends_with("line: 3, column: 8]"));
    assert!(parse_error("{\"kéé\": 1, \"v\": \"x\\q\"}").ends_with("line: 1, column: 21]"));
    let tab = parse_error("{\"k\": \"a\tb\"}");
    assert!(
        tab.contains("Illegal unquoted character ((CTRL-CHAR, code 9))"),
        "{tab}"
    );
    assert!(
        tab.contains("[Source: (String)\"{\"k\": \"a\\u0009b\"}\""),
        "{tab}"
    );
    let long = format!("[{}x]", "1, ".repeat(200));
    let truncated = parse_error(&long);
    assert!(
        truncated.ends_with("1\"[truncated 103 chars]; line: 1, column: 603]"),
        "{truncated}"
    );
}

#[test]
fn documents_that_are_not_objects_get_databinds_message() {
    assert_eq!(parse_object("null"), Ok(None));
    assert!(map_error("[1,").starts_with(
        "com.fasterxml.jackson.databind.exc.MismatchedInputException: Cannot deserialize value of type `java.util.LinkedHashMap<java.lang.Object,java.lang.Object>` from Array value (token `JsonToken.START_ARRAY`)\n at [Source: (String)\"[1,\"; line: 1, column: 1]"
    ));
    assert!(map_error("\"\"").starts_with(
        "com.fasterxml.jackson.databind.exc.InvalidFormatException: Cannot coerce empty String"
    ));
    assert!(map_error(" \"s\"").ends_with(
        "from String value ('s')\n at [Source: (String)\" \"s\"\"; line: 1, column: 2]"
    ));
    assert_eq!(
        map_error("  "),
        "com.fasterxml.jackson.databind.exc.MismatchedInputException: No content to map due to end-of-input\n at [Source: (String)\"  \"; line: 1, column: 0]"
    );
}

#[test]
fn escaped_lone_surrogates_become_question_marks() {
    assert_eq!(
        parse(r#""\uD83D\uDE00""#),
        Ok(Json::String("\u{1F600}".into()))
    );
    assert_eq!(parse(r#""a\uD83Db""#), Ok(Json::String("a?b".into())));
    assert_eq!(parse(r#""\uDE00""#), Ok(Json::String("?".into())));
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
        (Value::Float(f32::NAN), "null"),
        (Value::Double(f64::NEG_INFINITY), "null"),
        (
            Value::Map(vec![(Value::Double(f64::NAN), Value::Float(f32::INFINITY))]),
            "{\"null\": null}",
        ),
        (
            Value::Tuple(vec![Some(Value::Float(f32::NAN)), Some(Value::Float(1.5))]),
            "[null, 1.5]",
        ),
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
    let udt = CqlType::Udt(Arc::new(UdtType::new(
        "ks",
        "addr",
        vec![
            ("street".into(), native(NativeType::Text)),
            ("Zip".into(), native(NativeType::Int)),
        ],
    )));
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
