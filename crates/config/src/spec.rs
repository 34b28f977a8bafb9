//! Cassandra 5.0's value syntax for durations (`10s`, `2000ms`), data sizes (`16MiB`) and
//! data rates (`64MiB/s`): parsing with Cassandra's rules (case matters, no negatives, a
//! smallest accepted unit per key) and printing back in the same syntax.

use std::fmt;
use std::time::Duration;

/// Time units, smallest first, with Cassandra's symbols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TimeUnit {
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Seconds,
    Minutes,
    Hours,
    Days,
}

const TIME_UNITS: [(TimeUnit, &str, u64); 7] = [
    (TimeUnit::Nanoseconds, "ns", 1),
    (TimeUnit::Microseconds, "us", 1_000),
    (TimeUnit::Milliseconds, "ms", 1_000_000),
    (TimeUnit::Seconds, "s", 1_000_000_000),
    (TimeUnit::Minutes, "m", 60_000_000_000),
    (TimeUnit::Hours, "h", 3_600_000_000_000),
    (TimeUnit::Days, "d", 86_400_000_000_000),
];

/// Parses a duration such as `10s` or `2000ms`; units below `min` are refused.
pub fn parse_duration(text: &str, min: TimeUnit) -> Result<Duration, String> {
    let (quantity, symbol) = split_quantity(text)?;
    let symbol = if symbol == "µs" { "us" } else { symbol };
    let (unit, nanos) = TIME_UNITS
        .iter()
        .find(|(_, s, _)| *s == symbol)
        .map(|(u, _, n)| (*u, *n))
        .ok_or_else(|| format!("accepted units are {}", time_symbols(min)))?;
    if unit < min {
        return Err(format!("accepted units are {}", time_symbols(min)));
    }
    quantity
        .checked_mul(nanos)
        .map(Duration::from_nanos)
        .ok_or_else(|| "duration too large".to_string())
}

fn time_symbols(min: TimeUnit) -> String {
    let symbols: Vec<&str> = TIME_UNITS
        .iter()
        .filter(|(u, _, _)| *u >= min)
        .map(|(_, s, _)| *s)
        .collect();
    symbols.join(", ")
}

/// Prints a duration in the largest unit that keeps it exact, e.g. `10s`, `1500ms`.
pub fn format_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0ms".to_string();
    }
    let (_, symbol, size) = TIME_UNITS
        .iter()
        .rev()
        .find(|(_, _, size)| nanos.is_multiple_of(u128::from(*size)))
        .copied()
        .unwrap_or(TIME_UNITS[0]);
    format!("{}{}", nanos / u128::from(size), symbol)
}

/// Splits `123unit` into its non-negative integer quantity and its unit text.
fn split_quantity(text: &str) -> Result<(u64, &str), String> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err("expected a non-negative number followed by a unit".to_string());
    }
    let quantity = text[..digits]
        .parse::<u64>()
        .map_err(|_| "number too large".to_string())?;
    Ok((quantity, &text[digits..]))
}

/// Data size units, smallest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SizeUnit {
    Bytes,
    Kibibytes,
    Mebibytes,
    Gibibytes,
}

const SIZE_UNITS: [(SizeUnit, &str, u64); 4] = [
    (SizeUnit::Bytes, "B", 1),
    (SizeUnit::Kibibytes, "KiB", 1 << 10),
    (SizeUnit::Mebibytes, "MiB", 1 << 20),
    (SizeUnit::Gibibytes, "GiB", 1 << 30),
];

/// An amount of data, held in bytes; written `16MiB`, `5KiB`, `1GiB`, `0B`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DataSize(u64);

impl DataSize {
    pub const fn bytes(bytes: u64) -> Self {
        DataSize(bytes)
    }

    pub const fn kibibytes(kib: u64) -> Self {
        DataSize(kib << 10)
    }

    pub const fn mebibytes(mib: u64) -> Self {
        DataSize(mib << 20)
    }

    /// The size in bytes.
    pub const fn as_bytes(self) -> u64 {
        self.0
    }

    /// Parses `16MiB` and the like; units below `min` are refused (`MB`, `mb`, `16` too).
    pub fn parse(text: &str, min: SizeUnit) -> Result<Self, String> {
        parse_bytes(text, "", min).map(DataSize)
    }
}

impl fmt::Display for DataSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_bytes(self.0, ""))
    }
}

/// A data rate, held in bytes per second; written `64MiB/s`, `1024KiB/s`, `0B/s`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DataRate(u64);

impl DataRate {
    pub const fn bytes_per_second(bytes: u64) -> Self {
        DataRate(bytes)
    }

    pub const fn mebibytes_per_second(mib: u64) -> Self {
        DataRate(mib << 20)
    }

    /// The rate in bytes per second (0 means unthrottled where Cassandra says so).
    pub const fn as_bytes_per_second(self) -> u64 {
        self.0
    }

    /// Parses `64MiB/s`, `512KiB/s` or `100B/s`.
    pub fn parse(text: &str) -> Result<Self, String> {
        parse_bytes(text, "/s", SizeUnit::Bytes).map(DataRate)
    }
}

impl fmt::Display for DataRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_bytes(self.0, "/s"))
    }
}

