//! Timestamp, date and time text as Cassandra's `TimestampSerializer`, `SimpleDateSerializer`
//! and `TimeSerializer` read it.
use crate::error::TypeError;
use crate::value::calendar::{days_from_civil, days_in_month, DATE_EPOCH, MILLIS_PER_DAY};
use std::time::{SystemTime, UNIX_EPOCH};

const NANOS_PER_DAY: i64 = 86_400_000_000_000;

fn is_integer(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Milliseconds since the epoch: `now`, a number of milliseconds, or
/// `yyyy-mm-dd[( |T)HH:MM[:SS[.fff]]][zone]` where zone is `Z`, `+HH`, `+HHMM`, `+HH:MM`,
/// or a space then `UTC`/`GMT`/an offset. No zone means UTC.
pub fn parse_timestamp(s: &str) -> Result<i64, TypeError> {
    if s.eq_ignore_ascii_case("now") {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        return Ok(i64::try_from(now.as_millis()).unwrap_or(i64::MAX));
    }
    if is_integer(s) {
        return s
            .parse::<i64>()
            .map_err(|_| TypeError(format!("Unable to make long (for date) from: '{s}'")));
    }
    formatted_timestamp(s)
        .ok_or_else(|| TypeError(format!("Unable to parse a date/time from '{s}'")))
}

fn formatted_timestamp(s: &str) -> Option<i64> {
    let mut cursor = Cursor(s);
    let year = cursor.number(1, 9)?;
    cursor.literal("-")?;
    let month = cursor.number(1, 2)?;
    cursor.literal("-")?;
    let day = cursor.number(1, 2)?;
    let mut millis = date_days(year, month, day)? * MILLIS_PER_DAY;
    if cursor
        .literal(" ")
        .or_else(|| cursor.literal("T"))
        .is_some()
    {
        match clock_millis(&mut cursor) {
            Some(ms) => millis += ms,
            None => return None,
        }
    }
    let offset = zone_offset_minutes(cursor.0)?;
    Some(millis - offset * 60_000)
}

/// `HH:MM[:SS[.fffffffff]]` as milliseconds: up to nine fraction digits, a decimal fraction
/// of the second cut to milliseconds (`.5` is 500 ms), as Cassandra 5.0's
/// `DateTimeFormatter` reads them.
fn clock_millis(cursor: &mut Cursor<'_>) -> Option<i64> {
    let hour = cursor.number(1, 2).filter(|&h| h < 24)?;
    cursor.literal(":")?;
    let minute = cursor.number(1, 2).filter(|&m| m < 60)?;
    let mut millis = (hour * 60 + minute) * 60_000;
    if cursor.literal(":").is_some() {
        millis += cursor.number(1, 2).filter(|&s| s < 60)? * 1000;
        if cursor.literal(".").is_some() {
            millis += fraction_millis(cursor)?;
        }
    }
    Some(millis)
}

/// Zero to nine digits of a fraction of a second, as whole milliseconds.
fn fraction_millis(cursor: &mut Cursor<'_>) -> Option<i64> {
    let len = cursor.0.bytes().take_while(u8::is_ascii_digit).count();
    if len > 9 {
        return None;
    }
    let (digits, rest) = cursor.0.split_at(len);
    cursor.0 = rest;
    let millis = format!("{digits:0<3}");
    millis[..3].parse().ok()
}

/// The zone suffix as minutes east of UTC.
fn zone_offset_minutes(zone: &str) -> Option<i64> {
    let named = zone.strip_prefix(' ');
    let zone = named.unwrap_or(zone);
    match zone {
        "" if named.is_none() => Some(0),
        "Z" => Some(0),
        "UTC" | "GMT" if named.is_some() => Some(0),
        _ => {
            let numeric = zone
                .strip_prefix("GMT")
                .filter(|_| named.is_some())
                .unwrap_or(zone);
            numeric_offset(numeric)
        }
    }
}

/// `+HH`, `+HHMM` or `+HH:MM` (or `-`).
fn numeric_offset(s: &str) -> Option<i64> {
    let sign = match s.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = s[1..].chars().filter(|&c| c != ':').collect();
    let colon_ok = match s[1..].find(':') {
        Some(i) => i == 2 && s.len() == 6,
        None => true,
    };
    if !colon_ok || !(digits.len() == 2 || digits.len() == 4) {
        return None;
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours: i64 = digits[..2].parse().ok()?;
    let minutes: i64 = digits
        .get(2..)
        .filter(|m| !m.is_empty())
        .map_or(Some(0), |m| m.parse().ok())?;
    (hours < 24 && minutes < 60).then_some(sign * (hours * 60 + minutes))
}

fn date_days(year: i64, month: i64, day: i64) -> Option<i64> {
    let month = u32::try_from(month).ok().filter(|m| (1..=12).contains(m))?;
    let day = u32::try_from(day)
        .ok()
        .filter(|&d| d >= 1 && d <= days_in_month(year, month))?;
    Some(days_from_civil(year, month, day))
}

/// A `date` value (days since the epoch plus 2^31): `yyyy-mm-dd` (strict ISO, signed years
/// beyond four digits) or a raw unsigned day number.
pub fn parse_date(s: &str) -> Result<u32, TypeError> {
    if is_integer(s) {
        return s.parse::<u32>().map_err(|_| {
            TypeError(format!(
                "Unable to make unsigned int (for date) from: '{s}'"
            ))
        });
    }
    let days = iso_date(s)
        .ok_or_else(|| TypeError(format!("Unable to coerce '{s}' to a formatted date (long)")))?;
    u32::try_from(days + DATE_EPOCH).map_err(|_| {
        let side = if days < 0 {
            "less than min"
        } else {
            "greater than max"
        };
        TypeError(format!("Input date {s} is {side} supported date"))
    })
}

fn iso_date(s: &str) -> Option<i64> {
    let (sign, body) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => (1, s),
    };
    let mut cursor = Cursor(body);
    let year_digits = body.find('-')?;
    let signed_ok = if sign == 1 && !s.starts_with('+') {
        year_digits == 4
    } else {
        year_digits >= 4
    };
    if !signed_ok {
        return None;
    }
    let year = cursor.number(4, 9)? * sign;
    cursor.literal("-")?;
    let month = cursor.number(2, 2)?;
    cursor.literal("-")?;
    let day = cursor.number(2, 2)?;
    if !cursor.0.is_empty() {
        return None;
    }
    date_days(year, month, day)
}

/// Nanoseconds since midnight: a raw number in `0..86400000000000` or `hh:mm:ss[.fffffffff]`.
pub fn parse_time(s: &str) -> Result<i64, TypeError> {
    if is_integer(s) {
        return s
            .parse::<i64>()
            .ok()
            .filter(|n| (0..NANOS_PER_DAY).contains(n))
            .ok_or_else(|| TypeError(format!("Unable to make long (for time) from: '{s}'")));
    }
    clock_nanos(s.trim()).ok_or_else(|| {
        TypeError(format!(
            "(TimeType) Unable to coerce '{s}' to a formatted time (long)"
        ))
    })
}

fn clock_nanos(s: &str) -> Option<i64> {
    let mut parts = s.splitn(3, ':');
    let hour = java_int(parts.next()?).filter(|h| (0..24).contains(h))?;
    let minute = java_int(parts.next()?).filter(|m| (0..60).contains(m))?;
    let rest = parts.next().filter(|r| !r.is_empty())?;
    let (seconds, fraction) = match rest.split_once('.') {
        Some((sec, frac)) => (sec, Some(frac)),
        None => (rest, None),
    };
    let second = java_int(seconds).filter(|s| (0..60).contains(s))?;
    let nanos = match fraction {
        None => 0,
        Some(f) if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) => {
            return None
        }
        Some(f) => format!("{f:0<9}").parse::<i64>().ok()?,
    };
    Some(((hour * 60 + minute) * 60 + second) * 1_000_000_000 + nanos)
}

