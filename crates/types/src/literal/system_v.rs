//! The `SystemV/` zones that Java's time-zone database still carries (`SystemV/PST8PDT`) and
//! the IANA database dropped in 2020. Each is a standard offset of whole hours west of UTC,
//! with, when the name ends in a daylight abbreviation, Java's US rules of 1900 onwards: an
//! hour more from the last Sunday of April to the last Sunday of October at 02:00, except
//! 1974 (January 6 to November 24) and 1975 (February 23 to October 26).
use jiff::tz::{Offset, TimeZone};

/// The first year with daylight time.
const FIRST_DAYLIGHT_YEAR: i64 = 1900;

/// The rules of `SystemV/{name}` for a local time in `year`, `None` for an unknown name.
pub(super) fn zone(name: &str, year: i64) -> Option<TimeZone> {
    let split = name.find(|c: char| c.is_ascii_digit())?;
    let (standard, rest) = name.split_at(split);
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (hours, daylight) = rest.split_at(digits);
    let hours: i8 = hours.parse().ok()?;
    if standard.len() != 3 || !standard.bytes().all(|b| b.is_ascii_uppercase()) {
        return None;
    }
    if daylight.is_empty() || year < FIRST_DAYLIGHT_YEAR {
        return Some(TimeZone::fixed(Offset::constant(-hours)));
    }
    let dates = match year {
        1974 => "M1.1.0,M11.5.0",
        1975 => "M2.5.0,M10.5.0",
        _ => "M4.5.0,M10.5.0",
    };
    TimeZone::posix(&format!("{standard}{hours}{daylight},{dates}")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn offset_hours(name: &str, year: i16, month: i8, day: i8) -> Option<i32> {
        let zone = zone(name, i64::from(year))?;
        let local = date(year, month, day).at(12, 0, 0, 0);
        let timestamp = zone.to_ambiguous_timestamp(local).compatible().ok()?;
        Some(zone.to_offset(timestamp).seconds() / 3600)
    }

    #[test]
    fn daylight_follows_javas_system_v_rules() {
        assert_eq!(offset_hours("PST8PDT", 2024, 1, 2), Some(-8));
        assert_eq!(offset_hours("PST8PDT", 2024, 4, 27), Some(-8));
        assert_eq!(offset_hours("PST8PDT", 2024, 4, 28), Some(-7));
        // US law moved the end to November; SystemV keeps October.
        assert_eq!(offset_hours("PST8PDT", 2024, 10, 28), Some(-8));
        assert_eq!(offset_hours("EST5EDT", 1974, 1, 7), Some(-4));
        assert_eq!(offset_hours("EST5EDT", 1974, 11, 23), Some(-4));
        assert_eq!(offset_hours("EST5EDT", 1975, 2, 24), Some(-4));
        assert_eq!(offset_hours("EST5EDT", 1899, 7, 1), Some(-5));
        assert_eq!(offset_hours("HST10", 2024, 7, 1), Some(-10));
        assert_eq!(offset_hours("AST4", 2024, 7, 1), Some(-4));
    }

    #[test]
    fn unknown_names() {
        for name in ["", "PST", "8PDT", "pst8", "PSTX8", "PST99999"] {
            assert!(zone(name, 2024).is_none(), "{name}");
        }
    }
}
