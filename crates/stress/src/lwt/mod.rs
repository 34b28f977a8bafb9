//! `helenus stress lwt uncontended|contended [-node A,B…] [-port P] [-threads N]
//! [-duration S] [-rf N]`: lightweight-transaction throughput and latency.
//!
//! Uncontended: each operation an `INSERT … IF NOT EXISTS` of a new partition or an
//! `UPDATE … IF v = ?` of one the same worker inserted, so no two operations share a
//! partition. Contended: every worker runs `UPDATE … IF v = ?` on one partition, expecting the
//! value it saw last. Prints one JSON object: operations, `[applied]` true and false, errors,
//! seconds, operations per second, and p50/p99/max latency in milliseconds.

mod run;

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

/// Whether the workers share one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contention {
    Uncontended,
    Contended,
}

impl Contention {
    fn name(self) -> &'static str {
        match self {
            Contention::Uncontended => "uncontended",
            Contention::Contended => "contended",
        }
    }
}

/// A parsed `lwt` command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub contention: Contention,
    pub nodes: Vec<String>,
    pub port: u16,
    pub threads: u32,
    pub duration: Duration,
    pub replication_factor: u32,
}

const USAGE: &str = "Usage: helenus stress lwt uncontended|contended [-node A,B…] [-port P] \
                     [-threads N] [-duration SECONDS] [-rf N]";

/// Parses the words after `lwt`.
pub fn parse(args: &[String]) -> Result<Config, String> {
    let contention = match args.first().map(String::as_str) {
        Some("uncontended") => Contention::Uncontended,
        Some("contended") => Contention::Contended,
        _ => return Err(USAGE.into()),
    };
    let mut config = Config {
        contention,
        nodes: vec!["localhost".into()],
        port: 9042,
        threads: 10,
        duration: Duration::from_secs(10),
        replication_factor: 1,
    };
    let mut words = args[1..].iter();
    while let Some(word) = words.next() {
        let value = words
            .next()
            .ok_or_else(|| format!("{word} needs a value\n{USAGE}"))?;
        let number = |what: &str| {
            value
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{what} must be a positive number, not {value}"))
        };
        match word.as_str() {
            "-node" => config.nodes = value.split(',').map(str::to_string).collect(),
            "-port" => config.port = u16::try_from(number("-port")?).map_err(|e| e.to_string())?,
            "-threads" => config.threads = number("-threads")?,
            "-duration" => config.duration = Duration::from_secs(u64::from(number("-duration")?)),
            "-rf" => config.replication_factor = number("-rf")?,
            other => return Err(format!("Unknown option {other}\n{USAGE}")),
        }
    }
    Ok(config)
}

/// Runs an `lwt` command line, writing its JSON report to `out`.
pub fn main(args: &[String], out: &mut dyn Write) -> ExitCode {
    let result = parse(args).and_then(|config| {
        let report = crate::runtime()?.block_on(run::run(&config))?;
        Ok(format!("{}\n", report.json(&config)))
    });
    crate::finish(result, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn options_and_defaults() {
        let config = parse(&words(
            "contended -node 127.0.0.1,127.0.0.2 -threads 4 -duration 3 -rf 3 -port 9043",
        ))
        .unwrap();
        assert_eq!(
            config,
            Config {
                contention: Contention::Contended,
                nodes: vec!["127.0.0.1".into(), "127.0.0.2".into()],
                port: 9043,
                threads: 4,
                duration: Duration::from_secs(3),
                replication_factor: 3,
            }
        );
        let defaults = parse(&words("uncontended")).unwrap();
        assert_eq!((defaults.threads, defaults.replication_factor), (10, 1));
    }

    #[test]
    fn bad_command_lines_are_refused() {
        assert_eq!(parse(&words("")).unwrap_err(), USAGE);
        assert_eq!(parse(&words("sometimes")).unwrap_err(), USAGE);
        assert!(parse(&words("contended -threads 0"))
            .unwrap_err()
            .contains("-threads"));
        assert!(parse(&words("contended -threads"))
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse(&words("contended -colour red"))
            .unwrap_err()
            .contains("Unknown option"));
    }
}
