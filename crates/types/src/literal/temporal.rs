//! Date and time text as Cassandra's `SimpleDateSerializer` and `TimeSerializer` read it.
use crate::error::TypeError;
use crate::value::calendar::{days_from_civil, days_in_month, DATE_EPOCH};

const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// Optional `-` then ASCII digits, the form a number of milliseconds or days takes.
pub(super) fn is_integer(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
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
