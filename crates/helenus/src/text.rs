//! Plain-text tables for the command-line tools (`nodetool`, `helenus cluster`).

/// `rows` (the header first) with each column padded to its widest cell, joined by
/// `separator`, one line each.
pub fn padded<R: AsRef<[String]>>(rows: &[R], separator: &str) -> String {
    let columns = rows.first().map_or(0, |r| r.as_ref().len());
    let widths: Vec<usize> = (0..columns)
        .map(|i| rows.iter().map(|r| r.as_ref()[i].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .as_ref()
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(&cells.join(separator));
        out.push('\n');
    }
    out
}
