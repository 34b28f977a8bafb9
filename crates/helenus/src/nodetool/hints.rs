//! `statushandoff`, `enablehandoff`, `disablehandoff`, `pausehandoff`, `resumehandoff`,
//! `enablehintsfordc`, `disablehintsfordc`, `listpendinghints` and `truncatehints`, printed as
//! Cassandra 5.0.4 does.

use admin::types::{DatacenterRequest, HintsStatus, PendingHintsRow, TruncateHintsRequest};

use super::client::Client;
use super::compaction::log_date_time;
use super::format::TableBuilder;
use super::{no_args, node_error, unexpected, Failure, Output};

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    match command {
        "statushandoff" => {
            no_args(args)?;
            Ok(status(&client.get("/v1/hints").map_err(node_error)?))
        }
        "listpendinghints" => {
            no_args(args)?;
            let rows: Vec<PendingHintsRow> = client.get("/v1/hints/pending").map_err(node_error)?;
            Ok(pending(&rows))
        }
        "enablehintsfordc" | "disablehintsfordc" => datacenter(client, command, args),
        "truncatehints" => truncate(client, args),
        _ => switch(client, command, args),
    }
}

/// `enablehandoff`, `disablehandoff`, `pausehandoff`, `resumehandoff`: silent on success.
fn switch(client: &Client, command: &str, args: &[String]) -> Output {
    no_args(args)?;
    let path = match command {
        "enablehandoff" => "/v1/hints/enable",
        "disablehandoff" => "/v1/hints/disable",
        "pausehandoff" => "/v1/hints/pause",
        _ => "/v1/hints/resume",
    };
    post(client, path, &serde_json::json!({}))
}

fn datacenter(client: &Client, command: &str, args: &[String]) -> Output {
    let [dc] = args else {
        return Err(Failure::Usage(format!(
            "{command} requires exactly one data center"
        )));
    };
    let request = DatacenterRequest {
        datacenter: dc.clone(),
    };
    let action = command.trim_end_matches("hintsfordc");
    post(client, &format!("/v1/hints/datacenters/{action}"), &request)
}

/// `truncatehints [endpoint]`.
fn truncate(client: &Client, args: &[String]) -> Output {
    if args.len() > 1 {
        return Err(unexpected(&args[1..]));
    }
    let request = TruncateHintsRequest {
        endpoint: args.first().cloned(),
    };
    post(client, "/v1/hints/truncate", &request)
}

fn post(client: &Client, path: &str, body: &impl serde::Serialize) -> Output {
    let _: HintsStatus = client.post(path, body).map_err(node_error)?;
    Ok(String::new())
}

/// Cassandra's `StatusHandoff`: whether hints are stored, then each data center left out.
fn status(status: &HintsStatus) -> String {
    let running = if status.enabled {
        "running"
    } else {
        "not running"
    };
    let mut out = format!("Hinted handoff is {running}\n");
    for dc in &status.disabled_datacenters {
        out.push_str(&format!("Data center {dc} is disabled\n"));
    }
    out
}

/// Cassandra's `ListPendingHints` table, times in UTC.
fn pending(rows: &[PendingHintsRow]) -> String {
    if rows.is_empty() {
        return "This node does not have any pending hints\n".to_string();
    }
    let mut table = TableBuilder::new(" ");
    table.add([
        "Host ID",
        "Address",
        "Rack",
        "DC",
        "Status",
        "Total files",
        "Newest",
        "Oldest",
    ]);
    let or_unknown = |value: &Option<String>| value.clone().unwrap_or_else(|| "Unknown".into());
    for row in rows {
        table.add([
            row.host_id.clone(),
            or_unknown(&row.address),
            or_unknown(&row.rack),
            or_unknown(&row.datacenter),
            row.status.clone(),
            row.files.to_string(),
            log_date_time(row.newest_ms),
            log_date_time(row.oldest_ms),
        ]);
    }
    table.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lists_disabled_data_centers() {
        // Cassandra 5.0.4's StatusHandoff (dtest hintedhandoff_test: "Hinted handoff is
        // running{linesep}Data center dc1 is disabled")
        let mut s = HintsStatus {
            enabled: true,
            paused: false,
            disabled_datacenters: vec!["dc1".into()],
        };
        assert_eq!(
            status(&s),
            "Hinted handoff is running\nData center dc1 is disabled\n"
        );
        s.enabled = false;
        s.disabled_datacenters.clear();
        assert_eq!(status(&s), "Hinted handoff is not running\n");
    }

    #[test]
    fn pending_hints_table() {
        assert_eq!(pending(&[]), "This node does not have any pending hints\n");
        let row = PendingHintsRow {
            host_id: "6e2fe5c7-0000-4000-8000-000000000001".into(),
            address: Some("127.0.0.2:7000".into()),
            rack: Some("rack1".into()),
            datacenter: Some("dc1".into()),
            status: "DOWN".into(),
            files: 2,
            newest_ms: 1_700_000_000_123,
            oldest_ms: 1_699_999_999_005,
            total_bytes: 100,
        };
        assert_eq!(
            pending(&[row]),
            "Host ID                              Address        Rack  DC  Status Total files \
             Newest                  Oldest                 \n\
             6e2fe5c7-0000-4000-8000-000000000001 127.0.0.2:7000 rack1 dc1 DOWN   2           \
             2023-11-14 22:13:20,123 2023-11-14 22:13:19,005\n"
        );
    }

    #[test]
    fn data_center_commands_need_exactly_one_name() {
        let client = Client::new("127.0.0.1", 1, None);
        let refused = run(&client, "disablehintsfordc", &[]).unwrap_err();
        assert_eq!(
            refused,
            Failure::Usage("disablehintsfordc requires exactly one data center".into())
        );
        let extra = run(&client, "truncatehints", &["a".into(), "b".into()]).unwrap_err();
        assert_eq!(extra, unexpected(&["b".to_string()]));
    }
}
