//! `helenus stress ycsb` against a live Helenus node: workloads A to F (load and run), with
//! YCSB's report lines, and the status lines of `-s`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use common::{stress, Node};

fn value(report: &str, prefix: &str) -> f64 {
    let line = report
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} in\n{report}"));
    line.rsplit(", ")
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("bad {line}"))
}

#[test]
fn workload_a_load_and_run() {
    let node = Node::start();
    let common = format!(
        "-P workloada -p recordcount=300 -p operationcount=600 -p port={} -p hosts=127.0.0.1",
        node.port
    );

    let (code, load) = stress(&format!("ycsb load {common} -threads 4"));
    assert_eq!(code, ExitCode::SUCCESS, "{load}");
    assert!(value(&load, "[OVERALL], RunTime(ms)") > 0.0);
    assert!(value(&load, "[OVERALL], Throughput(ops/sec)") > 0.0);
    assert_eq!(value(&load, "[INSERT], Operations"), 300.0);
    assert_eq!(value(&load, "[INSERT], Return=OK"), 300.0);

    let (code, run) = stress(&format!(
        "ycsb run {common} -p threadcount=4 -p requestdistribution=zipfian"
    ));
    assert_eq!(code, ExitCode::SUCCESS, "{run}");
    let reads = value(&run, "[READ], Operations");
    let updates = value(&run, "[UPDATE], Operations");
    assert_eq!(reads + updates, 600.0);
    assert!((200.0..400.0).contains(&reads), "{reads} reads of 600");
    assert_eq!(value(&run, "[READ], Return=OK"), reads);
    assert_eq!(value(&run, "[UPDATE], Return=OK"), updates);
    for stat in [
        "AverageLatency(us)",
        "95thPercentileLatency(us)",
        "99thPercentileLatency(us)",
    ] {
        assert!(value(&run, &format!("[READ], {stat}")) > 0.0);
    }
    assert!(
        value(&run, "[READ], 99thPercentileLatency(us)")
            >= value(&run, "[READ], 95thPercentileLatency(us)")
    );

    let (code, c) = stress(&format!(
        "ycsb run -P workloadc -p recordcount=300 -p operationcount=200 -p port={} -target 400",
        node.port
    ));
    assert_eq!(code, ExitCode::SUCCESS, "{c}");
    assert!(
        value(&c, "[OVERALL], RunTime(ms)") >= 450.0,
        "target 400 ops/s not honoured:\n{c}"
    );
    assert_eq!(value(&c, "[READ], Return=OK"), 200.0);
}

/// The count on `[OP], Operations`, 0 when YCSB would print no such line.
fn count(report: &str, op: &str) -> f64 {
    let prefix = format!("[{op}], Operations");
    if report.lines().any(|l| l.starts_with(&prefix)) {
        value(report, &prefix)
    } else {
        0.0
    }
}

/// Every operation line of the report has as many `Return=OK` as operations.
fn all_ok(report: &str) {
    for op in ["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"] {
        assert_eq!(
            count(report, op),
            if count(report, op) > 0.0 {
                value(report, &format!("[{op}], Return=OK"))
            } else {
                0.0
            },
            "{op} in\n{report}"
        );
    }
    assert!(!report.contains("Return=ERROR"), "{report}");
}

#[test]
fn workloads_b_to_f_mixes() {
    let node = Node::start();
    let props = format!("-p recordcount=200 -p port={} -threads 4", node.port);
    let (code, load) = stress(&format!("ycsb load -P workloadb {props}"));
    assert_eq!(code, ExitCode::SUCCESS, "{load}");
    assert_eq!(value(&load, "[INSERT], Return=OK"), 200.0);

    let n = 400.0;
    let run = |workload: &str| {
        let (code, report) = stress(&format!(
            "ycsb run -P {workload} {props} -p operationcount=400 -p maxscanlength=20"
        ));
        assert_eq!(code, ExitCode::SUCCESS, "{workload}: {report}");
        all_ok(&report);
        report
    };
    let b = run("workloadb");
    assert_eq!(count(&b, "READ") + count(&b, "UPDATE"), n, "{b}");
    assert!((340.0..400.0).contains(&count(&b, "READ")), "{b}");

    let c = run("workloadc");
    assert_eq!((count(&c, "READ"), count(&c, "UPDATE")), (n, 0.0), "{c}");

    let d = run("workloadd");
    assert_eq!(count(&d, "READ") + count(&d, "INSERT"), n, "{d}");
    assert!((3.0..50.0).contains(&count(&d, "INSERT")), "{d}");

    let e = run("workloade");
    assert_eq!(count(&e, "SCAN") + count(&e, "INSERT"), n, "{e}");
    assert!((3.0..50.0).contains(&count(&e, "INSERT")), "{e}");

    // Each READ-MODIFY-WRITE is also measured as a READ and an UPDATE, as YCSB does.
    let f = run("workloadf");
    let rmw = count(&f, "READ-MODIFY-WRITE");
    assert!((140.0..260.0).contains(&rmw), "{f}");
    assert_eq!(count(&f, "READ"), n, "{f}");
    assert_eq!(count(&f, "UPDATE"), rmw, "{f}");
    let throughput = value(&f, "[OVERALL], Throughput(ops/sec)");
    let ms = value(&f, "[OVERALL], RunTime(ms)");
    assert!((throughput * ms / 1000.0 - n).abs() < 2.0, "{f}");
}

/// A writer the test can read back after the run.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn status_lines_every_interval() {
    let node = Node::start();
    let args: Vec<String> = format!(
        "run -P workloada -p recordcount=50 -p operationcount=240 -p port={} -target 100 -s -p status.interval=1",
        node.port
    )
    .split_whitespace()
    .map(str::to_string)
    .collect();
    let status = Shared::default();
    let mut out = Vec::new();
    let code = stress::ycsb_to(&args, &mut out, Box::new(status.clone()));
    let report = String::from_utf8(out).expect("utf-8");
    assert_eq!(code, ExitCode::SUCCESS, "{report}");
    let text = String::from_utf8(status.0.lock().expect("lock").clone()).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 3, "{text}");
    assert!(
        lines[0].contains(" 0 sec: 0 operations; est completion in "),
        "{text}"
    );
    let mut reads = 0u64;
    for line in &lines {
        let b = line.as_bytes();
        // yyyy-MM-dd HH:mm:ss:SSS
        assert!(
            b.len() > 23 && b[4] == b'-' && b[10] == b' ' && b[19] == b':',
            "{line}"
        );
        if let Some(at) = line.find("[READ: Count=") {
            let n = &line[at + 13..];
            reads += n[..n.find(',').expect("comma")]
                .parse::<u64>()
                .expect("count");
            assert!(line[at..].contains(", 99.99="), "{line}");
        }
    }
    assert!(lines[1].contains(" 1 sec: "), "{text}");
    assert!(
        lines[1].contains(" current ops/sec; est completion in "),
        "{text}"
    );
    let last = lines[lines.len() - 1];
    assert!(last.contains(" 240 operations; "), "{text}");
    assert!(!last.contains("est completion"), "{last}");
    assert_eq!(reads as f64, value(&report, "[READ], Operations"), "{text}");
}
