use super::*;

const JAN2_2024: i64 = 1_704_153_600_000;

fn refused(s: &str) -> Result<i64, TypeError> {
    Err(TypeError(format!("Unable to parse a date/time from '{s}'")))
}

#[test]
fn formats_without_a_named_zone() {
    let at = JAN2_2024 + ((3 * 60 + 4) * 60 + 5) * 1000;
    for s in [
        "2024-01-02 03:04:05",
        "2024-01-02T03:04:05",
        "2024-01-02 03:04:05+0000",
        "2024-01-02 03:04:05Z",
        "2024-01-02T03:04:05+00:00",
        "2024-01-02 03:04:05 UTC",
        "2024-01-02 04:04:05+01",
        "2024-01-02 01:04:05 -0200",
        "2024-01-02T04:04:05 GMT+01:00",
    ] {
        assert_eq!(parse_timestamp(s), Ok(at), "{s}");
    }
    assert_eq!(parse_timestamp("2024-01-02"), Ok(JAN2_2024));
    let minutes = JAN2_2024 + 184 * 60_000;
    assert_eq!(parse_timestamp("2024-01-02 03:04"), Ok(minutes));
    assert_eq!(parse_timestamp("2024-1-2 3:4"), Ok(minutes));
    for (s, millis) in [
        ("2024-01-02 00:00:00.123", 123),
        ("2024-01-02 00:00:00.5", 500),
        ("2024-01-02 00:00:00.05", 50),
        ("2024-01-02 00:00:00.", 0),
        ("2024-01-02T00:00:00.123456789Z", 123),
        ("2024-01-02+0100", -3_600_000),
    ] {
        assert_eq!(parse_timestamp(s), Ok(JAN2_2024 + millis), "{s}");
    }
    assert_eq!(parse_timestamp("-5"), Ok(-5));
    assert!(parse_timestamp("now").is_ok_and(|t| t > JAN2_2024));
}

/// Values Cassandra 5.0.4 gives (TimestampSerializer on Java 17): its SMART resolving, the
/// ISO_DATE forms, offsets with seconds.
#[test]
fn java_resolving() {
    for (s, expected) in [
        ("2024-02-30", 1709164800000),
        ("2024-02-31 00:00", 1709164800000),
        ("2024-01-02 24:00", 1704240000000),
        ("2024-12-31 24:00:00.0", 1735689600000),
        ("2024-001-02 003:04", 1704164640000),
        ("24-1-2 3:4:5.1", -61409739354900),
        ("+10000-01-02", 253402387200000),
        ("-0001-01-01", -62198755200000),
        ("0000-01-02+01:00", -62167136400000),
        ("2024-01-02+01:00:30", 1704149970000),
        ("2024-01-02 03:04 UTC+01:00", 1704161040000),
        ("2024-01-02 03:04 UT+05:30", 1704144840000),
        ("2024-01-02 03:04 +01:00:30", 1704161010000),
        ("2024-01-02 03:04 -00:00:01", 1704164641000),
        ("2024-01-02 03:04 GMT-18:00", 1704229440000),
        ("2024-01-02 03:04 GMT0", 1704164640000),
    ] {
        assert_eq!(parse_timestamp(s), Ok(expected), "{s}");
    }
}

#[test]
fn refusals() {
    for s in [
        "2024-13-01",
        "2024-02-32",
        "2024-01-02 24:01",
        "2024-01-02 24:00:00.1",
        "2024-01-02 23:60",
        "abc",
        "2024-01-02 03",
        "2024-01-02 03:04.5",
        "2024-01-02 00:00:00.1234567891",
        "2024-01-02 00:00:00.12x",
        "2024-1-2",
        "24-01-02",
        "10000-01-02",
        "+2024-01-02",
        "0000-01-02 03:04",
        "0000-01-02 PST",
        "-0000-01-01",
        "1000000000-01-01 00:00",
        "2024-01-02 00000000000000000003:04",
        "2024-01-02 03:04 GMT+01",
        "2024-01-02 03:04 UTC0",
        "2024-01-02 03:04 +18:30",
        "2024-01-02 03:04+01:00:30",
        "2024-01-02 03:04 pst",
        "2024-01-02 03:04  PST",
        "2024-01-02 03:04 PST ",
        "2024-01-02 03:04 Etc/GMT+1",
        "2024-01-02PST",
        "-999999999-01-01+01:00",
    ] {
        assert_eq!(parse_timestamp(s), refused(s), "{s}");
    }
    assert_eq!(
        parse_timestamp("99999999999999999999"),
        Err(TypeError(
            "Unable to make long (for date) from: '99999999999999999999'".into()
        ))
    );
}

#[test]
fn past_long_milliseconds_is_javas_overflow() {
    let overflow = Err(TypeError(LONG_OVERFLOW.into()));
    for s in [
        "292278995-01-02 03:04",
        "999999999-01-02 03:04 PST",
        "+999999999-12-31",
        "-999999999-01-01",
    ] {
        assert_eq!(parse_timestamp(s), overflow, "{s}");
    }
    assert_eq!(
        parse_timestamp("292278994-01-02 03:04"),
        Ok(9_223_372_017_227_040_000)
    );
}

proptest::proptest! {
    /// Any text made of a timestamp's characters (and a few others) parses or is refused,
    /// never panics.
    #[test]
    fn any_text_parses_or_is_refused(text in "[0-9 :T.+\\-ZGMTUCPSéA-Za-z/_]{0,40}") {
        let _ = parse_timestamp(&text);
        let _ = parse_timestamp(&format!("2024-01-02 03:04{text}"));
        let _ = parse_timestamp(&format!("2024-01-02 03:04 {text}"));
    }
}
