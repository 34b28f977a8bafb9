//! Java value syntax the option parser must mimic: `Float.parseFloat`, `Long.parseLong`,
//! `Double.toString`, `%f`, `FBUtilities.parseHumanReadableBytes` / `prettyPrintMemory` /
//! `parsePercent`.

/// `Float.parseFloat` / `Double.parseDouble`: surrounding whitespace allowed, optional `f`/`d`.
pub(crate) fn parse_java_float(v: &str) -> Option<f64> {
    let t = v.trim();
    let t = t.strip_suffix(['f', 'F', 'd', 'D']).unwrap_or(t);
    let lower = t.to_ascii_lowercase();
    if lower.contains("inf") && !lower.contains("infinity") {
        return None;
    }
    t.parse::<f64>().ok()
}

/// `Long.parseLong`: optional sign, decimal digits, no whitespace.
pub(crate) fn parse_java_long(v: &str) -> Option<i64> {
    v.parse::<i64>().ok()
}

/// `Integer.parseInt`.
pub(crate) fn parse_java_int(v: &str) -> Option<i32> {
    v.parse::<i32>().ok()
}

/// `"true"` or `"false"`, case-insensitive.
pub(crate) fn is_true_or_false(v: &str) -> bool {
    v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false")
}

/// Java's `%f` (six decimals).
pub(crate) fn java_float_f(v: f64) -> String {
    format!("{v:.6}")
}

/// Java's `Double.toString` for the magnitudes options use (`1.5`, `2.0`, `1.0E7`).
pub(crate) fn java_double(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "NaN".into()
        } else if v > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let abs = v.abs();
    if abs != 0.0 && !(1e-3..1e7).contains(&abs) {
        let s = format!("{v:E}");
        return if s.contains('.') {
            s
        } else {
            s.replacen('E', ".0E", 1)
        };
    }
    if v.fract() == 0.0 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

const BINARY_PREFIXES: &[(&str, u32)] = &[
    ("Ki", 10),
    ("Mi", 20),
    ("Gi", 30),
    ("Ti", 40),
    ("Pi", 50),
    ("Ei", 60),
];
const DECIMAL_PREFIXES: &[(&str, u32)] = &[
    ("k", 3),
    ("K", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
    ("E", 18),
];

/// `FBUtilities.parseHumanReadableBytes`: `1GiB`, `100 MiB`, `5MB`, `1024B`, `1024`.
pub(crate) fn parse_human_bytes(v: &str) -> Result<u64, String> {
    let t = v.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e')))
        .unwrap_or(t.len());
    let (number, rest) = t.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("Invalid number {number} in {v}"))?;
    let unit = rest.trim_start();
    let unit = unit.strip_suffix('B').unwrap_or(unit);
    let factor = unit_factor(unit).ok_or_else(|| format!("Unsupported unit {rest} in {v}"))?;
    let bytes = number * factor;
    if !bytes.is_finite() || bytes < 0.0 || bytes >= u64::MAX as f64 {
        return Err(format!("Out of range size {v}"));
    }
    Ok(bytes.round() as u64)
}

fn unit_factor(prefix: &str) -> Option<f64> {
    if prefix.is_empty() {
        return Some(1.0);
    }
    if let Some((_, shift)) = BINARY_PREFIXES.iter().find(|(p, _)| *p == prefix) {
        return Some(2f64.powi(*shift as i32));
    }
    DECIMAL_PREFIXES
        .iter()
        .find(|(p, _)| *p == prefix)
        .map(|(_, exp)| 10f64.powi(*exp as i32))
}

/// `FBUtilities.prettyPrintMemory(size)`: `1.000MiB`, `512bytes`.
pub(crate) fn pretty_print_memory(size: u64) -> String {
    const UNITS: &[(u32, &str)] = &[
        (60, "EiB"),
        (50, "PiB"),
        (40, "TiB"),
        (30, "GiB"),
        (20, "MiB"),
        (10, "KiB"),
    ];
    for (shift, unit) in UNITS {
        if size >= 1u64 << shift {
            return format!("{:.3}{unit}", size as f64 / (1u64 << shift) as f64);
        }
    }
    format!("{size}bytes")
}

/// `FBUtilities.parsePercent`: `0.333` or `33.3%`.
pub(crate) fn parse_percent(v: &str) -> Option<f64> {
    match v.trim().strip_suffix('%') {
        Some(p) => parse_java_float(p).map(|x| x / 100.0),
        None => parse_java_float(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_number_formats() {
        assert_eq!(java_double(1.5), "1.5");
        assert_eq!(java_double(2.0), "2.0");
        assert_eq!(java_double(0.5), "0.5");
        assert_eq!(java_float_f(-0.4), "-0.400000");
        assert_eq!(parse_java_float(" 0.2 "), Some(0.2));
        assert_eq!(parse_java_float("0.2f"), Some(0.2));
        assert_eq!(parse_java_float("abc"), None);
        assert_eq!(parse_java_float("inf"), None);
    }

    #[test]
    fn human_readable_sizes() {
        assert_eq!(parse_human_bytes("1GiB"), Ok(1 << 30));
        assert_eq!(parse_human_bytes("100 MiB"), Ok(100 << 20));
        assert_eq!(parse_human_bytes("5MB"), Ok(5_000_000));
        assert_eq!(parse_human_bytes("1024"), Ok(1024));
        assert_eq!(parse_human_bytes("1.5KiB"), Ok(1536));
        assert!(parse_human_bytes("ten").is_err());
        assert!(parse_human_bytes("10XB").is_err());
        assert!(parse_human_bytes("-1MiB").is_err());
        assert_eq!(pretty_print_memory(1 << 20), "1.000MiB");
        assert_eq!(pretty_print_memory(100), "100bytes");
        assert_eq!(parse_percent("50%"), Some(0.5));
        assert_eq!(parse_percent("0.333"), Some(0.333));
    }
}
