//! `netstats`, `getstreamthroughput`, `setstreamthroughput` and `rebuild`, printed as
//! Cassandra 5.0.4 prints them.

use std::collections::BTreeMap;

use admin::types::{RebuildReport, RebuildRequest, StreamSession, StreamThroughput, Streams};

use super::client::Client;
use super::format::file_size;
use super::{node_error, unexpected, Failure, Output};

const MIB: u64 = 1024 * 1024;
/// Cassandra's megabit: a million bits.
const MEGABIT_BYTES: u64 = 125_000;

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    match command {
        "netstats" => {
            let human = match args {
                [] => false,
                [flag] if flag == "-H" || flag == "--human-readable" => true,
                _ => return Err(unexpected(args)),
            };
            let streams: Streams = client.get("/v1/streams").map_err(node_error)?;
            Ok(netstats(&streams, human))
        }
        "getstreamthroughput" => {
            let flag = one_flag(args)?;
            let t: StreamThroughput = client
                .get("/v1/settings/stream_throughput")
                .map_err(node_error)?;
            get_throughput(&t, flag.as_deref())
        }
        "setstreamthroughput" => {
            let body = set_throughput(args)?;
            let _: StreamThroughput = client
                .put("/v1/settings/stream_throughput", &body)
                .map_err(node_error)?;
            Ok(String::new())
        }
        "rebuild" => {
            let request = rebuild_request(args)?;
            let _: RebuildReport = client.post("/v1/rebuild", &request).map_err(node_error)?;
            Ok(String::new())
        }
        _ => Err(unexpected(&[command.to_string()])),
    }
}

/// `netstats`: the mode, each stream plan with its sessions, read repairs and messages.
pub fn netstats(streams: &Streams, human: bool) -> String {
    let mut out = format!("Mode: {}\n", streams.mode);
    let running: Vec<&StreamSession> = streams
        .sessions
        .iter()
        .filter(|s| s.state == "preparing" || s.state == "streaming")
        .collect();
    if running.is_empty() {
        out.push_str("Not sending any streams.\n");
    }
    let mut by_plan: BTreeMap<(&str, &str), Vec<&StreamSession>> = BTreeMap::new();
    for session in running {
        by_plan
            .entry((&session.description, &session.id))
            .or_default()
            .push(session);
    }
    for ((description, id), sessions) in by_plan {
        out.push_str(&format!("{description} {id}\n"));
        for session in sessions {
            let host = session.peer.split(':').next().unwrap_or(&session.peer);
            out.push_str(&format!("    /{host}\n"));
            out.push_str(&summary(session, human));
        }
    }
    out.push_str(&format!(
        "Read Repair Statistics:\nAttempted: {}\nMismatch (Blocking): {}\nMismatch (Background): 0\n",
        streams.read_repairs, streams.read_repairs
    ));
    out.push_str(&format!(
        "{:<25}{:>10}{:>10}{:>15}{:>10}\n",
        "Pool Name", "Active", "Pending", "Completed", "Dropped"
    ));
    for pool in &streams.messages {
        out.push_str(&format!(
            "{:<25}{:>10}{:>10}{:>15}{:>10}\n",
            pool.name, "n/a", pool.pending, pool.completed, pool.dropped
        ));
    }
    out
}

/// "Receiving 3 files, 1024 bytes total. Already received 1 files (33.33%), ..."
fn summary(s: &StreamSession, human: bool) -> String {
    let (verb, done) = if s.direction == "Receiving" {
        ("Receiving", "received")
    } else {
        ("Sending", "sent")
    };
    let size = |bytes: u64| {
        if human {
            file_size(bytes)
        } else {
            format!("{bytes} bytes")
        }
    };
    format!(
        "        {verb} {} files, {} total. Already {done} {} files ({}), {} total ({})\n",
        s.files_total,
        size(s.bytes_total),
        s.files_done,
        percent(s.files_done, s.files_total),
        size(s.bytes_done),
        percent(s.bytes_done, s.bytes_total),
    )
}

/// Java's `%.2f%%` of done/total, `NaN%` for 0/0 as Java prints it.
fn percent(done: u64, total: u64) -> String {
    if total == 0 {
        return if done == 0 {
            "NaN%".into()
        } else {
            "Infinity%".into()
        };
    }
    format!("{:.2}%", done as f64 * 100.0 / total as f64)
}

