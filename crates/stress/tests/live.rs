//! `helenus stress` against a live Helenus node: write then read (every read finds the row
//! written), mixed, a fixed-rate run whose latencies include queueing, and the output shape.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use std::process::ExitCode;

use common::{stress, Node};

/// The parsed `Results:` block and interval rows of one report.
struct Report {
    text: String,
}

impl Report {
    fn new(code: ExitCode, text: String) -> Report {
        assert_eq!(code, ExitCode::SUCCESS, "stress failed:\n{text}");
        assert!(text.trim_end().ends_with("END"), "no END:\n{text}");
        Report { text }
    }

    /// The first number after `label :` in the results block.
    fn result(&self, label: &str) -> f64 {
        let line = self
            .text
            .lines()
            .find(|l| l.starts_with(label) && l.contains(':'))
            .unwrap_or_else(|| panic!("no {label} in\n{}", self.text));
        let value = line.split_once(':').map(|(_, v)| v).unwrap_or("");
        let number: String = value
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
            .collect();
        number
            .replace(',', "")
            .parse()
            .unwrap_or_else(|_| panic!("bad number in {line}"))
    }

    /// Rows of the interval table whose type is `kind` (split on commas, trimmed).
    fn rows(&self, kind: &str) -> Vec<Vec<String>> {
        self.text
            .lines()
            .filter(|l| l.starts_with(&format!("{kind},")))
            .map(|l| l.split(',').map(|c| c.trim().to_string()).collect())
            .collect()
    }
}

fn check_shape(r: &Report, total_ops: u64) {
    let t = &r.text;
    assert!(t.starts_with("******************** Stress Settings ********************"));
    for section in [
        "Command:",
        "Rate:",
        "Population:",
        "Columns:",
        "Mode:",
        "Node:",
        "Schema:",
        "Port:",
    ] {
        assert!(t.lines().any(|l| l == section), "no {section}");
    }
    assert!(t.contains("type                                               total ops,    op/s,    pk/s,   row/s,    mean,"));
    let rows = r.rows("total");
    assert!(!rows.is_empty(), "no interval rows:\n{t}");
    for row in &rows {
        assert_eq!(row.len(), 19, "{row:?}");
    }
    let last = rows.last().expect("a row");
    assert_eq!(last[1].parse::<u64>().ok(), Some(total_ops), "{last:?}");
    assert_eq!(r.result("Total partitions") as u64, total_ops);
    assert_eq!(r.result("Total errors"), 0.0);
    assert!(r.result("Op rate") > 0.0);
    assert!(r.result("Latency max") >= r.result("Latency median"));
    assert!(t.contains("Client CPU per op"));
}

#[test]
fn write_read_mixed_and_fixed_rate() {
    let node = Node::start();
    let target = format!("-node 127.0.0.1 -port native={}", node.port);

    let (code, out) = stress(&format!("write n=2000 -rate threads=4 {target}"));
    let w = Report::new(code, out);
    check_shape(&w, 2000);
    assert!(w
        .text
        .contains("Running WRITE with 4 threads for 2000 iteration"));
    assert!(w.text.contains("Warming up WRITE with 500 iterations..."));
    assert!(w.text.contains("Op rate                   :") && w.text.contains("[WRITE: "));

    let (code, out) = stress(&format!("read n=2000 -rate threads=4 {target}"));
    let r = Report::new(code, out);
    check_shape(&r, 2000);
    assert!(r
        .text
        .contains("Distribution: Gaussian:  min=1,max=2000,mean=1000.500000,stdev=333.166667"));

    let (code, out) = stress(&format!(
        "mixed ratio(write=1,read=3) n=2000 -rate threads=4 {target}"
    ));
    let m = Report::new(code, out);
    assert!(
        !m.rows("READ").is_empty() && !m.rows("WRITE").is_empty(),
        "{}",
        m.text
    );
    assert!(m.text.contains("[READ: ") && m.text.contains(", WRITE: "));
    let reads = m
        .rows("READ")
        .last()
        .map(|r| r[1].parse::<u64>().unwrap_or(0))
        .unwrap_or(0);
    assert!((1200..1800).contains(&reads), "reads {reads} of 2000");

    let (code, out) = stress(&format!(
        "write duration=3s no-warmup -rate threads=2 fixed=200/s {target}"
    ));
    let f = Report::new(code, out);
    assert!(f
        .text
        .contains("Latency measured from     : intended start"));
    let rate = f.result("Op rate");
    assert!((150.0..=230.0).contains(&rate), "fixed 200/s ran at {rate}");
    // Offered far above what one thread can do: the backlog shows up as latency.
    let (code, out) = stress(&format!(
        "write duration=2s no-warmup -rate threads=1 fixed=100000/s {target}"
    ));
    let q = Report::new(code, out);
    assert!(
        q.result("Latency max") > 500.0,
        "queueing not in latency:\n{}",
        q.text
    );
}

#[test]
fn bad_command_lines_fail_with_usage() {
    let (code, out) = stress("write n=10 -rate bogus=1");
    assert_eq!(code, ExitCode::FAILURE);
    assert!(out.starts_with("Usage: -rate"), "{out}");
    let (code, out) = stress("help");
    assert_eq!(code, ExitCode::SUCCESS);
    assert!(out.contains("---Commands---"));
    let (code, out) = stress("print dist=uniform(1..100)");
    assert_eq!(code, ExitCode::SUCCESS);
    assert!(out.starts_with("% of samples    Range       % of total"));
}
