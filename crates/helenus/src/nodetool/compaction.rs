//! `compactionstats`, `compactionhistory`, `get/setcompactionthroughput` and
//! `get/setconcurrentcompactors`, printed as Cassandra 5.0.4 does.

use admin::types::{
    CompactionHistoryEntry, CompactionStats, CompactionThroughput, ConcurrentCompactors,
};

use super::client::Client;
use super::format::{file_size, java_double, TableBuilder};
use super::{no_args, node_error, unexpected, Failure, Output};

const MIB: f64 = 1024.0 * 1024.0;

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    match command {
        "compactionstats" => {
            let human = parse_human(args)?;
            Ok(compactionstats(
                &client.get("/v1/compactions").map_err(node_error)?,
                human,
            ))
        }
        "compactionhistory" => {
            no_args(args)?;
            let entries: Vec<CompactionHistoryEntry> =
                client.get("/v1/compactions/history").map_err(node_error)?;
            Ok(compactionhistory(&entries))
        }
        "getcompactionthroughput" => {
            no_args(args)?;
            let t: CompactionThroughput = client
                .get("/v1/settings/compaction_throughput")
                .map_err(node_error)?;
            Ok(format!(
                "Current compaction throughput: {} MB/s\n",
                t.mib_per_second
            ))
        }
        "setcompactionthroughput" => {
            let value = one_number(args, "compaction_throughput")?;
            let body = CompactionThroughput {
                mib_per_second: value,
            };
            let _: CompactionThroughput = client
                .put("/v1/settings/compaction_throughput", &body)
                .map_err(node_error)?;
            Ok(String::new())
        }
        "getconcurrentcompactors" => {
            no_args(args)?;
            let c: ConcurrentCompactors = client
                .get("/v1/settings/concurrent_compactors")
                .map_err(node_error)?;
            Ok(format!(
                "Current concurrent compactors in the system is: \n{}\n",
                c.value
            ))
        }
        "setconcurrentcompactors" => {
            let value = one_number(args, "concurrent_compactors")?;
            if value == 0 {
                return Err(Failure::Usage(
                    "concurrent_compactors should be great than 0.".into(),
                ));
            }
            let body = ConcurrentCompactors { value };
            let _: ConcurrentCompactors = client
                .put("/v1/settings/concurrent_compactors", &body)
                .map_err(node_error)?;
            Ok(String::new())
        }
        _ => Err(unexpected(&[command.to_string()])),
    }
}

fn parse_human(args: &[String]) -> Result<bool, Failure> {
    let mut human = false;
    for arg in args {
        match arg.as_str() {
            "-H" | "--human-readable" => human = true,
            _ => return Err(unexpected(std::slice::from_ref(arg))),
        }
    }
    Ok(human)
}

/// The single non-negative integer argument named `name`.
pub fn one_number(args: &[String], name: &str) -> Result<u64, Failure> {
    one_value(args, name, "Integer")
}

/// The single argument `name`, parsed as `T` (`java_type` names it in Cassandra's complaint).
pub fn one_value<T: std::str::FromStr>(
    args: &[String],
    name: &str,
    java_type: &str,
) -> Result<T, Failure> {
    match args {
        [] => Err(Failure::Usage(format!(
            "Required parameters are missing: {name}"
        ))),
        [value] => value.parse().map_err(|_| {
            Failure::Usage(format!(
                "{name}: can not convert \"{value}\" to a {java_type}"
            ))
        }),
        [_, extra @ ..] => Err(unexpected(extra)),
    }
}

