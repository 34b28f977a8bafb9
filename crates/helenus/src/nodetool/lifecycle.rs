//! A node's place in the ring: `cleanup [(-j | --jobs) <jobs>] [<keyspace> <tables>...]`,
//! `decommission [(-f | --force)]`, `removenode <host id> | status | force`, `bootstrap
//! resume`, and `move` (refused with vnodes, as Cassandra refuses it).

use admin::types::{
    BootstrapResumed, CleanupDone, CleanupRequest, DecommissionRequest, OperationModeInfo,
    RemovalStatus, RemoveNodeRequest,
};

use super::client::Client;
use super::tables::{as_usage, selection};
use super::{node_error, Failure, Output};

pub fn run(client: &Client, command: &str, args: &[String]) -> Output {
    match command {
        "cleanup" => cleanup(client, args),
        "decommission" => decommission(client, args),
        "removenode" => removenode(client, args),
        "move" => move_token(client, args),
        "bootstrap" => bootstrap(client, args),
        _ => Err(super::unexpected(&[command.to_string()])),
    }
}

/// Silent when done, as Cassandra's; the tables are cleaned one SSTable at a time whatever
/// `-j` says.
fn cleanup(client: &Client, args: &[String]) -> Output {
    let mut positional = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-j" | "--jobs" => {
                let jobs = words.next().ok_or_else(|| {
                    Failure::Usage("Required values for option 'jobs' not provided".to_string())
                })?;
                jobs.parse::<u32>().map_err(|_| {
                    Failure::Usage(format!("jobs must be a whole number, not {jobs}"))
                })?;
            }
            _ => positional.push(word.clone()),
        }
    }
    let request = CleanupRequest {
        selection: selection(&positional)?,
    };
    let done: CleanupDone = client.post("/v1/cleanup", &request).map_err(as_usage)?;
    if let Some(busy) = done.tables.iter().find(|t| t.skipped > 0) {
        let keyspace = busy.table.split('.').next().unwrap_or_default();
        return Err(Failure::Node(format!(
            "Failed marking some sstables compacting in keyspace {keyspace}, check server logs for more information"
        )));
    }
    Ok(String::new())
}

/// `bootstrap resume`: fetches what a failed bootstrap has not received and finishes the join,
/// printing Cassandra's lines; a node with nothing to resume says it is bootstrapped.
fn bootstrap(client: &Client, args: &[String]) -> Output {
    match args {
        [word] if word == "resume" => {}
        _ => {
            return Err(Failure::Usage(
                "bootstrap takes one subcommand: resume".to_string(),
            ))
        }
    }
    let done: BootstrapResumed = client
        .post("/v1/bootstrap/resume", &serde_json::json!({}))
        .map_err(node_error)?;
    Ok(if done.resumed {
        "Resuming bootstrap\nResume bootstrap complete\n".to_string()
    } else {
        "Node is already bootstrapped.\n".to_string()
    })
}

/// Answers once the node has left the ring; silent, as Cassandra's.
fn decommission(client: &Client, args: &[String]) -> Output {
    let mut request = DecommissionRequest::default();
    for word in args {
        match word.as_str() {
            "-f" | "--force" => request.force = true,
            _ => return Err(super::unexpected(std::slice::from_ref(word))),
        }
    }
    let _: OperationModeInfo = client
        .post("/v1/decommission", &request)
        .map_err(node_error)?;
    Ok(String::new())
}

/// `status` prints the removal under way; a host id removes that node (silent when done);
/// `force` completes the removal under way.
fn removenode(client: &Client, args: &[String]) -> Output {
    let [word] = args else {
        return Err(Failure::Usage(
            "removenode takes one argument: a host id, status or force".to_string(),
        ));
    };
    let request = RemoveNodeRequest {
        host_id: word.clone(),
    };
    let done: RemovalStatus = client
        .post("/v1/removenode", &request)
        .map_err(node_error)?;
    Ok(match word.as_str() {
        "status" => format!("{}\n", done.status),
        _ => String::new(),
    })
}

fn move_token(client: &Client, args: &[String]) -> Output {
    if args.len() != 1 {
        return Err(Failure::Usage(
            "move takes one argument: the new token".to_string(),
        ));
    }
    let _: OperationModeInfo = client.post("/v1/move", &()).map_err(node_error)?;
    Ok(String::new())
}
