//! Duration text as Cassandra's `Duration.from` reads it: `1h30m`, `1y2mo3w4d5h6m7s8ms9us10ns`,
//! ISO 8601 `P1Y2M3DT4H5M6S`, `P2W`, and the alternative `P0001-02-03T04:05:06`.
use crate::error::TypeError;
use crate::value::Duration;

const NANOS_PER_MICRO: i64 = 1_000;
const NANOS_PER_MILLI: i64 = 1_000_000;
const NANOS_PER_SECOND: i64 = 1_000_000_000;
const NANOS_PER_MINUTE: i64 = 60 * NANOS_PER_SECOND;
const NANOS_PER_HOUR: i64 = 60 * NANOS_PER_MINUTE;

/// Units in the order they must appear, with their names in messages.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Unit {
    Years = 1,
    Months,
    Weeks,
    Days,
    Hours,
    Minutes,
    Seconds,
    Millis,
    Micros,
    Nanos,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::Years => "years",
            Unit::Months => "months",
            Unit::Weeks => "weeks",
            Unit::Days => "days",
            Unit::Hours => "hours",
            Unit::Minutes => "minutes",
            Unit::Seconds => "seconds",
            Unit::Millis => "milliseconds",
            Unit::Micros => "microseconds",
            Unit::Nanos => "nanoseconds",
        }
    }
}

/// Parses a duration; a leading `-` makes every component negative.
pub fn parse_duration(text: &str) -> Result<Duration, TypeError> {
    let (negative, source) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let mut builder = Builder::default();
    let parsed = match source.strip_prefix('P') {
        Some(iso) if iso.ends_with('W') => parse_weeks(iso, &mut builder),
        Some(iso) if iso.contains('-') => parse_alternative(iso, &mut builder),
        Some(iso) => parse_iso(iso, &mut builder),
        None => parse_standard(source, &mut builder),
    };
    match parsed {
        Ok(true) => Ok(builder.build(negative)),
        Ok(false) => Err(TypeError(format!(
            "Unable to convert '{source}' to a duration"
        ))),
        Err(e) => Err(e),
    }
}

