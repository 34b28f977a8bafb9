//! `helenus stress user` against a live Helenus node: the insanity profile's insert and its
//! 80/20 mixed run (queries find the rows inserts wrote), a profile with two clustering
//! columns and a `multirow` query, and the pictures and logs: the `-graph` page holding two
//! revisions, the `--png` image and the `-log hdrfile=` interval log; `insert: visits`
//! writing each partition over several inserts.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

mod common;

use std::path::Path;
use std::process::ExitCode;

use common::{stress, Node};

fn profile(name: &str) -> String {
    format!("{}/profiles/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Runs `line`, requiring `END` and no errors; returns the report.
fn run_ok(line: &str) -> String {
    let (code, out) = stress(line);
    assert_eq!(code, ExitCode::SUCCESS, "{line} failed:\n{out}");
    assert!(out.trim_end().ends_with("END"), "no END:\n{out}");
    assert_eq!(number_after(&out, "Total errors"), 0.0, "{out}");
    out
}

/// The first number after `label … :` in the results block.
fn number_after(report: &str, label: &str) -> f64 {
    let line = report
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no {label} in\n{report}"));
    let value = line.split_once(':').map_or("", |(_, v)| v).trim();
    let digits: String = value
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .collect();
    digits
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("{line}"))
}

/// `name: N row/s` from the per-operation list of the `Row rate` line.
fn op_row_rate(report: &str, op: &str) -> f64 {
    let line = report
        .lines()
        .find(|l| l.starts_with("Row rate"))
        .unwrap_or_else(|| panic!("no Row rate in\n{report}"));
    let after = line
        .split(&format!("{op}: "))
        .nth(1)
        .unwrap_or_else(|| panic!("no {op} in {line}"));
    let digits: String = after
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .collect();
    digits
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("{line}"))
}

#[test]
fn insanity_profile_insert_then_mixed_with_pictures() {
    let node = Node::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let (html, png, hdr) = (
        dir.path().join("report.html"),
        dir.path().join("report.png"),
        dir.path().join("run.hdr"),
    );
    let target = format!(
        "-mode native cql3 -node 127.0.0.1 -port native={}",
        node.port
    );
    // The seed command lines, with our copy of the profile and small counts.
    let insert = run_ok(&format!(
        "user profile={} ops(insert=1) no-warmup cl=ONE n=300 {target} \u{2013}pop seq=1..300 -rate threads=8 \
         -graph file={} title=insanity revision=insert -log hdrfile={}",
        profile("cqlstress-insanity-example.yaml"),
        html.display(),
        hdr.display()
    ));
    assert!(
        insert.contains("Running insert with 8 threads for 300 iteration"),
        "{insert}"
    );
    assert_eq!(number_after(&insert, "Total partitions"), 300.0);
    assert!(number_after(&insert, "Row rate") > number_after(&insert, "Partition rate"));

    let mixed = run_ok(&format!(
        "user profile={} ops(insert=20,simple1=80) no-warmup cl=ONE n=1000 {target} \u{2013}pop dist=uniform(1..300) \
         -rate threads=8 -graph file={} title=insanity revision=mixed --png {}",
        profile("cqlstress-insanity-example.yaml"),
        html.display(),
        png.display()
    ));
    assert!(
        mixed.contains("Running [insert, simple1] with 8 threads"),
        "{mixed}"
    );
    assert!(op_row_rate(&mixed, "simple1") > 0.0, "{mixed}");
    assert!(op_row_rate(&mixed, "insert") > 0.0, "{mixed}");

    check_page(&html);
    check_png(&png);
    check_hdr_log(&hdr);
}

