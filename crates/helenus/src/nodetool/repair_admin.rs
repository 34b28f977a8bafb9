//! `repair_admin list [--all]` and `repair_admin cancel --session <id>`, the incremental
//! repair sessions this node takes part in, printed as Cassandra 5.0.4's RepairAdmin prints
//! them: `no sessions`, or a table of `id | state | last activity | coordinator |
//! participants | participants_wp`, each column padded to its widest value.

use std::net::SocketAddr;

use admin::types::{RepairCancelRequest, RepairSessionInfo};

use super::client::Client;
use super::{node_error, unexpected, Failure, Output};
use crate::text::padded;

const HEADER: [&str; 6] = [
    "id",
    "state",
    "last activity",
    "coordinator",
    "participants",
    "participants_wp",
];

pub fn run(client: &Client, args: &[String]) -> Output {
    let (command, rest) = match args.split_first() {
        Some((first, rest)) if !first.starts_with('-') => (first.as_str(), rest),
        _ => ("list", args),
    };
    match command {
        "list" => list(client, rest),
        "cancel" => cancel(client, rest),
        _ => Err(unexpected(&[command.to_string()])),
    }
}

fn list(client: &Client, args: &[String]) -> Output {
    let mut all = false;
    for word in args {
        match word.as_str() {
            "-a" | "--all" => all = true,
            _ => return Err(unexpected(std::slice::from_ref(word))),
        }
    }
    let sessions: Vec<RepairSessionInfo> = client.get("/v1/repair_sessions").map_err(node_error)?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    Ok(render(&sessions, all, now_ms))
}

fn cancel(client: &Client, args: &[String]) -> Output {
    let mut session = None;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-s" | "--session" => session = words.next().cloned(),
            "-f" | "--force" => {}
            _ => return Err(unexpected(std::slice::from_ref(word))),
        }
    }
    let session = session
        .ok_or_else(|| Failure::Usage("Required option '--session' is missing".to_string()))?;
    let _: serde_json::Value = client
        .post(
            "/v1/repair_sessions/cancel",
            &RepairCancelRequest { session },
        )
        .map_err(node_error)?;
    Ok(String::new())
}

/// The sessions not ended (or all) as RepairAdmin's table.
fn render(sessions: &[RepairSessionInfo], all: bool, now_ms: u64) -> String {
    let shown: Vec<&RepairSessionInfo> = sessions
        .iter()
        .filter(|s| all || !matches!(s.state.as_str(), "FINALIZED" | "FAILED"))
        .collect();
    if shown.is_empty() {
        return "no sessions\n".to_string();
    }
    let mut rows: Vec<Vec<String>> = vec![HEADER.iter().map(|h| h.to_string()).collect()];
    for s in shown {
        let ips: Vec<String> = s.participants.iter().map(|p| ip(p)).collect();
        rows.push(vec![
            s.id.clone(),
            s.state.clone(),
            format!("{} (s)", now_ms.saturating_sub(s.last_update_ms) / 1000),
            format!("/{}", s.coordinator),
            ips.join(","),
            s.participants.join(","),
        ]);
    }
    padded(&rows, " | ")
}

/// The address part of `ip:port`.
fn ip(addr: &str) -> String {
    addr.parse::<SocketAddr>()
        .map_or_else(|_| addr.to_string(), |a| a.ip().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str, state: &str) -> RepairSessionInfo {
        RepairSessionInfo {
            id: id.into(),
            state: state.into(),
            last_update_ms: 10_000,
            coordinator: "127.0.0.1:7000".into(),
            participants: vec!["127.0.0.1:7000".into(), "127.0.0.2:7000".into()],
        }
    }

    #[test]
    fn sessions_print_as_repair_admin_list() {
        let id = "e5a6a3a0-d2b5-11f0-8000-000000000001";
        let sessions = [session(id, "REPAIRING"), session("x", "FINALIZED")];
        assert_eq!(
            render(&sessions, false, 13_500),
            format!(
                "id                                   | state     | last activity | coordinator     | participants        | participants_wp              \n\
                 {id} | REPAIRING | 3 (s)         | /127.0.0.1:7000 | 127.0.0.1,127.0.0.2 | 127.0.0.1:7000,127.0.0.2:7000\n"
            )
        );
        assert_eq!(render(&sessions[1..], false, 0), "no sessions\n");
        assert!(render(&sessions[1..], true, 0).contains("FINALIZED"));
    }
}
