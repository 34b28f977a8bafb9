//! Timestamp text as Cassandra 5.0's `TimestampSerializer` reads it: `now`, milliseconds since
//! the epoch, or a date and time in one of its java.time patterns, resolved as its formatters
//! resolve them (SMART: a day past the month's end is its last day, `24:00` the next midnight).
use super::temporal::is_integer;
use super::zone::{self, After, Zone};
use crate::error::{TypeError, LONG_OVERFLOW};
use crate::value::calendar::{days_from_civil, days_in_month};
use std::time::{SystemTime, UNIX_EPOCH};

const SECONDS_PER_DAY: i64 = 86_400;
const NANOS_PER_MILLI: i64 = 1_000_000;
/// java.time's largest year.
const MAX_YEAR: i64 = 999_999_999;
/// Java's `appendValue` reads at most 19 digits.
const MAX_FIELD_DIGITS: usize = 19;

/// Milliseconds since the epoch, Java's `Instant.toEpochMilli` overflow as its message.
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
    let (local, zone) = date_time(s)
        .or_else(|| date_only(s))
        .ok_or_else(|| TypeError(format!("Unable to parse a date/time from '{s}'")))?;
    local
        .epoch_millis(zone)
        .ok_or_else(|| TypeError(LONG_OVERFLOW.to_string()))
}

/// A date and time of day as written, before its zone.
#[derive(Debug, PartialEq, Eq)]
struct Local {
    days: i64,
    second_of_day: i64,
    nanos: i64,
}

impl Local {
    fn epoch_millis(&self, zone: Zone) -> Option<i64> {
        let offset = zone.offset_seconds(self.days, self.second_of_day)?;
        let seconds = self.days.checked_mul(SECONDS_PER_DAY)? + self.second_of_day - offset;
        seconds
            .checked_mul(1000)?
            .checked_add(self.nanos / NANOS_PER_MILLI)
    }
}

/// `y-M-d( |T)H:m[:s[.fffffffff]]` then a zone: fields of 1 to 19 digits, a year of 1 or more.
fn date_time(s: &str) -> Option<(Local, Zone)> {
    let mut cursor = Cursor(s);
    let year = cursor.field().filter(|y| (1..=MAX_YEAR).contains(y))?;
    cursor.literal("-")?;
    let month = cursor.field()?;
    cursor.literal("-")?;
    let day = cursor.field()?;
    cursor.literal(" ").or_else(|| cursor.literal("T"))?;
    let hour = cursor.field()?;
    cursor.literal(":")?;
    let minute = cursor.field()?;
    let (mut second, mut nanos) = (0, 0);
    if cursor.literal(":").is_some() {
        second = cursor.field()?;
        if cursor.literal(".").is_some() {
            nanos = cursor.fraction()?;
        }
    }
    let days = smart_days(year, month, day)?;
    let (days, second_of_day) = smart_time(days, [hour, minute, second], nanos)?;
    let zone = zone::parse(cursor.0, After::Time)?;
    let local = Local {
        days,
        second_of_day,
        nanos,
    };
    Some((local, zone))
}

/// A bare date: `yyyy-MM-dd` then a zone, or ISO_DATE (`2024-01-02`, `+10000-01-02`,
/// `-0001-01-01`, with an optional offset right after it).
fn date_only(s: &str) -> Option<(Local, Zone)> {
    let with_zone = || {
        let (days, rest) = date_with_zone(s)?;
        Some((
            days,
            zone::parse(rest, After::Time).filter(|_| !rest.is_empty())?,
        ))
    };
    let iso = || {
        let (days, rest) = iso_date(s)?;
        let zone = zone::parse(rest, After::IsoDate)?;
        // ISO_DATE's formatter turns the instant into UTC's local time, which must be a year
        // java.time holds.
        let min_days = days_from_civil(-MAX_YEAR, 1, 1);
        let before_min = matches!(zone, Zone::Fixed(offset) if days == min_days && offset > 0);
        (!before_min).then_some((days, zone))
    };
    let (days, zone) = with_zone().or_else(iso)?;
    let local = Local {
        days,
        second_of_day: 0,
        nanos: 0,
    };
    Some((local, zone))
}

