//! `helenus nodetool`: Cassandra's `nodetool` command line and output layouts, talking to a
//! node's admin API (`docs/admin-api.md`) over HTTP.

mod args;
mod checks;
pub(crate) mod client;

mod auto_repair;
mod cluster;
mod compaction;
mod format;
mod help;
mod hints;
mod lifecycle;
mod logging;
mod proxy;
mod repair;
mod repair_admin;
mod ring;
mod settings;
mod snapshots;
mod streams;
mod tables;
mod threads;
mod trace;

use std::process::ExitCode;

use args::{Invocation, UsageError};
use client::Client;

/// What a command prints, or why it failed.
pub type Output = Result<String, Failure>;

/// A failed command: bad arguments (exit 1, with the usage hint) or a failure on the node
/// (exit 2, as nodetool's `error:` lines).
#[derive(Debug, PartialEq)]
pub enum Failure {
    Usage(String),
    Node(String),
}

impl From<UsageError> for Failure {
    fn from(e: UsageError) -> Failure {
        Failure::Usage(e.0)
    }
}

/// Runs `helenus nodetool ARGS`.
pub fn run(args: Vec<String>) -> ExitCode {
    let invocation = match args::parse(&args) {
        Ok(i) => i,
        Err(e) => return fail(&Failure::from(e)),
    };
    let client = match admin_token(&invocation) {
        Ok(token) => Client::new(&invocation.host, invocation.port, token),
        Err(message) => return fail(&Failure::Usage(message)),
    };
    match execute(&client, &invocation) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(failure) => fail(&failure),
    }
}

/// The environment variable naming the token file when `--token-file` is not given.
const TOKEN_FILE_VAR: &str = "HELENUS_ADMIN_TOKEN_FILE";

/// The admin API token from `--token-file`, else from the file `$HELENUS_ADMIN_TOKEN_FILE`
/// names; none when neither is given.
fn admin_token(invocation: &Invocation) -> Result<Option<String>, String> {
    let from_env = std::env::var_os(TOKEN_FILE_VAR).map(std::path::PathBuf::from);
    let file = invocation
        .token_file
        .as_ref()
        .map(std::path::PathBuf::from)
        .or(from_env);
    file.map(|f| admin::read_token(&f)).transpose()
}

fn fail(failure: &Failure) -> ExitCode {
    match failure {
        Failure::Usage(message) => {
            eprintln!("nodetool: {message}");
            eprintln!("See 'nodetool help' or 'nodetool help <command>'.");
            ExitCode::from(1)
        }
        Failure::Node(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// Runs one command against the node.
fn execute(client: &Client, inv: &Invocation) -> Output {
    let args = &inv.args;
    match inv.command.as_str() {
        "help" => help::help(args),
        "status" | "info" | "ring" | "describecluster" | "gossipinfo" | "cms" | "version"
        | "statusgossip" | "enablegossip" | "disablegossip" | "getendpoints" | "describering" => {
            cluster::run(client, &inv.command, args)
        }
        "flush"
        | "compact"
        | "enableautocompaction"
        | "disableautocompaction"
        | "tablestats"
        | "cfstats"
        | "garbagecollect" => tables::run(client, &inv.command, args),
        "compactionstats"
        | "compactionhistory"
        | "getcompactionthroughput"
        | "setcompactionthroughput"
        | "getconcurrentcompactors"
        | "setconcurrentcompactors" => compaction::run(client, &inv.command, args),
        "gettimeout"
        | "settimeout"
        | "getwriterequesttimeout"
        | "setwriterequesttimeout"
        | "getreadrequesttimeout"
        | "setreadrequesttimeout"
        | "getrangerequesttimeout"
        | "setrangerequesttimeout" => settings::run(client, &inv.command, args),
        "snapshot" | "listsnapshots" | "clearsnapshot" | "tablehistograms" | "cfhistograms" => {
            snapshots::run(client, &inv.command, args)
        }
        "tpstats" | "gcstats" | "drain" | "stopdaemon" => threads::run(client, &inv.command, args),
        "proxyhistograms" => proxy::run(client, args),
        "replaybatchlog" => proxy::replay_batchlog(client, args),
        "refreshsizeestimates" => proxy::refresh_size_estimates(client, args),
        "scrub" | "verify" | "statusbinary" | "enablebinary" | "disablebinary" => {
            checks::run(client, &inv.command, args)
        }
        "statushandoff" | "enablehandoff" | "disablehandoff" | "pausehandoff" | "resumehandoff"
        | "enablehintsfordc" | "disablehintsfordc" | "listpendinghints" | "truncatehints" => {
            hints::run(client, &inv.command, args)
        }
        "getlogginglevels" | "setlogginglevel" => logging::run(client, &inv.command, args),
        "cleanup" | "decommission" | "removenode" | "move" | "bootstrap" => {
            lifecycle::run(client, &inv.command, args)
        }
        "gettraceprobability" | "settraceprobability" => trace::run(client, &inv.command, args),
        "netstats" | "getstreamthroughput" | "setstreamthroughput" | "rebuild" => {
            streams::run(client, &inv.command, args)
        }
        "repair" => repair::run(client, args),
        "repair_admin" => repair_admin::run(client, args),
        "autorepairstatus" => auto_repair::status(client, args),
        "setautorepairconfig" => auto_repair::configure(client, args),
        _ => Err(unexpected(std::slice::from_ref(&inv.command))),
    }
}

/// Cassandra's complaint about extra words.
pub fn unexpected(words: &[String]) -> Failure {
    Failure::Usage(format!(
        "Found unexpected parameters: [{}]",
        words.join(", ")
    ))
}

/// Fails unless `args` is empty.
pub fn no_args(args: &[String]) -> Result<(), Failure> {
    if args.is_empty() {
        Ok(())
    } else {
        Err(unexpected(args))
    }
}

/// A failure reported by the node: its complaints about arguments are usage errors.
pub fn node_error(message: String) -> Failure {
    if message.starts_with("Failed to connect") {
        Failure::Usage(message)
    } else {
        Failure::Node(message)
    }
}
