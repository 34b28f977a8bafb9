//! Native functions against the answers of Cassandra 5.0.4 (each expected value below was
//! read from a reference node).
use std::sync::Arc;

use types::literal::LiteralKind;
use types::{CqlError, CqlType, NativeType, Value};

use super::{resolve, Arg, ArgKind, CallName, Env, Function};

fn native(n: NativeType) -> CqlType {
    CqlType::Native(n)
}

fn named(name: &str) -> CallName<'_> {
    CallName {
        keyspace: None,
        name,
    }
}

fn column(ty: NativeType) -> Arg {
    Arg::typed("c", native(ty))
}

fn literal(kind: LiteralKind, text: &str) -> Arg {
    Arg {
        text: text.into(),
        kind: ArgKind::Literal(kind, text.into()),
    }
}

fn function(name: &str, args: &[Arg]) -> Arc<Function> {
    resolve(&named(name), args, None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Calls `f` on values and decodes its result with its return type.
fn call(f: &Function, args: &[Value]) -> Result<Option<Value>, CqlError> {
    let bytes: Vec<_> = args.iter().map(|v| Some(v.to_bytes())).collect();
    let env = Env {
        now_micros: 1_700_000_000_000_000,
    };
    let out = f.call(&bytes, &env)?;
    Ok(out.map(|b| Value::deserialize(&f.ret, &b).unwrap_or_else(|e| panic!("{e}"))))
}

fn decimal(text: &str) -> Value {
    types::literal::from_string(NativeType::Decimal, text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_string_of_ascii_characters_prefers_ascii() {
    let ascii = function(
        "_add",
        &[column(NativeType::Ascii), literal(LiteralKind::String, "y")],
    );
    assert_eq!(ascii.ret, native(NativeType::Ascii));
    let text = function(
        "_add",
        &[column(NativeType::Text), literal(LiteralKind::String, "x")],
    );
    assert_eq!(text.ret, native(NativeType::Text));
    let accented = function(
        "_add",
        &[column(NativeType::Ascii), literal(LiteralKind::String, "é")],
    );
    assert_eq!(accented.ret, native(NativeType::Text));
}

#[test]
fn dates_are_not_bigints_so_date_minus_date_is_refused() {
    let args = [
        Arg::typed("system.currentdate()", native(NativeType::Date)),
        Arg::typed("system.currentdate()", native(NativeType::Date)),
    ];
    let refused = resolve(&named("_substract"), &args, None).map(|_| ());
    assert_eq!(
        refused,
        Err(CqlError::invalid(
            "the '-' operation is not supported between system.currentdate() and system.currentdate()"
        ))
    );
}

#[test]
fn a_timestamp_casts_to_int_through_bigint_or_varint_ambiguously() {
    let refused = resolve(
        &named("cast_as_int"),
        &[column(NativeType::Timestamp)],
        None,
    );
    let Err(CqlError::Invalid(message)) = refused else {
        panic!("{refused:?}");
    };
    assert!(
        message.starts_with("Ambiguous call to function cast_as_int"),
        "{message}"
    );
}

#[test]
fn decimal_division_keeps_32_digits_rounded_half_up_without_trailing_zeros() {
    let divide = function(
        "_divide",
        &[column(NativeType::Decimal), column(NativeType::Decimal)],
    );
    let quotient = |a: &str, b: &str| call(&divide, &[decimal(a), decimal(b)]);
    assert_eq!(quotient("10.50", "3"), Ok(Some(decimal("3.5"))));
    assert_eq!(
        quotient("1", "3"),
        Ok(Some(decimal("0.33333333333333333333333333333333")))
    );
    assert_eq!(
        quotient("2", "-3"),
        Ok(Some(decimal("-0.66666666666666666666666666666667")))
    );
    assert_eq!(quotient("100", "1"), Ok(Some(decimal("1E+2"))));
}

#[test]
fn decimals_by_zero_fail_with_javas_words() {
    let decimals = [column(NativeType::Decimal), column(NativeType::Decimal)];
    let failure =
        |name: &str, a: &str| match call(&function(name, &decimals), &[decimal(a), decimal("0")]) {
            Err(CqlError::FunctionFailure { message, .. }) => message,
            other => format!("{other:?}"),
        };
    assert!(failure("_divide", "1").ends_with("failed: BigInteger divide by zero"));
    assert!(failure("_modulo", "1").ends_with("failed: Division by zero"));
    assert!(failure("_modulo", "0.0").ends_with("failed: Division undefined"));
}

#[test]
fn integers_meet_decimals_as_their_double_value() {
    let multiply = function(
        "_multiply",
        &[column(NativeType::Decimal), column(NativeType::Int)],
    );
    assert_eq!(
        call(&multiply, &[decimal("10.50"), Value::Int(2)]),
        Ok(Some(decimal("21.000")))
    );
}

#[test]
fn casts_to_decimal_follow_each_source_type() {
    let cast = |ty: NativeType, v: Value| call(&function("cast_as_decimal", &[column(ty)]), &[v]);
    assert_eq!(
        cast(NativeType::Bigint, Value::Bigint(i64::MIN)),
        Ok(Some(decimal("-9223372036854775808")))
    );
    assert_eq!(
        cast(NativeType::Float, Value::Float(1.1)),
        Ok(Some(decimal("1.1")))
    );
    assert_eq!(
        cast(NativeType::Double, Value::Double(0.1)),
        Ok(Some(decimal("0.1")))
    );
    let nan = cast(NativeType::Double, Value::Double(f64::NAN));
    assert!(
        matches!(&nan, Err(CqlError::Server(m)) if m.contains("Character N is neither")),
        "{nan:?}"
    );
}

#[test]
fn timestamps_cast_to_text_with_milliseconds() {
    let cast = function("cast_as_text", &[column(NativeType::Timestamp)]);
    assert_eq!(
        call(&cast, &[Value::Timestamp(1_711_879_200_000)]),
        Ok(Some(Value::Text("2024-03-31T10:00:00.000Z".into())))
    );
}

#[test]
fn nothing_casts_text_to_ascii() {
    let refused = resolve(&named("cast_as_ascii"), &[column(NativeType::Text)], None);
    assert!(
        matches!(refused, Err(CqlError::Invalid(m)) if m.starts_with("Invalid call to function cast_as_ascii"))
    );
}

#[test]
fn to_date_counts_days_towards_zero() {
    let to_date = function("todate", &[column(NativeType::Timestamp)]);
    let epoch = 1u32 << 31;
    assert_eq!(
        call(&to_date, &[Value::Timestamp(-1)]),
        Ok(Some(Value::Date(epoch)))
    );
    assert_eq!(
        call(&to_date, &[Value::Timestamp(86_400_000)]),
        Ok(Some(Value::Date(epoch + 1)))
    );
}

#[test]
fn min_and_max_timeuuid_bound_a_millisecond() {
    let min = function("mintimeuuid", &[column(NativeType::Timestamp)]);
    let max = function("maxtimeuuid", &[column(NativeType::Timestamp)]);
    let text = |f: &Function| match call(f, &[Value::Timestamp(0)]) {
        Ok(Some(Value::Timeuuid(u))) => u.to_string(),
        other => panic!("{other:?}"),
    };
    assert_eq!(text(&min), "13814000-1dd2-11b2-8080-808080808080");
    assert_eq!(text(&max), "1381670f-1dd2-11b2-7f7f-7f7f7f7f7f7f");
}

#[test]
fn masks_of_timeuuids_are_reported_as_the_legacy_custom_type() {
    let mask = function("mask_default", &[column(NativeType::Timeuuid)]);
    assert_eq!(mask.ret, native(NativeType::Timeuuid));
    assert_eq!(
        mask.reported_type(),
        &CqlType::Custom("org.apache.cassandra.db.marshal.LegacyTimeUUIDType".into())
    );
    let now = uuid::Uuid::from_bytes(crate::exec::timeuuid(1_700_000_000_000_000));
    let default = call(&mask, &[Value::Timeuuid(now)]);
    assert!(
        matches!(&default, Ok(Some(Value::Timeuuid(u))) if u.to_string() == "13814000-1dd2-11b2-8080-808080808080")
    );
    let min = function("min", &[column(NativeType::Timeuuid)]);
    assert!(matches!(min.reported_type(), CqlType::Custom(_)));
    assert_eq!(
        function("mask_default", &[column(NativeType::Int)]).reported_type(),
        &native(NativeType::Int)
    );
}

#[test]
fn inner_and_outer_masks_pad_their_part() {
    let text = |v: &str| Value::Text(v.into());
    let args = [
        column(NativeType::Text),
        column(NativeType::Int),
        column(NativeType::Int),
    ];
    let inner = function("mask_inner", &args);
    let outer = function("mask_outer", &args);
    let masked = |f: &Function| call(f, &[text("hello"), Value::Int(1), Value::Int(2)]);
    assert_eq!(masked(&inner), Ok(Some(text("h**lo"))));
    assert_eq!(masked(&outer), Ok(Some(text("*el**"))));
    let padding = [
        column(NativeType::Text),
        column(NativeType::Int),
        column(NativeType::Int),
        literal(LiteralKind::String, "##"),
    ];
    let refused = resolve(&named("mask_inner"), &padding, None).map(|_| ());
    assert_eq!(
        refused,
        Err(CqlError::invalid(
            "The padding argument for function system.mask_inner should be single-character, but '##' has 2 characters."
        ))
    );
}

#[test]
fn vector_literals_are_float_vectors_of_their_length() {
    let vector = CqlType::Vector(Box::new(native(NativeType::Float)), 3);
    let args = [
        Arg::typed("v", vector.clone()),
        Arg {
            text: "[1, 2]".into(),
            kind: ArgKind::ListLiteral(2),
        },
    ];
    assert_eq!(
        resolve(&named("similarity_cosine"), &args, None).map(|_| ()),
        Err(CqlError::invalid(
            "All arguments must have the same vector dimensions"
        ))
    );
    let cosine = function("similarity_cosine", &[args[0].clone(), args[0].clone()]);
    let floats = |v: &[f32]| Value::Vector(v.iter().map(|f| Value::Float(*f)).collect());
    assert_eq!(
        call(
            &cosine,
            &[floats(&[1.0, 2.0, 2.0]), floats(&[1.0, 2.0, 3.0])]
        ),
        Ok(Some(Value::Float(0.989_978_9)))
    );
    assert_eq!(
        call(
            &cosine,
            &[floats(&[1.0, 2.0, 2.0]), floats(&[0.0, 0.0, 0.0])]
        ),
        Err(CqlError::invalid(
            "Function system.similarity_cosine doesn't support all-zero vectors."
        ))
    );
}

#[test]
fn collection_functions_read_maps_and_numeric_lists() {
    let map = CqlType::Map(
        Box::new(native(NativeType::Text)),
        Box::new(native(NativeType::Int)),
    );
    let pairs = Value::Map(vec![
        (Value::Text("k1".into()), Value::Int(5)),
        (Value::Text("k2".into()), Value::Int(-1)),
    ]);
    let keys = function("map_keys", &[Arg::typed("m", map.clone())]);
    assert_eq!(
        call(&keys, std::slice::from_ref(&pairs)),
        Ok(Some(Value::Set(vec![
            Value::Text("k1".into()),
            Value::Text("k2".into())
        ])))
    );
    let list = CqlType::List(Box::new(native(NativeType::Int)));
    let avg = function("collection_avg", &[Arg::typed("l", list)]);
    let numbers = Value::List(vec![Value::Int(3), Value::Int(1), Value::Int(2)]);
    assert_eq!(call(&avg, &[numbers]), Ok(Some(Value::Int(2))));
    let refused = resolve(
        &named("map_keys"),
        &[Arg::typed(
            "l",
            CqlType::List(Box::new(native(NativeType::Int))),
        )],
        None,
    );
    assert_eq!(
        refused.map(|_| ()),
        Err(CqlError::invalid(
            "Function system.map_keys requires a map argument, but found argument l of type list<int>"
        ))
    );
}

#[test]
fn decimal_logs_of_zero_or_less_fail_as_cassandra_does() {
    let log = function("log", &[column(NativeType::Decimal)]);
    assert_eq!(
        call(&log, &[decimal("0")]),
        Err(CqlError::Server(
            "java.lang.ArithmeticException: Natural log of number zero or less".into()
        ))
    );
}

/// A varint goes through `DecimalType` at its own precision (at least 32 digits) and keeps
/// the integer part: `log10` of 41 nines is 41.000… there, so 41.
#[test]
fn varint_exp_and_logs_are_big_maths_integer_parts() {
    let varint = |text: &str| Value::Varint(text.parse().unwrap_or_else(|e| panic!("{e}")));
    super::bigmath::tests::warm_ln10();
    for (name, arg, expected) in [
        ("exp", "100", "26881171418161354484126255515800000000000000"),
        ("exp", "-1", "0"),
        ("log", "1000", "6"),
        ("log10", "1000", "3"),
        ("log10", "99999999999999999999999999999999999999999", "41"),
    ] {
        let f = function(name, &[column(NativeType::Varint)]);
        assert_eq!(
            call(&f, &[varint(arg)]),
            Ok(Some(varint(expected))),
            "{name}({arg})"
        );
    }
    let exp = function("exp", &[column(NativeType::Varint)]);
    assert_eq!(
        call(&exp, &[varint("3000000000")]),
        Err(CqlError::Server(
            "java.lang.ArithmeticException: Overflow".into()
        ))
    );
}

#[test]
fn decimal_exp_and_logs_keep_big_maths_digits() {
    let exp = function("exp", &[column(NativeType::Decimal)]);
    assert_eq!(
        call(&exp, &[decimal("1000")]),
        Ok(Some(decimal("1.9700711140170469938888793522433E+434")))
    );
    let log10 = function("log10", &[column(NativeType::Decimal)]);
    super::bigmath::tests::warm_ln10();
    assert_eq!(call(&log10, &[decimal("1")]), Ok(Some(decimal("0E+33"))));
    assert_eq!(
        call(&exp, &[decimal("1E-100001")]),
        Err(CqlError::invalid(
            "exp() of a number below 1E-100000 is not computed"
        ))
    );
}

#[test]
fn integer_sums_wrap_and_averages_truncate() {
    let sum = function("sum", &[column(NativeType::Int)]);
    let avg = function("avg", &[column(NativeType::Int)]);
    let fold = |f: &Function, values: &[i32]| {
        let mut acc = f
            .accumulator()
            .unwrap_or_else(|| panic!("not an aggregate"));
        for v in values {
            acc.add(&[Some(Value::Int(*v))])
                .unwrap_or_else(|e| panic!("{e}"));
        }
        acc.result().unwrap_or_else(|e| panic!("{e}"))
    };
    assert_eq!(fold(&sum, &[i32::MAX, 1]), Some(Value::Int(i32::MIN)));
    assert_eq!(fold(&avg, &[i32::MAX, 1]), Some(Value::Int(1_073_741_824)));
    assert_eq!(fold(&avg, &[]), Some(Value::Int(0)));
}

#[test]
fn unknown_functions_are_named_as_written() {
    let refused = resolve(
        &CallName {
            keyspace: Some("SYSTEM"),
            name: "NoSuch",
        },
        &[],
        None,
    );
    assert_eq!(
        refused.map(|_| ()),
        Err(CqlError::invalid("Unknown function 'system.nosuch'"))
    );
}