fn one_flag(args: &[String]) -> Result<Option<String>, Failure> {
    match args {
        [] => Ok(None),
        [flag] if ["-e", "-m", "-d"].contains(&flag.as_str()) => Ok(Some(flag.clone())),
        [_] => Err(unexpected(args)),
        _ => Err(Failure::Usage(
            "You cannot use more than one flag with this command".into(),
        )),
    }
}

/// As Cassandra 5.0.4 prints it: megabits per second by default (refused when the rate is no
/// whole number of them: `-d` prints it exactly), MiB/s with `-m`, the entire-SSTable
/// throttle in MiB/s with `-e`; `unlimited` for 0.
fn get_throughput(t: &StreamThroughput, flag: Option<&str>) -> Output {
    let (label, rate) = match flag {
        Some("-e") => (
            "Current entire SSTable stream throughput",
            t.entire_sstable_bytes_per_second.unwrap_or(0),
        ),
        _ => ("Current stream throughput", t.bytes_per_second.unwrap_or(0)),
    };
    let value =
        match flag {
            _ if rate == 0 => "unlimited".to_string(),
            Some("-e") | Some("-m") => format!("{:?} MiB/s", rate as f64 / MIB as f64),
            Some(_) => format!("{:?} Mb/s", rate as f64 / MEGABIT_BYTES as f64),
            None if rate % MEGABIT_BYTES == 0 => format!("{} Mb/s", rate / MEGABIT_BYTES),
            None => return Err(Failure::Node(
                "Use the -d flag to quiet this error and get the exact throughput in megabits/s"
                    .into(),
            )),
        };
    Ok(format!("{label}: {value}\n"))
}

/// `setstreamthroughput [-e | -m] <value>`: megabits per second, or MiB/s with `-m`, or the
/// entire-SSTable throttle in MiB/s with `-e`; 0 disables the throttle.
fn set_throughput(args: &[String]) -> Result<StreamThroughput, Failure> {
    let (flags, values): (Vec<&String>, Vec<&String>) =
        args.iter().partition(|a| a.starts_with('-'));
    let (entire, mib) = (
        flags
            .iter()
            .any(|f| *f == "-e" || *f == "--entire-sstable-throughput"),
        flags.iter().any(|f| *f == "-m" || *f == "--mib"),
    );
    if entire && mib {
        return Err(Failure::Usage(
            "You cannot use -e and -m at the same time".into(),
        ));
    }
    let value: Vec<String> = values.into_iter().cloned().collect();
    let number = super::compaction::one_number(&value, "stream_throughput")?;
    let bytes = |unit: u64| {
        number
            .checked_mul(unit)
            .ok_or_else(|| Failure::Usage(format!("stream throughput {number} is too large")))
    };
    Ok(if entire {
        StreamThroughput {
            entire_sstable_bytes_per_second: Some(bytes(MIB)?),
            ..StreamThroughput::default()
        }
    } else {
        let unit = if mib { MIB } else { MEGABIT_BYTES };
        StreamThroughput {
            bytes_per_second: Some(bytes(unit)?),
            ..StreamThroughput::default()
        }
    })
}

