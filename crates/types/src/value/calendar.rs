//! Proleptic Gregorian calendar arithmetic (days since 1970-01-01 <-> year/month/day) and the
//! text forms of timestamps, dates and times.

pub const MILLIS_PER_DAY: i64 = 86_400_000;
/// `date` values are days since the epoch shifted by 2^31.
pub const DATE_EPOCH: i64 = 1 << 31;

/// Days since 1970-01-01 of a civil date (month 1..=12, day 1..=31).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month, day) of a count of days since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `2024-01-02`, with years outside 0..=9999 signed as ISO-8601 does.
pub fn format_date(days: i64) -> String {
    let (year, month, day) = civil_from_days(days);
    let year = match year {
        0..=9999 => format!("{year:04}"),
        y if y > 9999 => format!("+{y}"),
        y => format!("-{:04}", -y),
    };
    format!("{year}-{month:02}-{day:02}")
}

/// `2024-01-02 03:04:05.000000+0000` (cqlsh's form; microseconds are always zero).
pub fn format_timestamp(millis: i64) -> String {
    let (date, time) = timestamp_parts(millis);
    format!("{date} {time}000+0000")
}

/// `2024-01-02T03:04:05.678Z`, as Cassandra's `TimestampType.getString` prints a timestamp.
pub fn format_timestamp_iso(millis: i64) -> String {
    let (date, time) = timestamp_parts(millis);
    format!("{date}T{time}Z")
}

/// A timestamp's date and its time of day to the millisecond (`03:04:05.678`).
fn timestamp_parts(millis: i64) -> (String, String) {
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let in_day = millis.rem_euclid(MILLIS_PER_DAY);
    let (h, m, s, ms) = (
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000,
    );
    (format_date(days), format!("{h:02}:{m:02}:{s:02}.{ms:03}"))
}

/// `08:12:54.123456789` from nanoseconds since midnight.
pub fn format_time(nanos: i64) -> String {
    let secs = nanos / 1_000_000_000;
    format!(
        "{:02}:{:02}:{:02}.{:09}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        nanos % 1_000_000_000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
    }

    #[test]
    fn formats() {
        assert_eq!(format_date(0), "1970-01-01");
        assert_eq!(format_date(days_from_civil(-5, 3, 4)), "-0005-03-04");
        assert_eq!(format_date(days_from_civil(12345, 3, 4)), "+12345-03-04");
        assert_eq!(format_timestamp(-1), "1969-12-31 23:59:59.999000+0000");
        assert_eq!(
            format_timestamp(1_704_164_645_123),
            "2024-01-02 03:04:05.123000+0000"
        );
        // As Cassandra 5.0.4 named a partition keyed by '2024-01-02 03:04:05.678+0000'.
        assert_eq!(
            format_timestamp_iso(1_704_164_645_678),
            "2024-01-02T03:04:05.678Z"
        );
        assert_eq!(format_time(29_574_123_456_789), "08:12:54.123456789");
    }

    proptest! {
        #[test]
        fn civil_round_trip(days in -1_000_000_000i64..1_000_000_000) {
            let (y, m, d) = civil_from_days(days);
            prop_assert!(d >= 1 && d <= days_in_month(y, m));
            prop_assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}
