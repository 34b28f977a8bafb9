//! `helenus stress ycsb load|run -P workloada [-p key=value …] [-threads N] [-target N]`:
//! YCSB's core workloads against `ycsb.usertable`, reported in YCSB's `[OVERALL]` /
//! `[READ]` … format. Reads and scans use `cassandra.readconsistencylevel`, inserts and
//! updates `cassandra.writeconsistencylevel` (both ONE unless set, as in YCSB's binding).

mod generator;
mod run;
mod status;
mod workload;

use std::io::Write;
use std::process::ExitCode;

use workload::Properties;

/// `load` inserts `recordcount` records; `run` performs `operationcount` operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Load,
    Run,
}

/// A parsed `ycsb` command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub phase: Phase,
    pub props: Properties,
}

/// Parses the words after `ycsb`.
pub fn parse(args: &[String]) -> Result<Config, String> {
    let (phase, rest) = match args.split_first() {
        Some((p, rest)) if p == "load" => (Phase::Load, rest),
        Some((p, rest)) if p == "run" || p == "t" => (Phase::Run, rest),
        _ => return Err(USAGE.into()),
    };
    let mut props = Properties::default();
    let mut words = rest.iter();
    while let Some(w) = words.next() {
        let mut value = || words.next().ok_or_else(|| format!("{w} needs a value"));
        match w.as_str() {
            "-P" => props.load(value()?)?,
            "-p" => props.set(value()?)?,
            "-threads" => props.set(&format!("threadcount={}", value()?))?,
            "-target" => props.set(&format!("target={}", value()?))?,
            "-db" | "-cp" => {
                value()?;
            }
            "-s" => props.set("status=true")?,
            other => return Err(format!("Unknown option {other}\n{USAGE}")),
        }
    }
    Ok(Config { phase, props })
}

const USAGE: &str =
    "Usage: helenus stress ycsb load|run [-P workloada…workloadf|FILE] [-p key=value]… \
                     [-threads N] [-target OPS] [-s]";

/// Runs a YCSB command line, writing YCSB's report to `out` and its status lines (`-s`)
/// to `status`.
pub fn main(args: &[String], out: &mut dyn Write, status: Box<dyn Write + Send>) -> ExitCode {
    let result = parse(args)
        .and_then(|config| crate::runtime()?.block_on(run::run(&config, status)))
        .map(|lines| lines.iter().map(|l| format!("{l}\n")).collect());
    crate::finish(result, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn command_lines() {
        let c = parse(&words("run -P workloada -p recordcount=500 -threads 8 -target 100 -s -db site.ycsb.db.CassandraCQLClient"))
            .expect("parse");
        assert_eq!(c.phase, Phase::Run);
        assert_eq!(c.props.get("recordcount"), Some("500"));
        assert_eq!(c.props.get("threadcount"), Some("8"));
        assert_eq!(c.props.get("target"), Some("100"));
        assert_eq!(c.props.get("requestdistribution"), Some("zipfian"));
        assert_eq!(c.props.get("status"), Some("true"));
        assert_eq!(
            parse(&words("load -P workloadc")).map(|c| c.phase),
            Ok(Phase::Load)
        );
        assert!(parse(&words("drop")).is_err());
        assert!(parse(&words("run -x")).is_err());
        assert!(parse(&words("run -p")).is_err());
    }
}