/// Cassandra 5.0's `compactionstats`: one table of figures, then the running tasks.
pub fn compactionstats(s: &CompactionStats, human: bool) -> String {
    let bytes = |b: u64| if human { file_size(b) } else { b.to_string() };
    let mut table = TableBuilder::new(" ");
    table.add([
        "concurrent compactors".to_string(),
        s.concurrent_compactors.to_string(),
    ]);
    let pending: u64 = s.pending.iter().map(|p| p.tasks).sum();
    table.add(["pending tasks".to_string(), pending.to_string()]);
    for p in &s.pending {
        table.add([p.keyspace.clone(), p.table.clone(), p.tasks.to_string()]);
    }
    table.add(["compactions completed".to_string(), s.completed.to_string()]);
    table.add(["data compacted".to_string(), bytes(s.bytes_compacted)]);
    for name in [
        "compactions aborted",
        "compactions reduced",
        "sstables dropped from compaction",
    ] {
        table.add([name, "0"]);
    }
    table.add([
        "15 minute rate".to_string(),
        format!("{}/minute", two(s.fifteen_minute_rate_per_minute)),
    ]);
    table.add([
        "mean rate".to_string(),
        format!("{}/hour", two(s.mean_rate_per_second * 3600.0)),
    ]);
    let throughput = match s.throughput_bytes_per_second {
        0 => "throttling disabled (0)".to_string(),
        b => java_double(b as f64 / MIB),
    };
    table.add(["compaction throughput (MiB/s)".to_string(), throughput]);
    if !s.active.is_empty() {
        active(s, &mut table, bytes);
    }
    table.render()
}

/// `DecimalFormat("0.00")`.
fn two(value: f64) -> String {
    format!("{value:.2}")
}

fn active(s: &CompactionStats, table: &mut TableBuilder, bytes: impl Fn(u64) -> String) {
    table.add([
        "id",
        "compaction type",
        "keyspace",
        "table",
        "completed",
        "total",
        "unit",
        "progress",
    ]);
    let mut remaining = 0;
    for c in &s.active {
        let progress = match c.total {
            0 => "n/a".to_string(),
            total => format!("{:.2}%", c.completed as f64 / total as f64 * 100.0),
        };
        table.add([
            c.id.clone(),
            c.kind.clone(),
            c.keyspace.clone(),
            c.table.clone(),
            bytes(c.completed),
            bytes(c.total),
            c.unit.clone(),
            progress,
        ]);
        remaining += c.total.saturating_sub(c.completed);
    }
    let time = match s.throughput_bytes_per_second {
        0 => "n/a".to_string(),
        rate => {
            let secs = remaining / rate;
            format!("{}h{:02}m{:02}s", secs / 3600, secs % 3600 / 60, secs % 60)
        }
    };
    table.add(["active compaction remaining time".to_string(), time]);
}

pub fn compactionhistory(entries: &[CompactionHistoryEntry]) -> String {
    if entries.is_empty() {
        return "There is no compaction history\n".to_string();
    }
    let mut table = TableBuilder::new(" ");
    table.add([
        "id",
        "keyspace_name",
        "columnfamily_name",
        "compacted_at",
        "bytes_in",
        "bytes_out",
        "rows_merged",
        "compaction_properties",
    ]);
    for e in entries {
        table.add([
            e.id.clone(),
            e.keyspace.clone(),
            e.table.clone(),
            local_date_time(e.compacted_at_ms),
            e.bytes_in.to_string(),
            e.bytes_out.to_string(),
            "{}".to_string(),
            format!("{{compaction_type:{}}}", e.kind),
        ]);
    }
    format!("Compaction History: \n{}", table.render())
}

/// Java's `LocalDateTime.toString` of an epoch-millisecond instant, in UTC.
pub fn local_date_time(millis: i64) -> String {
    let [y, m, d, hh, mm, ss, ms] = utc_fields(millis);
    let clock = match (ss, ms) {
        (0, 0) => format!("{hh:02}:{mm:02}"),
        (_, 0) => format!("{hh:02}:{mm:02}:{ss:02}"),
        _ => format!("{hh:02}:{mm:02}:{ss:02}.{ms:03}"),
    };
    format!("{y:04}-{m:02}-{d:02}T{clock}")
}

/// An epoch-millisecond instant in UTC as Java's `yyyy-MM-dd HH:mm:ss,SSS` pattern prints it.
pub fn log_date_time(millis: i64) -> String {
    let [y, m, d, hh, mm, ss, ms] = utc_fields(millis);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02},{ms:03}")
}

/// Year, month, day, hour, minute, second and millisecond of an epoch-millisecond instant
/// (instants before 1970 read as 1970).
fn utc_fields(millis: i64) -> [i64; 7] {
    let millis = millis.max(0);
    let secs = millis / 1000;
    let (days, of_day) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil(days);
    [
        y,
        m,
        d,
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60,
        millis % 1000,
    ]
}