/// `yyyy-MM-dd`: a year of era of four digits, or more after a `+`.
fn date_with_zone(s: &str) -> Option<(i64, &str)> {
    let (year, rest) = signed_year(s, false)?;
    month_day(year, rest).filter(|_| year >= 1)
}

/// ISO_LOCAL_DATE: a proleptic year of four digits, or more after a sign.
fn iso_date(s: &str) -> Option<(i64, &str)> {
    let (year, rest) = signed_year(s, true)?;
    month_day(year, rest)
}

/// A year of four digits, or of more after a `+` (or, when `negative` is allowed, of four or
/// more after a `-`, never minus zero), up to `MAX_YEAR`.
fn signed_year(s: &str, negative: bool) -> Option<(i64, &str)> {
    let (sign, body) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' if negative => (-1, &s[1..]),
        _ => (0, s),
    };
    let mut cursor = Cursor(body);
    let len = cursor.digits();
    let width_ok = match sign {
        0 => len == 4,
        1 => len > 4,
        _ => len >= 4,
    };
    if !width_ok {
        return None;
    }
    let year = cursor.field().filter(|&y| y <= MAX_YEAR)?;
    if sign < 0 && year == 0 {
        return None;
    }
    Some((if sign < 0 { -year } else { year }, cursor.0))
}

/// `-MM-dd` after a year, as days since the epoch and the text after it.
fn month_day(year: i64, s: &str) -> Option<(i64, &str)> {
    let mut cursor = Cursor(s);
    cursor.literal("-")?;
    let month = cursor.fixed(2)?;
    cursor.literal("-")?;
    let day = cursor.fixed(2)?;
    Some((smart_days(year, month, day)?, cursor.0))
}

/// Days since the epoch of a date, a day past the end of its month moved back to the last.
fn smart_days(year: i64, month: i64, day: i64) -> Option<i64> {
    let month = u32::try_from(month).ok().filter(|m| (1..=12).contains(m))?;
    let day = u32::try_from(day).ok().filter(|d| (1..=31).contains(d))?;
    Some(days_from_civil(
        year,
        month,
        day.min(days_in_month(year, month)),
    ))
}

/// The day and second of day of a time; `24:00[:00[.0]]` is the next day's midnight.
fn smart_time(days: i64, [hour, minute, second]: [i64; 3], nanos: i64) -> Option<(i64, i64)> {
    if hour == 24 && minute == 0 && second == 0 && nanos == 0 {
        return Some((days + 1, 0));
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some((days, (hour * 60 + minute) * 60 + second))
}

/// A tiny left-to-right reader.
struct Cursor<'a>(&'a str);

impl Cursor<'_> {
    fn literal(&mut self, expected: &str) -> Option<()> {
        self.0 = self.0.strip_prefix(expected)?;
        Some(())
    }

    /// How many ASCII digits come next.
    fn digits(&self) -> usize {
        self.0.bytes().take_while(u8::is_ascii_digit).count()
    }

    fn take(&mut self, len: usize) -> Option<i64> {
        let (digits, rest) = self.0.split_at(len);
        self.0 = rest;
        digits.parse::<u64>().ok()?.try_into().ok()
    }

    /// One to 19 digits (Java's `appendValue` with `SignStyle.NORMAL`).
    fn field(&mut self) -> Option<i64> {
        let len = self.digits();
        (1..=MAX_FIELD_DIGITS).contains(&len).then_some(())?;
        self.take(len)
    }

    /// Exactly `len` digits, none after them.
    fn fixed(&mut self, len: usize) -> Option<i64> {
        (self.digits() == len).then_some(())?;
        self.take(len)
    }

    /// Zero to nine digits of a fraction of a second, as nanoseconds.
    fn fraction(&mut self) -> Option<i64> {
        let len = self.digits();
        if len > 9 {
            return None;
        }
        let (digits, rest) = self.0.split_at(len);
        self.0 = rest;
        format!("{digits:0<9}").parse().ok()
    }
}

#[cfg(test)]
mod tests;
