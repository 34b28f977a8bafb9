//! Command-line tests: every option form, the seed command lines of the reference documents,
//! and the errors.

use std::time::Duration;

use super::*;
use crate::settings::{Limit, OpKind, Population, Rate, Stop};

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

fn settings(line: &str) -> Settings {
    match parse(&words(line)) {
        Ok(Invocation::Stress(s)) => *s,
        other => panic!("{line}: {other:?}"),
    }
}

fn error(line: &str) -> CliError {
    match parse(&words(line)) {
        Err(e) => e,
        Ok(other) => panic!("{line} parsed: {other:?}"),
    }
}

#[test]
fn seed_command_lines_parse_as_written() {
    let s = settings("write n=10000 -rate threads=50");
    assert_eq!(
        (s.command.stop.clone(), s.rate.clone()),
        (
            Stop::Count(10000),
            Rate::Threads {
                threads: 50,
                limit: None
            }
        )
    );
    assert_eq!(
        s.population,
        Population::Seq {
            start: 1,
            end: 10000,
            wrap: true
        }
    );
    let s = settings("read n=10000 -rate threads=50");
    assert_eq!(s.population, Population::Dist(DistSpec::gaussian(1, 10000)));
    assert_eq!(parse(&words("help")), Ok(Invocation::Help(None)));
    let s = settings(
        "user profile=/cass/tools/cql-insanity-example.yaml ops(insert=1) no-warmup cl=ONE n=1000000 \
         -mode native cql3 \u{2013}pop seq=1..1000000 -node 10.0.0.1 -rate threads=32",
    );
    let user = s.command.user.clone().expect("user");
    assert_eq!(user.ops, vec![("insert".to_string(), 1.0)]);
    assert_eq!(
        (s.command.consistency.as_str(), s.command.no_warmup),
        ("ONE", true)
    );
    assert_eq!(
        s.population,
        Population::Seq {
            start: 1,
            end: 1_000_000,
            wrap: true
        }
    );
    let s = settings(
        "user profile=/cass/tools/cql-insanity-example.yaml ops(insert=20,simple1=80) no-warmup cl=ONE duration=600s \
         -mode native cql3 \u{2013}pop dist=uniform(1..1000000) -node 10.0.0.1 -rate threads=64",
    );
    assert_eq!(s.command.user.map(|u| u.ops.len()), Some(2));
    assert!(matches!(
        s.command.stop,
        Stop::Duration {
            amount: 600,
            unit: "seconds",
            ..
        }
    ));
    assert_eq!(
        s.population,
        Population::Dist(DistSpec::uniform(1, 1_000_000))
    );
}

#[test]
fn command_options() {
    let s = settings("mixed ratio(write=1,read=3) n=2000 cl=quorum no-warmup");
    assert_eq!(
        s.command.ops,
        vec![(OpKind::Write, 1.0), (OpKind::Read, 3.0)]
    );
    assert_eq!(s.command.consistency, "QUORUM");
    let s = settings("read duration=5m");
    assert!(
        matches!(s.command.stop, Stop::Duration { time, .. } if time == Duration::from_secs(300))
    );
    assert!(matches!(
        settings("read duration=2h").command.stop,
        Stop::Duration {
            amount: 2,
            unit: "hours",
            ..
        }
    ));
    let s = settings("read err<0.05 n>10 n<50");
    assert_eq!(
        s.command.stop,
        Stop::Uncertainty {
            target: 0.05,
            min: 10,
            max: 50
        }
    );
    assert_eq!(
        settings("read").command.stop,
        Stop::Uncertainty {
            target: 0.02,
            min: 30,
            max: 200
        }
    );
    assert_eq!(settings("write n=1M").command.count(), Some(1_000_000));
    let s = settings("counter_write n=10 add=uniform(1..5)");
    assert_eq!(s.command.add, DistSpec::uniform(1, 5));
    assert_eq!(
        settings("counter_read n=10").command.ops,
        vec![(OpKind::CounterRead, 1.0)]
    );
    assert_eq!(settings("mixed n=10").command.ops.len(), 2);
    assert_eq!(parse(&words("version")), Ok(Invocation::Version));
    assert_eq!(
        parse(&words("print dist=fixed(3)")),
        Ok(Invocation::Print(DistSpec::fixed(3)))
    );
    assert_eq!(
        parse(&words("help -rate")),
        Ok(Invocation::Help(Some("-rate".into())))
    );
}

#[test]
fn rate_forms() {
    assert_eq!(
        settings("write n=1 -rate threads=8 fixed=200/s").rate,
        Rate::Threads {
            threads: 8,
            limit: Some(Limit {
                per_second: 200,
                fixed: true
            })
        }
    );
    assert_eq!(
        settings("write n=1 -rate threads=8 throttle=600/m").rate,
        Rate::Threads {
            threads: 8,
            limit: Some(Limit {
                per_second: 10,
                fixed: false
            })
        }
    );
    assert_eq!(
        settings("write n=1 -rate threads>=4 threads<=64").rate,
        Rate::Auto {
            min: 4,
            max: 64,
            auto: false
        }
    );
    assert_eq!(
        settings("write n=1 -rate auto threads>=8").rate,
        Rate::Auto {
            min: 8,
            max: 1000,
            auto: true
        }
    );
    assert_eq!(
        settings("write n=100").rate,
        Rate::Threads {
            threads: 200,
            limit: None
        }
    );
    assert_eq!(
        settings("read n=100").rate,
        Rate::Auto {
            min: 4,
            max: 1000,
            auto: true
        }
    );
}

