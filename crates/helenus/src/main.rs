//! The `helenus` command line: `helenus server` runs a node, `helenus stress` loads one,
//! `helenus nodetool` operates one, `helenus cluster` runs a local cluster of them.
mod allocator;
mod cluster;
mod failures;
mod handler;
mod logging;
mod native;
mod nodetool;
mod server;
mod text;
mod virtual_sources;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "helenus", version, about = "A Cassandra-compatible database")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a node: CQL on 127.0.0.1:9042, data under ./data unless a config file says otherwise.
    Server {
        /// A cassandra.yaml-style configuration file.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Load generator: cassandra-stress's command line and output (`helenus stress help`),
    /// YCSB's core workloads (`helenus stress ycsb load|run -P workloada`) and lightweight
    /// transactions (`helenus stress lwt uncontended|contended`).
    #[command(disable_help_flag = true)]
    Stress {
        /// cassandra-stress arguments, passed through unparsed.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Operate a node through its admin API, with Cassandra's nodetool commands and output
    /// (`helenus nodetool help`).
    #[command(disable_help_flag = true)]
    Nodetool {
        /// nodetool arguments: `[-h host] [-p port] <command> [args]`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// A local cluster, as with `ccm`: `helenus cluster start --nodes 3`, `status`, `stop`,
    /// `clear`, and `kill|stop|start|pause|resume NODE`.
    Cluster(cluster::ClusterArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Server { config } => server::run(config.as_deref()),
        Command::Stress { args } => stress::run(args),
        Command::Nodetool { args } => nodetool::run(args),
        Command::Cluster(args) => cluster::run(args),
    }
}