/// Splits leading ASCII digits off `s`.
fn digits(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

fn number(d: &str) -> Result<i64, TypeError> {
    d.parse::<i64>()
        .map_err(|_| TypeError(format!("Unable to convert '{d}' to a duration")))
}

/// `Ok(false)` when the text does not have the format.
type Parsed = Result<bool, TypeError>;

fn parse_standard(source: &str, builder: &mut Builder) -> Parsed {
    let mut rest = source;
    if rest.is_empty() {
        return Ok(false);
    }
    while !rest.is_empty() {
        let (d, after) = digits(rest);
        let Some((unit, after)) = standard_unit(after).filter(|_| !d.is_empty()) else {
            return Ok(false);
        };
        builder.add(unit, number(d)?)?;
        rest = after;
    }
    Ok(true)
}

/// The unit symbol at the front of `s`, tried in the order of Cassandra's regex.
fn standard_unit(s: &str) -> Option<(Unit, &str)> {
    let lower = s.to_lowercase();
    for (symbol, unit) in [
        ("y", Unit::Years),
        ("mo", Unit::Months),
        ("w", Unit::Weeks),
        ("d", Unit::Days),
        ("h", Unit::Hours),
        ("s", Unit::Seconds),
        ("ms", Unit::Millis),
        ("us", Unit::Micros),
        ("µs", Unit::Micros),
        ("ns", Unit::Nanos),
        ("m", Unit::Minutes),
    ] {
        if lower.starts_with(symbol) {
            let consumed: usize = s
                .chars()
                .take(symbol.chars().count())
                .map(char::len_utf8)
                .sum();
            return Some((unit, &s[consumed..]));
        }
    }
    None
}

fn parse_weeks(iso: &str, builder: &mut Builder) -> Parsed {
    let (d, rest) = digits(iso);
    if d.is_empty() || rest != "W" {
        return Ok(false);
    }
    builder.add(Unit::Weeks, number(d)?)?;
    Ok(true)
}

/// `[n]Y[n]M[n]D` then optionally `T[n]H[n]M[n]S`, every part optional, in that order.
fn parse_iso(iso: &str, builder: &mut Builder) -> Parsed {
    let (date, time) = match iso.split_once('T') {
        Some((date, time)) => (date, Some(time)),
        None => (iso, None),
    };
    let date_units = [('Y', Unit::Years), ('M', Unit::Months), ('D', Unit::Days)];
    let time_units = [
        ('H', Unit::Hours),
        ('M', Unit::Minutes),
        ('S', Unit::Seconds),
    ];
    Ok(designated(date, &date_units, builder)?
        && time.map_or(Ok(true), |t| designated(t, &time_units, builder))?)
}

fn designated(mut s: &str, units: &[(char, Unit)], builder: &mut Builder) -> Parsed {
    let mut allowed = units.iter();
    while !s.is_empty() {
        let (d, rest) = digits(s);
        let Some(designator) = rest.chars().next().filter(|_| !d.is_empty()) else {
            return Ok(false);
        };
        let Some(&(_, unit)) = allowed.by_ref().find(|(c, _)| *c == designator) else {
            return Ok(false);
        };
        builder.add(unit, number(d)?)?;
        s = &rest[designator.len_utf8()..];
    }
    Ok(true)
}

/// `YYYY-MM-DDThh:mm:ss` with exactly those digit counts.
fn parse_alternative(iso: &str, builder: &mut Builder) -> Parsed {
    let bytes = iso.as_bytes();
    let shape = "dddd-dd-ddTdd:dd:dd".as_bytes();
    let fits = bytes.len() == shape.len()
        && bytes.iter().zip(shape).all(|(&b, &s)| match s {
            b'd' => b.is_ascii_digit(),
            _ => b == s,
        });
    if !fits {
        return Ok(false);
    }
    let units = [
        (0..4, Unit::Years),
        (5..7, Unit::Months),
        (8..10, Unit::Days),
        (11..13, Unit::Hours),
        (14..16, Unit::Minutes),
        (17..19, Unit::Seconds),
    ];
    for (range, unit) in units {
        builder.add(unit, number(&iso[range])?)?;
    }
    Ok(true)
}

#[derive(Default)]
struct Builder {
    months: i64,
    days: i64,
    nanos: i64,
    last: Option<Unit>,
}

impl Builder {
    fn add(&mut self, unit: Unit, amount: i64) -> Result<(), TypeError> {
        self.check_order(unit)?;
        let (total, per_unit, limit, name) = match unit {
            Unit::Years => (&mut self.months, 12, i64::from(i32::MAX), "months"),
            Unit::Months => (&mut self.months, 1, i64::from(i32::MAX), "months"),
            Unit::Weeks => (&mut self.days, 7, i64::from(i32::MAX), "days"),
            Unit::Days => (&mut self.days, 1, i64::from(i32::MAX), "days"),
            Unit::Hours => (&mut self.nanos, NANOS_PER_HOUR, i64::MAX, "nanoseconds"),
            Unit::Minutes => (&mut self.nanos, NANOS_PER_MINUTE, i64::MAX, "nanoseconds"),
            Unit::Seconds => (&mut self.nanos, NANOS_PER_SECOND, i64::MAX, "nanoseconds"),
            Unit::Millis => (&mut self.nanos, NANOS_PER_MILLI, i64::MAX, "nanoseconds"),
            Unit::Micros => (&mut self.nanos, NANOS_PER_MICRO, i64::MAX, "nanoseconds"),
            Unit::Nanos => (&mut self.nanos, 1, i64::MAX, "nanoseconds"),
        };
        if amount > (limit - *total) / per_unit {
            return Err(TypeError(format!(
                "Invalid duration. The total number of {name} must be less or equal to {}",
                i32::MAX
            )));
        }
        *total += amount * per_unit;
        Ok(())
    }

    fn check_order(&mut self, unit: Unit) -> Result<(), TypeError> {
        match self.last {
            Some(last) if last == unit => Err(TypeError(format!(
                "Invalid duration. The {} are specified multiple times",
                unit.name()
            ))),
            Some(last) if last > unit => Err(TypeError(format!(
                "Invalid duration. The {} should be after {}",
                last.name(),
                unit.name()
            ))),
            _ => {
                self.last = Some(unit);
                Ok(())
            }
        }
    }

    /// Totals are bounded by `add`, so the narrowing cannot fail.
    fn build(self, negative: bool) -> Duration {
        let sign = if negative { -1 } else { 1 };
        Duration {
            months: i32::try_from(self.months).unwrap_or(i32::MAX) * sign,
            days: i32::try_from(self.days).unwrap_or(i32::MAX) * sign,
            nanos: self.nanos * i64::from(sign),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(months: i32, days: i32, nanos: i64) -> Result<Duration, TypeError> {
        Ok(Duration {
            months,
            days,
            nanos,
        })
    }

    fn err(text: &str) -> String {
        match parse_duration(text) {
            Err(TypeError(m)) => m,
            Ok(v) => format!("accepted {v:?}"),
        }
    }

    #[test]
    fn standard_format() {
        assert_eq!(parse_duration("1h30m"), d(0, 0, 90 * NANOS_PER_MINUTE));
        assert_eq!(
            parse_duration("1y2mo3w4d5h6m7s8ms9us10ns"),
            d(
                14,
                25,
                5 * NANOS_PER_HOUR + 6 * NANOS_PER_MINUTE + 7_008_009_010
            )
        );
        assert_eq!(parse_duration("-2D"), d(0, -2, 0));
        assert_eq!(parse_duration("3µs"), d(0, 0, 3000));
        assert_eq!(parse_duration("1MS"), d(0, 0, NANOS_PER_MILLI));
    }

    #[test]
    fn iso_formats() {
        assert_eq!(
            parse_duration("P1Y2M3DT4H5M6S"),
            d(
                14,
                3,
                4 * NANOS_PER_HOUR + 5 * NANOS_PER_MINUTE + 6 * NANOS_PER_SECOND
            )
        );
        assert_eq!(parse_duration("PT5M"), d(0, 0, 5 * NANOS_PER_MINUTE));
        assert_eq!(parse_duration("P2W"), d(0, 14, 0));
        assert_eq!(parse_duration("-P1D"), d(0, -1, 0));
        assert_eq!(
            parse_duration("P0001-02-03T04:05:06"),
            d(
                14,
                3,
                4 * NANOS_PER_HOUR + 5 * NANOS_PER_MINUTE + 6 * NANOS_PER_SECOND
            )
        );
    }

    #[test]
    fn errors() {
        assert_eq!(err("5"), "Unable to convert '5' to a duration");
        assert_eq!(err("-1x"), "Unable to convert '1x' to a duration");
        assert_eq!(err(""), "Unable to convert '' to a duration");
        assert_eq!(
            err("P1S"),
            "Unable to convert '1S' to a duration".replace("'1S'", "'P1S'")
        );
        assert_eq!(err("PT1Y"), "Unable to convert 'PT1Y' to a duration");
        assert_eq!(err("P1M1Y"), "Unable to convert 'P1M1Y' to a duration");
        assert_eq!(
            err("P1-02-03T04:05:06"),
            "Unable to convert 'P1-02-03T04:05:06' to a duration"
        );
        assert_eq!(
            err("1h1h"),
            "Invalid duration. The hours are specified multiple times"
        );
        assert_eq!(
            err("1m1h"),
            "Invalid duration. The minutes should be after hours"
        );
        assert_eq!(
            err("2147483648mo"),
            "Invalid duration. The total number of months must be less or equal to 2147483647"
        );
        assert!(err("99999999999999999999999h").starts_with("Unable to convert"));
    }
}