/// Java's `Integer.parseInt`: optional sign then ASCII digits.
fn java_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i32>().ok().map(i64::from)
}

/// A tiny left-to-right reader.
struct Cursor<'a>(&'a str);

impl Cursor<'_> {
    fn literal(&mut self, expected: &str) -> Option<()> {
        self.0 = self.0.strip_prefix(expected)?;
        Some(())
    }

    /// Between `min` and `max` ASCII digits as a number.
    fn number(&mut self, min: usize, max: usize) -> Option<i64> {
        let len = self.0.bytes().take_while(u8::is_ascii_digit).count();
        if len < min || len > max {
            return None;
        }
        let (digits, rest) = self.0.split_at(len);
        self.0 = rest;
        digits.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAN2_2024: i64 = 1_704_153_600_000;

    #[test]
    fn timestamp_formats() {
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
        assert_eq!(
            parse_timestamp("2024-01-02 03:04"),
            Ok(JAN2_2024 + 184 * 60_000)
        );
        assert_eq!(
            parse_timestamp("2024-01-02 00:00:00.123"),
            Ok(JAN2_2024 + 123)
        );
        assert_eq!(
            parse_timestamp("2024-01-02 00:00:00.5"),
            Ok(JAN2_2024 + 500)
        );
        assert_eq!(
            parse_timestamp("2024-01-02 00:00:00.05"),
            Ok(JAN2_2024 + 50)
        );
        assert_eq!(parse_timestamp("2024-01-02 00:00:00."), Ok(JAN2_2024));
        assert_eq!(
            parse_timestamp("2024-01-02T00:00:00.123456789Z"),
            Ok(JAN2_2024 + 123)
        );
        assert_eq!(
            parse_timestamp("2024-01-02+0100"),
            Ok(JAN2_2024 - 3_600_000)
        );
        assert_eq!(parse_timestamp("-5"), Ok(-5));
        assert!(parse_timestamp("now").is_ok_and(|t| t > JAN2_2024));
    }

    #[test]
    fn timestamp_errors() {
        for s in [
            "2024-13-01",
            "2024-02-30",
            "2024-01-02 24:00",
            "abc",
            "2024-01-02 03",
            "2024-01-02 00:00:00.1234567891",
            "2024-01-02 00:00:00.12x",
        ] {
            assert_eq!(
                parse_timestamp(s),
                Err(TypeError(format!("Unable to parse a date/time from '{s}'"))),
                "{s}"
            );
        }
        assert_eq!(
            parse_timestamp("99999999999999999999"),
            Err(TypeError(
                "Unable to make long (for date) from: '99999999999999999999'".into()
            ))
        );
    }

    #[test]
    fn dates() {
        assert_eq!(parse_date("1970-01-01"), Ok(1 << 31));
        assert_eq!(parse_date("2024-01-02"), Ok((1 << 31) + 19_724));
        assert_eq!(parse_date("-0001-12-31"), Ok((1 << 31) - 719_529));
        assert_eq!(parse_date("+10000-01-01").map(|d| d > 1 << 31), Ok(true));
        assert_eq!(parse_date("12"), Ok(12));
        assert_eq!(parse_date("4294967295"), Ok(u32::MAX));
        assert_eq!(
            parse_date("4294967296"),
            Err(TypeError(
                "Unable to make unsigned int (for date) from: '4294967296'".into()
            ))
        );
        assert_eq!(
            parse_date("-1"),
            Err(TypeError(
                "Unable to make unsigned int (for date) from: '-1'".into()
            ))
        );
        for s in [
            "2024-1-02",
            "24-01-02",
            "2024-02-30",
            "10000-01-01",
            "2024-01-02x",
        ] {
            assert_eq!(
                parse_date(s),
                Err(TypeError(format!(
                    "Unable to coerce '{s}' to a formatted date (long)"
                ))),
                "{s}"
            );
        }
    }

    #[test]
    fn times() {
        assert_eq!(parse_time("08:12:54.123456789"), Ok(29_574_123_456_789));
        assert_eq!(parse_time("08:12:54.1"), Ok(29_574_100_000_000));
        assert_eq!(parse_time(" 00:00:01 "), Ok(1_000_000_000));
        assert_eq!(parse_time("1234"), Ok(1234));
        assert_eq!(
            parse_time("86400000000000"),
            Err(TypeError(
                "Unable to make long (for time) from: '86400000000000'".into()
            ))
        );
        for s in [
            "24:00:00",
            "08:12",
            "08:12:54.",
            "08:12:54.1234567890",
            "a:b:c",
            "08:60:00",
        ] {
            assert_eq!(
                parse_time(s),
                Err(TypeError(format!(
                    "(TimeType) Unable to coerce '{s}' to a formatted time (long)"
                ))),
                "{s}"
            );
        }
    }
}
