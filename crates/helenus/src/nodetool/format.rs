//! Cassandra's output helpers: `TableBuilder` (left-aligned columns, padded to the widest
//! cell), `FileUtils.stringifyFileSize`, `FBUtilities.prettyPrintMemory`, and Java's
//! `Double.toString` and `DecimalFormat` patterns used by nodetool.

/// Rows of cells printed in columns separated by `delimiter`; every column is padded to its
/// widest cell, the last one included (as Cassandra's `TableBuilder`).
pub struct TableBuilder {
    delimiter: &'static str,
    rows: Vec<Vec<String>>,
}

impl TableBuilder {
    pub fn new(delimiter: &'static str) -> TableBuilder {
        TableBuilder {
            delimiter,
            rows: Vec::new(),
        }
    }

    pub fn add<S: Into<String>>(&mut self, row: impl IntoIterator<Item = S>) {
        self.rows.push(row.into_iter().map(Into::into).collect());
    }

    pub fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|i| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(i))
                    .map(|c| c.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let cells: Vec<String> = widths
                .iter()
                .enumerate()
                .map(|(i, &w)| format!("{:<w$}", row.get(i).map_or("", String::as_str)))
                .collect();
            out.push_str(&cells.join(self.delimiter));
            out.push('\n');
        }
        out
    }
}

const KIB: f64 = 1024.0;

/// `FileUtils.stringifyFileSize`: `293.13 KiB`, `0 bytes`.
pub fn file_size(bytes: u64) -> String {
    let value = bytes as f64;
    let units = [
        (KIB.powi(4), "TiB"),
        (KIB.powi(3), "GiB"),
        (KIB.powi(2), "MiB"),
        (KIB, "KiB"),
    ];
    for (size, unit) in units {
        if value >= size {
            return format!("{} {unit}", decimal(value / size, 2));
        }
    }
    format!("{} bytes", decimal(value, 2))
}

/// `FBUtilities.prettyPrintMemory`: `4.982KiB`, `80B`.
pub fn memory(bytes: u64) -> String {
    let value = bytes as f64;
    let units = [(KIB.powi(3), "GiB"), (KIB.powi(2), "MiB"), (KIB, "KiB")];
    for (size, unit) in units {
        if value >= size {
            return format!("{:.3}{unit}", value / size);
        }
    }
    format!("{bytes}B")
}

/// `DecimalFormat("#.##")`-style: at most `places` decimals, trailing zeros dropped.
pub fn decimal(value: f64, places: usize) -> String {
    let text = format!("{value:.places$}");
    if !text.contains('.') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Java's `Double.toString`: `1.0`, `0.0643`, `5.0E-4`, `NaN`.
pub fn java_double(value: f64) -> String {
    if !value.is_finite() {
        return if value.is_nan() {
            "NaN".into()
        } else if value > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let magnitude = value.abs();
    if magnitude != 0.0 && !(1e-3..1e7).contains(&magnitude) {
        let text = format!("{value:e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        return format!("{mantissa}E{exponent}");
    }
    let text = format!("{value}");
    if text.contains('.') {
        text
    } else {
        format!("{text}.0")
    }
}

/// A ratio as a percentage with `places` decimals (`DecimalFormat("##0.0%")`).
pub fn percent(ratio: f64, places: usize) -> String {
    format!("{:.places$}%", ratio * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_builder_pads_every_column() {
        // matches Cassandra 5.0.4 (`nodetool compactionstats`)
        let mut t = TableBuilder::new(" ");
        t.add(["concurrent compactors", "2"]);
        t.add(["mean rate", "522.62/hour"]);
        assert_eq!(
            t.render(),
            "concurrent compactors 2          \nmean rate             522.62/hour\n"
        );
    }

    #[test]
    fn table_builder_pads_missing_cells() {
        let mut t = TableBuilder::new("  ");
        t.add(["a"]);
        t.add(["bb", "c"]);
        assert_eq!(t.render(), "a    \nbb  c\n");
    }

    #[test]
    fn sizes_as_cassandra_prints_them() {
        assert_eq!(file_size(300_165), "293.13 KiB");
        assert_eq!(file_size(0), "0 bytes");
        assert_eq!(file_size(1024), "1 KiB");
        assert_eq!(file_size(1536 * 1024), "1.5 MiB");
        assert_eq!(memory(5102), "4.982KiB");
        assert_eq!(memory(80), "80B");
        assert_eq!(memory(0), "0B");
    }

    #[test]
    fn java_doubles() {
        assert_eq!(java_double(64.0), "64.0");
        assert_eq!(java_double(0.145), "0.145");
        assert_eq!(java_double(0.0005), "5.0E-4");
        assert_eq!(java_double(f64::NAN), "NaN");
        assert_eq!(java_double(0.0), "0.0");
    }

    #[test]
    fn percentages() {
        assert_eq!(percent(1.0, 1), "100.0%");
        assert_eq!(percent(1.0, 2), "100.00%");
    }
}
