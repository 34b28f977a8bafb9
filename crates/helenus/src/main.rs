//! The `helenus` command line: `helenus server` runs a node, `helenus stress` loads one,
//! `helenus nodetool` operates one.
mod handler;
mod logging;
mod nodetool;
mod server;
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
    /// and YCSB's core workloads (`helenus stress ycsb load|run -P workloada`).
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
}

/// mimalloc rather than glibc's malloc: under a 2M-row write load glibc's malloc led the
/// server's CPU profile and its arenas kept far more resident than was in use.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `purge_delay` option (its index in mimalloc 3's `mi_option_e`).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
/// How long freed memory stays with the process before it is returned to the OS. Under write
/// load a flushed memtable's memory is freed and refilled within seconds; mimalloc's default
/// (1 s) handed it back only to fault it in again as freshly zeroed huge pages, about 8% of the
/// server's CPU in a write profile. Idle memory is still returned after this delay.
const PURGE_DELAY_MS: std::ffi::c_long = 10_000;

fn main() -> ExitCode {
    // SAFETY: sets a plain integer option; mimalloc reads it when it next purges.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    let cli = Cli::parse();
    match cli.command {
        Command::Server { config } => server::run(config.as_deref()),
        Command::Stress { args } => stress::run(args),
        Command::Nodetool { args } => nodetool::run(args),
    }
}