fn check_page(path: &Path) {
    let page = std::fs::read_to_string(path).expect("graph page");
    assert!(page.contains(r#""revision":"insert""#) && page.contains(r#""revision":"mixed""#));
    assert!(
        page.contains("Latency percentiles: insert") && page.contains("Latency percentiles: mixed")
    );
    assert!(page.matches("<svg").count() >= 3);
    assert!(
        !page.contains("<script src") && !page.contains("<link"),
        "the page must be self-contained"
    );
}

fn check_png(path: &Path) {
    let decoder = png::Decoder::new(std::fs::File::open(path).expect("png file"));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("png frame");
    assert!(
        info.width >= 800 && info.height >= 600,
        "{}x{}",
        info.width,
        info.height
    );
    let pixels = &buf[..info.buffer_size()];
    let dark = pixels
        .chunks(3)
        .filter(|p| p.iter().all(|&c| c < 100))
        .count();
    assert!(
        dark > 1000,
        "the image should hold axes and text, {dark} dark pixels"
    );
}

fn check_hdr_log(path: &Path) {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    let bytes = std::fs::read(path).expect("hdr log");
    let mut counted = 0;
    for entry in IntervalLogIterator::new(&bytes) {
        if let LogEntry::Interval(h) = entry.expect("log entry") {
            assert_eq!(h.tag().map(|t| t.as_str()), Some("insert-st"));
            let raw = base64_decode(h.encoded_histogram());
            let hist: hdrhistogram::Histogram<u64> = Deserializer::new()
                .deserialize(&mut raw.as_slice())
                .expect("histogram");
            counted += hist.len();
        }
    }
    assert_eq!(counted, 300);
}

/// Standard base64 (the interval log's histogram encoding).
fn base64_decode(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in clean.chunks(4) {
        let n = chunk
            .iter()
            .fold(0u32, |n, &c| n << 6 | u32::from(value(c)))
            << (6 * (4 - chunk.len()));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

const CLUSTERED: &str = r#"
keyspace: clusterks
keyspace_definition: |
  CREATE KEYSPACE clusterks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
table: events
table_definition: |
  CREATE TABLE events (
    k bigint, day int, seq text, payload blob, tags set<text>,
    PRIMARY KEY (k, day, seq))
columnspec:
  - name: k
    population: seq(1..100)
  - name: day
    cluster: uniform(2..4)
  - name: seq
    size: fixed(6)
    cluster: fixed(3)
  - name: tags
    size: uniform(1..3)
insert:
  partitions: fixed(2)
  batchtype: UNLOGGED
  select: fixed(1)/1
queries:
  point:
    cql: select * from events where k = ? and day = ? and seq = ?
    fields: samerow
  range:
    cql: select * from events where k = ? and day >= ? LIMIT 50
    fields: multirow
"#;

#[test]
fn clustering_columns_and_multirow_queries() {
    let node = Node::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("clustered.yaml");
    std::fs::write(&file, CLUSTERED).expect("profile");
    let target = format!("-node 127.0.0.1 -port native={}", node.port);
    let insert = run_ok(&format!(
        "user profile={} ops(insert=1) n=100 no-warmup -pop seq=1..200 -rate threads=4 {target}",
        file.display()
    ));
    assert_eq!(number_after(&insert, "Total partitions"), 200.0);
    let rows = number_after(&insert, "Row rate");
    assert!(
        rows >= 3.0 * number_after(&insert, "Partition rate"),
        "{insert}"
    );
    let read = run_ok(&format!(
        "user profile={} ops(point=1,range=1) n=400 -pop dist=uniform(1..200) -rate threads=4 {target}",
        file.display()
    ));
    assert!(read.contains("Warming up point with"), "{read}");
    assert!(op_row_rate(&read, "point") > 0.0, "{read}");
    assert!(
        op_row_rate(&read, "range") > op_row_rate(&read, "point"),
        "{read}"
    );
}

const VISITED: &str = r#"
keyspace: visitks
keyspace_definition: |
  CREATE KEYSPACE visitks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};
table: visited
table_definition: |
  CREATE TABLE visited (k int, c int, v text, PRIMARY KEY (k, c))
columnspec:
  - name: c
    cluster: fixed(10)
insert:
  partitions: fixed(1)
  select: fixed(1)/1
  visits: fixed(5)
  revisit: fixed(0)
"#;

/// Rows per partition key of `visitks.visited`, read back with the driver.
fn rows_per_partition(port: u16) -> Vec<usize> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let session = scylla::client::session_builder::SessionBuilder::new()
            .known_node(format!("127.0.0.1:{port}"))
            .build()
            .await
            .expect("connect");
        let result = session
            .query_unpaged("SELECT k FROM visitks.visited", ())
            .await
            .expect("select");
        let mut counts = std::collections::BTreeMap::<i32, usize>::new();
        for row in result
            .into_rows_result()
            .expect("rows")
            .rows::<(i32,)>()
            .expect("typed")
        {
            *counts.entry(row.expect("row").0).or_default() += 1;
        }
        counts.into_values().collect()
    })
}

/// `visits: fixed(5)` over partitions of 10 rows: each insert writes the next 2 rows of the
/// partition it holds; `revisit: fixed(0)` always continues the oldest part-written one, so
/// 20 inserts on one thread fill exactly 4 partitions.
#[test]
fn visits_write_a_partition_over_several_inserts() {
    let node = Node::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("visited.yaml");
    std::fs::write(&file, VISITED).expect("profile");
    let insert = run_ok(&format!(
        "user profile={} ops(insert=1) n=20 no-warmup -pop seq=1..100 -rate threads=1 -node 127.0.0.1 -port native={}",
        file.display(),
        node.port
    ));
    assert_eq!(number_after(&insert, "Total partitions"), 20.0, "{insert}");
    let rows = number_after(&insert, "Row rate");
    let partitions = number_after(&insert, "Partition rate");
    assert!((rows / partitions - 2.0).abs() < 0.01, "{insert}");
    assert_eq!(rows_per_partition(node.port), vec![10; 4]);
}
