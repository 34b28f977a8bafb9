//! `helenus stress`: a cassandra-stress-compatible load generator (same command line, same
//! output) built on the `scylla` driver, plus YCSB's core workloads (`helenus stress ycsb`)
//! and a lightweight-transaction workload (`helenus stress lwt`).
//!
//! [`run`] takes the words after `stress` and returns the process exit code; [`run_to`]
//! does the same but writes the report to a given writer (tests capture it).
//!
//! User profiles, YCSB workloads, HDR latencies and graphs. `-rate fixed=`/`throttle=` is paced
//! by a dedicated thread handing out one permit per scheduled operation (`pacer`: 1 ns timer
//! slack and a short yield before each due time, since tokio's 1 ms timer made every operation
//! up to 1 ms late); its lateness is printed in the summary.

mod cli;
mod client;
mod cpu;
mod cql;
mod dist;
mod graph;
mod hdrlog;
mod javarand;
mod keys;
mod lwt;
mod metrics;
mod output;
mod pacer;
mod report;
mod runner;
mod session;
mod settings;
mod settings_dump;
mod timeline;
mod user;
mod workload;
mod ycsb;

use std::io::{self, Write};
use std::process::ExitCode;

use cli::{usage, Invocation};
use output::Output;

/// Runs `helenus stress ARGS…`, reporting on standard output; 0 on `END`, 1 otherwise.
pub fn run(args: Vec<String>) -> ExitCode {
    run_to(args, &mut io::stdout())
}

/// Like [`run`], with the report (everything cassandra-stress prints on standard output)
/// written to `out`; errors still go to standard error.
pub fn run_to(args: Vec<String>, out: &mut dyn Write) -> ExitCode {
    match args.first().map(String::as_str) {
        Some("ycsb") => return ycsb::main(&args[1..], out, Box::new(io::stderr())),
        Some("lwt") => return lwt::main(&args[1..], out),
        _ => {}
    }
    match cli::parse(&args) {
        Ok(invocation) => execute(invocation, &args.join(" "), out),
        Err(e) => {
            if let Some(topic) = &e.usage {
                let _ = write!(out, "{}", usage::text(topic));
            }
            eprintln!("{}", e.message);
            ExitCode::FAILURE
        }
    }
}

/// Runs `helenus stress ycsb ARGS…` (the words after `ycsb`), with YCSB's report written to
/// `out` and its periodic status lines (`-s`) to `status` instead of standard error.
pub fn ycsb_to(args: &[String], out: &mut dyn Write, status: Box<dyn Write + Send>) -> ExitCode {
    ycsb::main(args, out, status)
}

fn execute(invocation: Invocation, command: &str, out: &mut dyn Write) -> ExitCode {
    let text = match invocation {
        Invocation::Help(topic) => usage::text(topic.as_deref().unwrap_or("")),
        Invocation::Version => format!("Version: helenus stress {}\n", env!("CARGO_PKG_VERSION")),
        Invocation::Print(spec) => dist::describe(&spec),
        Invocation::Stress(settings) => return stress(*settings, command, out),
    };
    match out.write_all(text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

fn stress(settings: settings::Settings, command: &str, sink: &mut dyn Write) -> ExitCode {
    let graph = settings.graph.clone();
    let mut out = match Output::new(
        sink,
        settings.log.file.as_deref(),
        settings.log.hdr_file.as_deref(),
        graph.file.is_some() || graph.png.is_some(),
    ) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("Cannot open log file: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime().and_then(|rt| rt.block_on(session::run(settings, &mut out)));
    let written = out
        .finish()
        .and_then(|timeline| graph::write(&graph, command, timeline));
    match result.and(written) {
        Ok(()) => {
            out.line("END");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            out.line("FAILURE");
            ExitCode::FAILURE
        }
    }
}

/// The client's runtime: one thread runs every worker task and the driver's connections.
/// Client CPU per operation is what a benchmark on a shared machine takes from the server,
/// and a multi-threaded runtime spends much of it waking and parking threads (perf: half the
/// client's cycles in the scheduler's context switches); one thread drives well over the
/// op rate a node answers.
/// Ends a subcommand: its output written to `out`, or its error to stderr.
fn finish(result: Result<String, String>, out: &mut dyn Write) -> ExitCode {
    match result {
        Ok(text) => match out.write_all(text.as_bytes()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        },
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("Cannot start the runtime: {e}"))
}
