//! The zone that ends a timestamp literal, as the patterns of Cassandra 5.0's
//! `TimestampSerializer` read it: `X` and `XXX` right after the time, ` z`, ` zzzz` and ` X`
//! after a space, and ISO_DATE's offset after a bare date.
//!
//! Zone names are java.time's (`PST`, `Pacific Standard Time`, `Europe/Paris`; the table in
//! `zone_names` is generated from a JDK, since Java decides which zone an abbreviation means:
//! `PST` is `America/Los_Angeles`, so it reads daylight time in July). The zones' rules come
//! from the time-zone database bundled with `jiff`.
use super::zone_names::ZONE_NAMES;
use crate::value::calendar::civil_from_days;
use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone, TimeZoneDatabase};
use std::sync::OnceLock;

/// java.time refuses offsets beyond ±18:00.
const MAX_OFFSET_SECONDS: i64 = 18 * 3600;
/// Gregorian years repeat their weekdays every 400 years.
const CYCLE_YEARS: i64 = 400;
/// The last year `jiff` represents.
const MAX_JIFF_YEAR: i64 = 9999;

/// A zone as written: a fixed offset or a named zone's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Zone {
    /// Seconds east of UTC.
    Fixed(i64),
    /// An IANA zone id (or a `SystemV/` one) from the name table.
    Named(&'static str),
}

/// Which patterns may follow: those of the `TimestampSerializer` patterns (after a date and
/// time, or after `yyyy-MM-dd`), or ISO_DATE's offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum After {
    Time,
    IsoDate,
}

/// The zone of `text` (everything after the time or date), `None` when no pattern reads it.
/// No zone at all is UTC, the reference node's default zone.
pub(super) fn parse(text: &str, after: After) -> Option<Zone> {
    if text.is_empty() {
        return Some(Zone::Fixed(0));
    }
    if let Some(spaced) = text.strip_prefix(' ').filter(|_| after == After::Time) {
        return pattern_x(spaced).or_else(|| zone_text(spaced));
    }
    match after {
        After::Time => pattern_x(text).or_else(|| pattern_xxx(text)),
        After::IsoDate => iso_offset_id(text),
    }
}

/// `X`: `Z`, `+HH` or `+HHMM`.
fn pattern_x(text: &str) -> Option<Zone> {
    if text == "Z" {
        return Some(Zone::Fixed(0));
    }
    let (sign, digits) = sign(text)?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match digits.len() {
        2 => fixed(sign, two_digits(digits)?, 0, 0),
        4 => fixed(
            sign,
            two_digits(&digits[..2])?,
            two_digits(&digits[2..])?,
            0,
        ),
        _ => None,
    }
}

/// `XXX`: `Z` or `+HH:MM`.
fn pattern_xxx(text: &str) -> Option<Zone> {
    if text == "Z" {
        return Some(Zone::Fixed(0));
    }
    let (sign, rest) = sign(text)?;
    let (hours, minutes) = rest.split_once(':')?;
    fixed(sign, two_digits(hours)?, two_digits(minutes)?, 0)
}

/// java.time's offset id: `Z`, `+HH:MM` or `+HH:MM:ss`.
fn iso_offset_id(text: &str) -> Option<Zone> {
    if text == "Z" {
        return Some(Zone::Fixed(0));
    }
    offset_with_seconds(text)
}

/// `+HH:MM` or `+HH:MM:ss`.
fn offset_with_seconds(text: &str) -> Option<Zone> {
    let (sign, rest) = sign(text)?;
    let mut parts = rest.split(':');
    let hours = two_digits(parts.next()?)?;
    let minutes = two_digits(parts.next()?)?;
    let seconds = parts.next().map_or(Some(0), two_digits)?;
    if parts.next().is_some() {
        return None;
    }
    fixed(sign, hours, minutes, seconds)
}

