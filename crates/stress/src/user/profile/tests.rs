//! Profile parsing: both shipped example profiles, defaults, and the errors.

use super::*;

fn shipped(name: &str) -> String {
    let path = format!("{}/profiles/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("shipped profile")
}

fn ops(list: &[(&str, f64)]) -> Vec<(String, f64)> {
    list.iter().map(|(n, w)| (n.to_string(), *w)).collect()
}

#[test]
fn the_example_profile_parses() {
    let p = Profile::parse(
        &shipped("cqlstress-example.yaml"),
        &ops(&[("insert", 1.0), ("range1", 3.0)]),
    )
    .expect("parse");
    assert_eq!(
        (p.keyspace.as_str(), p.table.as_str()),
        ("stresscql", "typestest")
    );
    assert!(p
        .table_definition
        .as_deref()
        .is_some_and(|d| d.contains("PRIMARY KEY((name,choice)")));
    assert_eq!(p.column("name").size, DistSpec::uniform(1, 10));
    assert_eq!(p.column("name").population, DistSpec::uniform(1, 10));
    assert_eq!(p.column("date").cluster, DistSpec::uniform(20, 40));
    assert_eq!(p.column("lval").population, DistSpec::gaussian(1, 1000));
    assert_eq!(p.column("value"), ColumnSpec::default());
    assert_eq!(p.insert.partitions, DistSpec::uniform(1, 50));
    assert_eq!(p.insert.batch, BatchKind::Logged);
    assert_eq!(
        p.insert.select,
        Ratio {
            dist: DistSpec::uniform(1, 10),
            divisor: 10.0
        }
    );
    assert_eq!(p.queries.len(), 2);
    assert!(p.queries.iter().any(|q| q.name == "range1" && q.multirow));
    let phase = p.phase_ops();
    assert_eq!(
        (phase[0].id, phase[1].id, phase[1].name.as_str()),
        (INSERT, 1, "range1")
    );
}

#[test]
fn the_insanity_profile_parses() {
    let p = Profile::parse(
        &shipped("cqlstress-insanity-example.yaml"),
        &ops(&[("insert", 20.0), ("simple1", 80.0)]),
    )
    .expect("parse");
    assert_eq!(p.table, "insanitytest");
    assert_eq!(p.column("date").cluster, DistSpec::gaussian(1, 20));
    assert_eq!(p.column("lval").population, DistSpec::fixed(1));
    assert_eq!(p.insert.select.divisor, 1.0);
    assert!(!p.queries[0].multirow);
}

#[test]
fn defaults_and_errors() {
    let minimal = "keyspace: k\ntable: t\n";
    let p = Profile::parse(minimal, &[]).expect("minimal");
    assert_eq!(p.ops, ops(&[("insert", 1.0)]));
    assert_eq!(p.insert.partitions, DistSpec::fixed(1));
    assert!(Profile::parse(minimal, &ops(&[("nosuch", 1.0)])).is_err());
    let numeric = "keyspace: k\ntable: t\ninsert:\n  partitions: 3\n  batchtype: unlogged\n  select: ~exp(1..10)/10\n";
    let p = Profile::parse(numeric, &[]).expect("numeric");
    assert_eq!(p.insert.partitions, DistSpec::fixed(3));
    assert_eq!(p.insert.batch, BatchKind::Unlogged);
    assert!(p.insert.select.dist.inverted);
    assert!(Profile::parse(
        "keyspace: k\ntable: t\ninsert:\n  batchtype: SOMETIMES\n",
        &[]
    )
    .is_err());
    assert!(Profile::parse(
        "keyspace: k\ntable: t\ninsert:\n  select: fixed(1)/0\n",
        &[]
    )
    .is_err());
    assert!(Profile::parse("keyspace: k\n", &[]).is_err());
    let plain = "keyspace: k\ntable: t\nqueries:\n  q: select * from t where k = ?\n";
    assert_eq!(
        Profile::parse(plain, &ops(&[("q", 1.0)]))
            .expect("plain")
            .queries[0]
            .cql,
        "select * from t where k = ?"
    );
    assert!(Profile::load("/nonexistent/profile.yaml", &[]).is_err());
}

#[test]
fn visits_and_revisit() {
    let p = Profile::parse("keyspace: k\ntable: t\n", &[]).expect("minimal");
    assert_eq!(p.insert.visits, DistSpec::fixed(1));
    assert_eq!(p.insert.revisit, DistSpec::uniform(1, 1_000_000));
    let text =
        "keyspace: k\ntable: t\ninsert:\n  visits: uniform(2..8)\n  revisit: ~exp(1..1000)\n";
    let p = Profile::parse(text, &[]).expect("visits");
    assert_eq!(p.insert.visits, DistSpec::uniform(2, 8));
    assert!(p.insert.revisit.inverted && p.insert.revisit.max() == 1000);
    for bad in [
        "visits: fixed(0)",
        "revisit: uniform(1..3000000000)",
        "visits: often",
    ] {
        let text = format!("keyspace: k\ntable: t\ninsert:\n  {bad}\n");
        assert!(Profile::parse(&text, &[]).is_err(), "{bad}");
    }
}
