//! `scrub` and `verify` (`[options] [<keyspace> <tables>...]`), and `statusbinary`,
//! `enablebinary` and `disablebinary`.

use admin::types::{BinaryStatus, ScrubDone, ScrubRequest, VerifyDone, VerifyRequest};

use super::client::Client;
use super::tables::{as_usage, selection};
use super::{no_args, node_error, Failure, Output};

/// Cassandra 5.0's refusal of `verify` without `--force`.
const VERIFY_DISABLED: &str = "verify is disabled unless a [-f|--force] override flag is \
                               provided. See CASSANDRA-9947 and CASSANDRA-17017 for details.";

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    match command {
        "scrub" => scrub(client, args),
        "verify" => verify(client, args),
        _ => binary(client, command, args),
    }
}

/// `[(-ns | --no-snapshot)] [(-s | --skip-corrupted)] [(-j | --jobs) <jobs>] [<keyspace>
/// <tables>...]`. Unreadable partitions are always skipped (`-s` is Cassandra's default for
/// tables without counters); SSTables are scrubbed one at a time whatever `-j` says.
fn scrub(client: &Client, args: &[String]) -> Output {
    let mut request = ScrubRequest::default();
    let mut positional = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-ns" | "--no-snapshot" => request.no_snapshot = true,
            "-s" | "--skip-corrupted" => {}
            "-j" | "--jobs" => {
                let jobs = words.next().ok_or_else(|| missing_value(word))?;
                jobs.parse::<u32>().map_err(|_| {
                    Failure::Usage(format!("jobs must be a whole number, not {jobs}"))
                })?;
            }
            _ => positional.push(word.clone()),
        }
    }
    request.selection = selection(&positional)?;
    let done: ScrubDone = client.post("/v1/scrub", &request).map_err(as_usage)?;
    let mut out = String::new();
    for table in done.tables.iter().filter(|t| t.dropped_partitions > 0) {
        out.push_str(&format!(
            "Scrubbed {}: {} partitions kept, {} unreadable partitions dropped\n",
            table.table, table.partitions, table.dropped_partitions
        ));
        for problem in &table.problems {
            out.push_str(&format!("\t{problem}\n"));
        }
    }
    if let Some(busy) = done.tables.iter().find(|t| t.skipped > 0) {
        let keyspace = busy.table.split('.').next().unwrap_or_default();
        return Err(Failure::Node(format!(
            "{out}Failed marking some sstables compacting in keyspace {keyspace}, check server logs for more information"
        )));
    }
    Ok(out)
}

/// `(-f | --force) [(-e | --extended-verify)] [(-d | --dfp)] [<keyspace> <tables>...]`.
fn verify(client: &Client, args: &[String]) -> Output {
    let mut request = VerifyRequest::default();
    let mut forced = false;
    let mut positional = Vec::new();
    for word in args {
        match word.as_str() {
            "-f" | "--force" => forced = true,
            "-e" | "--extended-verify" => request.extended = true,
            "-d" | "--dfp" => request.disk_failure_policy = true,
            _ => positional.push(word.clone()),
        }
    }
    if !forced {
        return Err(Failure::Usage(VERIFY_DISABLED.to_string()));
    }
    request.selection = selection(&positional)?;
    let done: VerifyDone = client.post("/v1/verify", &request).map_err(as_usage)?;
    let mut report = String::new();
    for table in &done.tables {
        for corrupt in &table.corrupt {
            let problems = corrupt.problems.join("; ");
            report.push_str(&format!(
                "Corrupt SSTable {} of {}: {problems}\n",
                corrupt.data_file, table.table
            ));
        }
    }
    match done.tables.iter().find(|t| !t.corrupt.is_empty()) {
        Some(table) => {
            let keyspace = table.table.split('.').next().unwrap_or_default();
            Err(Failure::Node(format!(
                "{report}Aborted verifying at least one table in keyspace {keyspace}, check server logs for more information."
            )))
        }
        None => Ok(String::new()),
    }
}

fn binary(client: &Client, command: &str, args: &[String]) -> Output {
    switch(client, command, args, "/v1/binary", "/v1/binary")
}

/// A service `enable…`, `disable…` or `status…` drives (native transport, gossip): POST
/// `<base>/enable` or `<base>/disable`, or GET `status`; `status…` prints whether it runs.
pub(crate) fn switch(
    client: &Client,
    command: &str,
    args: &[String],
    base: &str,
    status: &str,
) -> Output {
    no_args(args)?;
    let state: BinaryStatus = if command.starts_with("enable") {
        client.post(&format!("{base}/enable"), &serde_json::json!({}))
    } else if command.starts_with("disable") {
        client.post(&format!("{base}/disable"), &serde_json::json!({}))
    } else {
        client.get(status)
    }
    .map_err(node_error)?;
    Ok(match (command.starts_with("status"), state.running) {
        (true, true) => "running\n".to_string(),
        (true, false) => "not running\n".to_string(),
        _ => String::new(),
    })
}

fn missing_value(option: &str) -> Failure {
    Failure::Usage(format!(
        "Required values for option '{option}' not provided"
    ))
}