/// Year, month and day of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use admin::types::{ActiveCompaction, PendingCompactions};

    fn stats() -> CompactionStats {
        CompactionStats {
            concurrent_compactors: 2,
            pending: vec![],
            completed: 467,
            bytes_compacted: 7_219_378,
            mean_rate_per_second: 522.62 / 3600.0,
            fifteen_minute_rate_per_minute: 4.04,
            throughput_bytes_per_second: 64 * 1024 * 1024,
            active: vec![],
        }
    }

    #[test]
    fn compactionstats_layout() {
        // matches Cassandra 5.0.4 (`refcass nodetool compactionstats`)
        assert_eq!(
            compactionstats(&stats(), false),
            "concurrent compactors            2          \n\
pending tasks                    0          \n\
compactions completed            467        \n\
data compacted                   7219378    \n\
compactions aborted              0          \n\
compactions reduced              0          \n\
sstables dropped from compaction 0          \n\
15 minute rate                   4.04/minute\n\
mean rate                        522.62/hour\n\
compaction throughput (MiB/s)    64.0       \n"
        );
        assert!(compactionstats(&stats(), true)
            .contains("data compacted                   6.88 MiB   \n"));
    }

    #[test]
    fn compactionstats_with_pending_and_running_tasks() {
        let mut s = stats();
        s.pending = vec![PendingCompactions {
            keyspace: "ks".into(),
            table: "t".into(),
            tasks: 3,
        }];
        s.active = vec![ActiveCompaction {
            id: "7".into(),
            kind: "Compaction".into(),
            keyspace: "ks".into(),
            table: "t".into(),
            completed: 1024,
            total: 4096,
            unit: "bytes".into(),
        }];
        let text = compactionstats(&s, false);
        // every row shares the column widths, as Cassandra's single TableBuilder does
        assert!(text.contains("\nks                               t               3                                            \n"));
        assert!(text.contains("\nid                               compaction type keyspace table completed total unit  progress\n"));
        assert!(text.contains("\n7                                Compaction      ks       t     1024      4096  bytes 25.00%  \n"));
        assert!(text.ends_with("\nactive compaction remaining time 0h00m00s                                                     \n"));
    }

    #[test]
    fn history_layout() {
        // matches Cassandra 5.0.4 (`refcass nodetool compactionhistory`)
        let e = CompactionHistoryEntry {
            id: "12".into(),
            keyspace: "system_schema".into(),
            table: "tables".into(),
            compacted_at_ms: 1_795_357_089_871,
            bytes_in: 5714,
            bytes_out: 4907,
            sstables_in: 2,
            sstables_out: 1,
            partitions_out: 3,
            kind: "Compaction".into(),
        };
        assert_eq!(
            compactionhistory(&[e]),
            "Compaction History: \n\
id keyspace_name columnfamily_name compacted_at            bytes_in bytes_out rows_merged compaction_properties       \n\
12 system_schema tables            2026-11-22T14:18:09.871 5714     4907      {}          {compaction_type:Compaction}\n"
        );
        assert_eq!(compactionhistory(&[]), "There is no compaction history\n");
    }

    #[test]
    fn java_local_date_times() {
        assert_eq!(local_date_time(0), "1970-01-01T00:00");
        assert_eq!(local_date_time(1_000), "1970-01-01T00:00:01");
        assert_eq!(local_date_time(951_782_400_005), "2000-02-29T00:00:00.005");
    }

    #[test]
    fn numbers() {
        assert_eq!(
            one_number(&["16".into()], "compaction_throughput").unwrap(),
            16
        );
        assert_eq!(
            one_number(&["abc".into()], "compaction_throughput").unwrap_err(),
            Failure::Usage("compaction_throughput: can not convert \"abc\" to a Integer".into())
        );
        assert_eq!(
            one_number(&[], "compaction_throughput").unwrap_err(),
            Failure::Usage("Required parameters are missing: compaction_throughput".into())
        );
    }
}
