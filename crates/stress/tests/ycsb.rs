//! `helenus stress ycsb` against a live Helenus node: workload A load and run, with YCSB's
//! report lines.

mod common;

use std::process::ExitCode;

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