/// `rebuild [-ks keyspace] [source_dc]`.
fn rebuild_request(args: &[String]) -> Result<RebuildRequest, Failure> {
    let mut request = RebuildRequest::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "-ks" | "--keyspace" => {
                let keyspace = rest.next().ok_or_else(|| {
                    Failure::Usage(format!("Required values for option '{arg}' not provided"))
                })?;
                request.keyspace = Some(keyspace.clone());
            }
            dc if request.source_dc.is_none() && !dc.starts_with('-') => {
                request.source_dc = Some(dc.to_string());
            }
            _ => return Err(unexpected(std::slice::from_ref(arg))),
        }
    }
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use admin::types::MessagePool;

    fn session(direction: &str, done: u64) -> StreamSession {
        StreamSession {
            id: "5a0c7b2e-0000-4000-8000-000000000001".into(),
            description: "Rebuild".into(),
            peer: "127.0.0.2:7000".into(),
            direction: direction.into(),
            state: "streaming".into(),
            failure: None,
            files_total: 3,
            files_done: 1,
            bytes_total: 3000,
            bytes_done: done,
            started_ms: 0,
            elapsed_ms: 5,
        }
    }

    #[test]
    fn netstats_prints_sessions_as_cassandra() {
        let streams = Streams {
            mode: "NORMAL".into(),
            sessions: vec![session("Receiving", 1000)],
            read_repairs: 2,
            messages: vec![MessagePool {
                name: "Large messages".into(),
                pending: 0,
                completed: 12,
                dropped: 1,
            }],
        };
        let text = netstats(&streams, false);
        assert_eq!(
            text,
            "Mode: NORMAL\n\
             Rebuild 5a0c7b2e-0000-4000-8000-000000000001\n    /127.0.0.2\n        \
             Receiving 3 files, 3000 bytes total. Already received 1 files (33.33%), \
             1000 bytes total (33.33%)\n\
             Read Repair Statistics:\nAttempted: 2\nMismatch (Blocking): 2\nMismatch (Background): 0\n\
             Pool Name                    Active   Pending      Completed   Dropped\n\
             Large messages                  n/a         0             12         1\n"
        );
        let idle = Streams {
            sessions: vec![],
            ..streams
        };
        assert!(netstats(&idle, false).contains("Mode: NORMAL\nNot sending any streams.\n"));
    }

    #[test]
    fn stream_throughput_units() {
        let t = StreamThroughput {
            bytes_per_second: Some(24 * MIB),
            entire_sstable_bytes_per_second: Some(24 * MIB),
        };
        // Cassandra 5.0.4's answers (refcass).
        assert_eq!(
            get_throughput(&t, None).unwrap_err(),
            Failure::Node(
                "Use the -d flag to quiet this error and get the exact throughput in megabits/s"
                    .into()
            )
        );
        let get = |t: &StreamThroughput, flag| get_throughput(t, flag).unwrap();
        assert_eq!(
            get(&t, Some("-d")),
            "Current stream throughput: 201.326592 Mb/s\n"
        );
        assert_eq!(
            get(&t, Some("-m")),
            "Current stream throughput: 24.0 MiB/s\n"
        );
        assert_eq!(
            get(&t, Some("-e")),
            "Current entire SSTable stream throughput: 24.0 MiB/s\n"
        );
        let megabits = StreamThroughput {
            bytes_per_second: Some(200 * MEGABIT_BYTES),
            ..t.clone()
        };
        assert_eq!(
            get(&megabits, None),
            "Current stream throughput: 200 Mb/s\n"
        );
        assert_eq!(
            get(&megabits, Some("-m")),
            "Current stream throughput: 23.84185791015625 MiB/s\n"
        );
        assert_eq!(
            get(&megabits, Some("-d")),
            "Current stream throughput: 200.0 Mb/s\n"
        );
        let off = StreamThroughput {
            bytes_per_second: Some(0),
            entire_sstable_bytes_per_second: Some(0),
        };
        for flag in [None, Some("-m"), Some("-d")] {
            assert_eq!(get(&off, flag), "Current stream throughput: unlimited\n");
        }
        assert_eq!(
            get(&off, Some("-e")),
            "Current entire SSTable stream throughput: unlimited\n"
        );
        let set =
            |args: &[&str]| set_throughput(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(set(&["8"]).unwrap().bytes_per_second, Some(1_000_000));
        assert_eq!(set(&["-m", "2"]).unwrap().bytes_per_second, Some(2 * MIB));
        assert_eq!(
            set(&["-e", "3"]).unwrap().entire_sstable_bytes_per_second,
            Some(3 * MIB)
        );
        assert_eq!(
            set(&["-e", "-m", "3"]).unwrap_err(),
            Failure::Usage("You cannot use -e and -m at the same time".into())
        );
    }

    #[test]
    fn rebuild_takes_a_source_dc_and_a_keyspace() {
        let args: Vec<String> = ["-ks", "ks1", "dc2"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let request = rebuild_request(&args).unwrap();
        assert_eq!(request.source_dc.as_deref(), Some("dc2"));
        assert_eq!(request.keyspace.as_deref(), Some("ks1"));
        assert_eq!(rebuild_request(&[]).unwrap(), RebuildRequest::default());
    }
}
