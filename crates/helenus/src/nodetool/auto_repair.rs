//! `autorepairstatus` and `setautorepairconfig enabled true|false <keyspace> [tables...]`: the
//! built-in repair scheduler on this node (named after Cassandra 5.1's CEP-37 commands). The
//! status says whether the scheduler runs, what it repairs now or why it holds off, and for
//! each table turned on: this node's primary ranges, how many were repaired, when the table
//! was last repaired whole and when its next range is due.

use admin::types::{AutoRepairConfigRequest, AutoRepairStatus};

use super::client::Client;
use super::compaction::log_date_time;
use super::{no_args, node_error, unexpected, Failure, Output};
use crate::text::padded;

pub fn status(client: &Client, args: &[String]) -> Output {
    no_args(args)?;
    let status: AutoRepairStatus = client.get("/v1/autorepair").map_err(node_error)?;
    Ok(render(&status))
}

pub fn configure(client: &Client, args: &[String]) -> Output {
    let request = config_request(args)?;
    let _: AutoRepairStatus = client
        .post("/v1/autorepair/config", &request)
        .map_err(node_error)?;
    Ok(String::new())
}

fn config_request(args: &[String]) -> Result<AutoRepairConfigRequest, Failure> {
    let usage = || {
        Failure::Usage(
            "usage: setautorepairconfig enabled true|false <keyspace> [<tables>...]".into(),
        )
    };
    let [param, value, keyspace, tables @ ..] = args else {
        return Err(usage());
    };
    if param != "enabled" {
        return Err(unexpected(std::slice::from_ref(param)));
    }
    let enabled = match value.as_str() {
        "true" => true,
        "false" => false,
        _ => return Err(usage()),
    };
    Ok(AutoRepairConfigRequest {
        enabled,
        keyspace: keyspace.clone(),
        tables: tables.to_vec(),
    })
}

fn when(ms: Option<u64>) -> String {
    ms.map_or_else(
        || "never".to_string(),
        |ms| log_date_time(i64::try_from(ms).unwrap_or(i64::MAX)),
    )
}

fn render(status: &AutoRepairStatus) -> String {
    if !status.enabled {
        return "Auto-repair is not enabled\n".to_string();
    }
    let mut out = format!(
        "Auto-repair is enabled: checks every {} s, repairs each range every half gc_grace_seconds (at least {} s apart)\n",
        status.repair_check_interval_ms / 1000,
        status.min_repair_interval_ms / 1000
    );
    let running = status.running.as_deref().unwrap_or("none");
    out.push_str(&format!("Repairing: {running}\n"));
    if let Some(why) = &status.held_off {
        out.push_str(&format!("Holding off: {why}\n"));
    }
    if let Some(failure) = &status.last_failure {
        out.push_str(&format!("Last failure: {failure}\n"));
    }
    if status.tables.is_empty() {
        out.push_str("No tables (setautorepairconfig enabled true <keyspace> [<tables>...])\n");
        return out;
    }
    let header = [
        "Keyspace",
        "Table",
        "Ranges",
        "Repaired",
        "Last full repair",
        "Next due",
    ];
    let mut rows = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    for t in &status.tables {
        let due = match t.next_due_ms {
            Some(0) => "now".to_string(),
            other => when(other),
        };
        rows.push(vec![
            t.keyspace.clone(),
            t.table.clone(),
            t.ranges.to_string(),
            t.repaired_ranges.to_string(),
            when(t.last_full_repair_ms),
            due,
        ]);
    }
    out.push_str(&padded(&rows, "  "));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use admin::types::AutoRepairTable;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn config_requests_name_a_keyspace_and_maybe_tables() {
        let on = config_request(&words("enabled true ks t1 t2")).unwrap();
        assert!(on.enabled);
        assert_eq!((on.keyspace.as_str(), on.tables.len()), ("ks", 2));
        assert!(!config_request(&words("enabled false ks")).unwrap().enabled);
        assert!(matches!(
            config_request(&words("enabled yes ks")),
            Err(Failure::Usage(_))
        ));
        assert!(matches!(
            config_request(&words("enabled true")),
            Err(Failure::Usage(_))
        ));
        assert!(matches!(
            config_request(&words("threads 2 ks")),
            Err(Failure::Usage(_))
        ));
    }

    #[test]
    fn the_status_shows_each_table_and_what_runs() {
        let off = AutoRepairStatus::default();
        assert_eq!(render(&off), "Auto-repair is not enabled\n");
        let on = AutoRepairStatus {
            enabled: true,
            repair_check_interval_ms: 300_000,
            min_repair_interval_ms: 3_600_000,
            running: Some("ks.t (1,2]".into()),
            held_off: None,
            last_failure: None,
            tables: vec![AutoRepairTable {
                keyspace: "ks".into(),
                table: "t".into(),
                ranges: 4,
                repaired_ranges: 4,
                last_full_repair_ms: Some(1_765_000_000_123),
                next_due_ms: Some(0),
            }],
        };
        assert_eq!(
            render(&on),
            "Auto-repair is enabled: checks every 300 s, repairs each range every half gc_grace_seconds (at least 3600 s apart)\n\
             Repairing: ks.t (1,2]\n\
             Keyspace  Table  Ranges  Repaired  Last full repair         Next due\n\
             ks        t      4       4         2025-12-06 05:46:40,123  now     \n"
        );
    }
}
