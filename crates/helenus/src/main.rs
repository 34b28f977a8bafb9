//! The `helenus` command line: `helenus server` runs a node.
mod handler;
mod server;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Server { config } => server::run(config.as_deref()),
    }
}