#[test]
fn group_forms() {
    let s = settings(
        "write n=10 -pop seq=5..50 no-wrap -node a,b:9043 datacenter=dc2 -port native=9999 jmx=7000 \
         -mode native cql3 protocolVersion=4 compression=lz4 user=u password=p \
         -col n=FIXED(3) size=uniform(10..20) \
         -schema replication(strategy=NetworkTopologyStrategy factor=3) keyspace=ks2 compaction(strategy=LeveledCompactionStrategy) compression=LZ4Compressor \
         -log interval=500ms file=out.log hdrfile=h.hdr -graph file=g.html title=T revision=r1 -errors ignore retries=2",
    );
    assert_eq!(
        s.population,
        Population::Seq {
            start: 5,
            end: 50,
            wrap: false
        }
    );
    assert_eq!(
        (s.nodes.clone(), s.datacenter.clone()),
        (
            vec!["a".to_string(), "b:9043".to_string()],
            Some("dc2".to_string())
        )
    );
    assert_eq!((s.native_port, s.jmx_port), (9999, 7000));
    assert_eq!(
        (
            s.mode.protocol_version,
            s.mode.compression.as_deref(),
            s.mode.user.as_deref()
        ),
        (4, Some("lz4"), Some("u"))
    );
    assert_eq!(s.columns.names, vec!["C0", "C1", "C2"]);
    assert_eq!(s.columns.size, DistSpec::uniform(10, 20));
    assert_eq!(
        s.schema.strategy,
        "org.apache.cassandra.locator.NetworkTopologyStrategy"
    );
    assert_eq!(
        s.schema.replication,
        vec![("replication_factor".to_string(), "3".to_string())]
    );
    assert_eq!(
        (s.schema.keyspace.as_str(), s.schema.compaction.as_deref()),
        ("ks2", Some("LeveledCompactionStrategy"))
    );
    assert_eq!(s.log.interval, Duration::from_millis(500));
    assert_eq!(
        (s.log.file.as_deref(), s.log.hdr_file.as_deref()),
        (Some("out.log"), Some("h.hdr"))
    );
    assert_eq!(
        (s.graph.file.as_deref(), s.graph.revision.as_str()),
        (Some("g.html"), "r1")
    );
    assert_eq!((s.errors.ignore, s.errors.tries), (true, 3));
    let s = settings("read n=10 -pop dist=gaussian(1..100,5) -schema replication(factor=2)");
    assert_eq!(
        s.population,
        Population::Dist(DistSpec::parse("gaussian(1..100,5)").expect("dist"))
    );
    for d in [
        "exp(1..10)",
        "extreme(1..10,2)",
        "fixed(4)",
        "uniform(1..9)",
    ] {
        let s = settings(&format!("read n=10 -pop dist={d}"));
        assert_eq!(
            s.population,
            Population::Dist(DistSpec::parse(d).expect("dist"))
        );
    }
}

#[test]
fn errors_print_usage() {
    let e = error("write n=10 -rate threads=4 bogus=1");
    assert_eq!(e.usage.as_deref(), Some("-rate"));
    assert!(e.message.contains("bogus=1"));
    assert_eq!(error("write n=10 foo=bar").usage.as_deref(), Some("write"));
    assert!(error("write n=10 -unknown x").message.contains("-unknown"));
    assert!(error("frobnicate").message.contains("Unknown command"));
    assert!(error("write n=10 duration=10s")
        .message
        .contains("only one"));
    assert!(error("write n=abc").message.contains("n=abc"));
    assert!(error("write n=1 -pop dist=zipf(1..3)")
        .message
        .contains("zipf"));
    assert!(error("write n=1 -rate threads=4 -rate threads=5")
        .message
        .contains("twice"));
    assert!(error("write n=1 -schema replication(factor=3")
        .message
        .contains("Unbalanced"));
    assert!(error("mixed ratio(write=1,delete=2) n=1").usage.is_some());
    assert!(error("user n=1").message.contains("profile"));
    assert!(error("write n=1 -mode protocolVersion=3")
        .message
        .contains("not supported"));
    assert_eq!(parse(&[]).map_err(|e| e.usage), Err(Some(String::new())));
}

#[test]
fn arguments_are_split_at_whitespace_as_the_apache_script_does() {
    let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let one_argument = parse(&args(&["mixed ratio(write=1,read=3)", "n=100"]));
    let separate = parse(&words("mixed ratio(write=1,read=3) n=100"));
    assert_eq!(one_argument, separate);
    let Ok(Invocation::Stress(s)) = one_argument else {
        panic!("{one_argument:?}");
    };
    assert_eq!(
        s.command.ops,
        vec![(OpKind::Write, 1.0), (OpKind::Read, 3.0)]
    );
    let spaced = parse(&args(&["write", " n=5 ", "", "-rate\tthreads=2"]));
    assert_eq!(spaced, parse(&words("write n=5 -rate threads=2")));
}