/// ` z` and ` zzzz`: an offset, `GMT`/`UTC`/`UT` alone or with an offset, a zone name or id,
/// or `Z`. java.time reads a text starting with those prefixes as an offset from UTC, never
/// as a name.
fn zone_text(text: &str) -> Option<Zone> {
    if text.starts_with(['+', '-']) {
        return offset_with_seconds(text);
    }
    if text == "GMT0" {
        return Some(Zone::Fixed(0));
    }
    let prefixed = ["GMT", "UTC", "UT"]
        .into_iter()
        .find_map(|prefix| text.strip_prefix(prefix));
    match prefixed {
        Some("") => Some(Zone::Fixed(0)),
        Some(offset) => offset_with_seconds(offset),
        None => named(text),
    }
}

fn named(text: &str) -> Option<Zone> {
    match ZONE_NAMES.binary_search_by(|(name, _)| name.as_bytes().cmp(text.as_bytes())) {
        Ok(i) => Some(Zone::Named(ZONE_NAMES[i].1)),
        Err(_) => (text == "Z").then_some(Zone::Fixed(0)),
    }
}

fn sign(text: &str) -> Option<(i64, &str)> {
    match text.as_bytes().first()? {
        b'+' => Some((1, &text[1..])),
        b'-' => Some((-1, &text[1..])),
        _ => None,
    }
}

fn two_digits(text: &str) -> Option<i64> {
    if text.len() != 2 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn fixed(sign: i64, hours: i64, minutes: i64, seconds: i64) -> Option<Zone> {
    let total = hours * 3600 + minutes * 60 + seconds;
    (minutes < 60 && seconds < 60 && total <= MAX_OFFSET_SECONDS)
        .then_some(Zone::Fixed(sign * total))
}

impl Zone {
    /// Seconds east of UTC at the local time `days` (since the epoch) + `second_of_day`. In a
    /// gap or an overlap the offset before the transition counts, as `ZonedDateTime.ofLocal`
    /// takes it.
    pub(super) fn offset_seconds(self, days: i64, second_of_day: i64) -> Option<i64> {
        match self {
            Zone::Fixed(seconds) => Some(seconds),
            Zone::Named(id) => {
                let (year, local) = jiff_local(days, second_of_day)?;
                let zone = time_zone(id, year)?;
                let offset = match zone.to_ambiguous_timestamp(local).offset() {
                    AmbiguousOffset::Unambiguous { offset } => offset,
                    AmbiguousOffset::Gap { before, .. } | AmbiguousOffset::Fold { before, .. } => {
                        before
                    }
                };
                Some(i64::from(offset.seconds()))
            }
        }
    }
}

/// The year and the local time as `jiff` holds it; years past 9999 move back by whole
/// 400-year cycles, which keep every weekday-based rule of the zone's last transitions.
fn jiff_local(days: i64, second_of_day: i64) -> Option<(i64, DateTime)> {
    let (year, month, day) = civil_from_days(days);
    let mut shifted = year;
    if year > MAX_JIFF_YEAR {
        shifted -= (year - MAX_JIFF_YEAR + CYCLE_YEARS - 1) / CYCLE_YEARS * CYCLE_YEARS;
    }
    let hms = [
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60,
    ];
    let [hour, minute, second] = hms.map(|v| i8::try_from(v).ok());
    let local = DateTime::new(
        i16::try_from(shifted).ok()?,
        i8::try_from(month).ok()?,
        i8::try_from(day).ok()?,
        hour?,
        minute?,
        second?,
        0,
    )
    .ok()?;
    Some((year, local))
}

/// The rules of a zone id from the name table, for a local time in `year`.
fn time_zone(id: &str, year: i64) -> Option<TimeZone> {
    if let Some(system_v) = id.strip_prefix("SystemV/") {
        return super::system_v::zone(system_v, year);
    }
    static DATABASE: OnceLock<TimeZoneDatabase> = OnceLock::new();
    DATABASE.get_or_init(TimeZoneDatabase::bundled).get(id).ok()
}

#[cfg(test)]
mod tests;