/// Rates accept only units up to MiB/s, sizes up to GiB.
fn size_units(suffix: &str) -> impl Iterator<Item = &'static (SizeUnit, &'static str, u64)> {
    let largest = if suffix.is_empty() {
        SizeUnit::Gibibytes
    } else {
        SizeUnit::Mebibytes
    };
    SIZE_UNITS.iter().filter(move |(u, _, _)| *u <= largest)
}

fn parse_bytes(text: &str, suffix: &str, min: SizeUnit) -> Result<u64, String> {
    let accepted = || {
        let names: Vec<String> = size_units(suffix)
            .filter(|(u, _, _)| *u >= min)
            .map(|(_, s, _)| format!("{s}{suffix}"))
            .collect();
        format!("accepted units are {} (case matters)", names.join(", "))
    };
    let (quantity, unit_text) = split_quantity(text).map_err(|e| format!("{e}; {}", accepted()))?;
    let unit_text = unit_text.strip_suffix(suffix).ok_or_else(accepted)?;
    let (_, _, size) = size_units(suffix)
        .find(|(u, s, _)| *s == unit_text && *u >= min)
        .ok_or_else(accepted)?;
    quantity
        .checked_mul(*size)
        .ok_or_else(|| "value too large".to_string())
}

fn format_bytes(bytes: u64, suffix: &str) -> String {
    let (_, symbol, size) = size_units(suffix)
        .filter(|(_, _, size)| bytes != 0 && bytes.is_multiple_of(*size))
        .last()
        .copied()
        .unwrap_or(SIZE_UNITS[0]);
    format!("{}{symbol}{suffix}", bytes / size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_every_unit() {
        let ms = TimeUnit::Milliseconds;
        assert_eq!(parse_duration("10s", ms), Ok(Duration::from_secs(10)));
        assert_eq!(
            parse_duration("2000ms", ms),
            Ok(Duration::from_millis(2000))
        );
        assert_eq!(parse_duration("1m", ms), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("5h", ms), Ok(Duration::from_secs(5 * 3600)));
        assert_eq!(parse_duration("1d", ms), Ok(Duration::from_secs(86_400)));
        let ns = TimeUnit::Nanoseconds;
        assert_eq!(parse_duration("7µs", ns), Ok(Duration::from_micros(7)));
        assert_eq!(parse_duration("7us", ns), Ok(Duration::from_micros(7)));
        assert_eq!(parse_duration("9ns", ns), Ok(Duration::from_nanos(9)));
    }

    #[test]
    fn durations_refused() {
        let ms = TimeUnit::Milliseconds;
        for bad in ["10", "10S", "-5s", "s", "", "1.5s", "10 s", "10sec"] {
            assert!(parse_duration(bad, ms).is_err(), "{bad} accepted");
        }
        let err = parse_duration("10us", ms).unwrap_err();
        assert_eq!(err, "accepted units are ms, s, m, h, d");
        assert!(parse_duration("99999999999999999999d", ms).is_err());
    }

    #[test]
    fn durations_print_in_largest_exact_unit() {
        assert_eq!(format_duration(Duration::from_millis(10_000)), "10s");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(format_duration(Duration::from_secs(7200)), "2h");
        assert_eq!(format_duration(Duration::ZERO), "0ms");
    }

    #[test]
    fn sizes() {
        let b = SizeUnit::Bytes;
        assert_eq!(DataSize::parse("16MiB", b), Ok(DataSize::mebibytes(16)));
        assert_eq!(DataSize::parse("5KiB", b), Ok(DataSize::kibibytes(5)));
        assert_eq!(DataSize::parse("1GiB", b), Ok(DataSize::mebibytes(1024)));
        assert_eq!(DataSize::parse("0B", b), Ok(DataSize::bytes(0)));
        for bad in ["16MB", "16mib", "16", "MiB", "-1MiB", "16 MiB", "1TiB"] {
            assert!(DataSize::parse(bad, b).is_err(), "{bad} accepted");
        }
        let err = DataSize::parse("512KiB", SizeUnit::Mebibytes).unwrap_err();
        assert_eq!(err, "accepted units are MiB, GiB (case matters)");
    }

    #[test]
    fn sizes_print_in_largest_exact_unit() {
        assert_eq!(DataSize::mebibytes(32).to_string(), "32MiB");
        assert_eq!(DataSize::kibibytes(1536).to_string(), "1536KiB");
        assert_eq!(DataSize::mebibytes(2048).to_string(), "2GiB");
        assert_eq!(DataSize::bytes(7).to_string(), "7B");
        assert_eq!(DataSize::bytes(0).to_string(), "0B");
    }

    #[test]
    fn rates() {
        assert_eq!(
            DataRate::parse("64MiB/s"),
            Ok(DataRate::mebibytes_per_second(64))
        );
        assert_eq!(
            DataRate::parse("100B/s"),
            Ok(DataRate::bytes_per_second(100))
        );
        assert_eq!(
            DataRate::parse("2KiB/s"),
            Ok(DataRate::bytes_per_second(2048))
        );
        for bad in ["64MiB", "64MB/s", "1GiB/s", "64", "64mib/s"] {
            assert!(DataRate::parse(bad).is_err(), "{bad} accepted");
        }
        assert_eq!(DataRate::mebibytes_per_second(64).to_string(), "64MiB/s");
    }
}
