//! A cassandra-stress run from start to `END`: settings dump, connection, schema, warm-up,
//! the measured run (or the `-rate auto` series of runs), and the results, for the
//! predefined commands and for user profiles alike.

use std::sync::Arc;
use std::time::Duration;

use scylla::client::session::Session;

use crate::client;
use crate::cpu;
use crate::cql;
use crate::metrics::Span;
use crate::output::Output;
use crate::report;
use crate::runner::{
    self, describe_ops, describe_stop, warmup_iterations, Phase, PhaseOp, Workload,
};
use crate::settings::{Rate, Settings, Stop};
use crate::settings_dump;
use crate::user::{self, Profile};
use crate::workload::{Predefined, Statements};

/// A workload ready to run and the operations its phases choose from.
struct Prepared {
    workload: Arc<dyn Workload>,
    ops: Vec<PhaseOp>,
}

/// Runs `settings`; `Ok(())` printed `END`, `Err` says why the run failed.
pub async fn run(settings: Settings, out: &mut Output<'_>) -> Result<(), String> {
    let profile = match &settings.command.user {
        Some(u) => Some(Profile::load(&u.profile, &u.ops)?),
        None => None,
    };
    if !settings.log.no_settings {
        settings_dump::lines(&settings)
            .iter()
            .for_each(|l| out.line(l));
    }
    let session = client::connect(&settings.nodes, settings.native_port, &settings.mode).await?;
    client::describe(&session, &settings.mode)
        .await
        .iter()
        .for_each(|l| out.line(l));
    if let Some(p) = &profile {
        user::create_schema(&session, p).await?;
    } else if settings.command.writes() {
        create_schema(&session, &settings).await?;
    }
    if profile.is_some() || settings.command.writes() {
        out.line(&format!(
            "Created keyspaces. Sleeping {}s for propagation.",
            settings.nodes.len()
        ));
        tokio::time::sleep(Duration::from_secs(settings.nodes.len() as u64)).await;
    }
    if settings.command.count() == Some(0) {
        out.line("N=0: SCHEMA CREATED, NOTHING ELSE DONE.");
        return Ok(());
    }
    out.line("Sleeping 2s...");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let session = Arc::new(session);
    let settings = Arc::new(settings);
    let prepared = match profile {
        Some(p) => user_workload(session, &settings, p).await?,
        None => predefined_workload(session, &settings).await?,
    };
    if !settings.command.no_warmup {
        warmup(&settings, &prepared, out).await?;
    }
    match settings.rate {
        Rate::Threads { threads, limit } => {
            let phase = Phase {
                ops: prepared.ops.clone(),
                threads,
                stop: settings.command.stop.clone(),
                limit,
            };
            measured(&settings, &prepared, phase, out).await.map(|_| ())
        }
        Rate::Auto { min, max, auto } => {
            auto_threads(&settings, &prepared, (min, max, auto), out).await
        }
    }
}

async fn predefined_workload(
    session: Arc<Session>,
    settings: &Arc<Settings>,
) -> Result<Prepared, String> {
    let statements = Arc::new(Statements::prepare(session, settings).await?);
    let ops = settings
        .command
        .ops
        .iter()
        .enumerate()
        .map(|(id, (kind, weight))| PhaseOp {
            id,
            name: kind.name().to_string(),
            weight: *weight,
        })
        .collect();
    Ok(Prepared {
        workload: Arc::new(Predefined {
            settings: Arc::clone(settings),
            statements,
        }),
        ops,
    })
}

async fn user_workload(
    session: Arc<Session>,
    settings: &Arc<Settings>,
    profile: Profile,
) -> Result<Prepared, String> {
    let ops = profile.phase_ops();
    let workload = user::prepare(session, settings, profile).await?;
    Ok(Prepared { workload, ops })
}

async fn create_schema(session: &Session, s: &Settings) -> Result<(), String> {
    for q in [
        cql::create_keyspace(&s.schema),
        cql::create_standard1(&s.schema, &s.columns),
        cql::create_counter1(&s.schema, &s.columns),
    ] {
        session
            .query_unpaged(q.as_str(), ())
            .await
            .map_err(|e| format!("Encountered exception creating schema: {e}"))?;
    }
    Ok(())
}

async fn warmup(
    settings: &Arc<Settings>,
    prepared: &Prepared,
    out: &mut Output<'_>,
) -> Result<(), String> {
    let iterations = warmup_iterations(settings.command.count(), settings.nodes.len());
    if iterations == 0 {
        return Ok(());
    }
    let threads = match settings.rate {
        Rate::Threads { threads, .. } => threads.min(100),
        Rate::Auto { max, .. } => max.min(100),
    };
    for op in &prepared.ops {
        out.line(&format!(
            "Warming up {} with {iterations} iterations...",
            op.name
        ));
        let phase = Phase {
            ops: vec![op.clone()],
            threads,
            stop: Stop::Count(iterations),
            limit: None,
        };
        let outcome = runner::run(
            Arc::clone(settings),
            Arc::clone(&prepared.workload),
            phase,
            &mut Output::quiet(),
        )
        .await;
        if let Some(e) = outcome.error {
            return Err(format!("Failed to execute warmup: {e}"));
        }
    }
    Ok(())
}

/// One measured run with its `Running …` line and `Results:` block; returns its op rate.
async fn measured(
    settings: &Arc<Settings>,
    prepared: &Prepared,
    phase: Phase,
    out: &mut Output<'_>,
) -> Result<Span, String> {
    out.line(&format!(
        "Running {} with {} threads {}",
        describe_ops(&phase.ops),
        phase.threads,
        describe_stop(&phase.stop)
    ));
    out.line(&report::header());
    out.begin_series(&format!("{} threads", phase.threads));
    let cpu_start = cpu::now();
    let outcome = runner::run(
        Arc::clone(settings),
        Arc::clone(&prepared.workload),
        phase,
        out,
    )
    .await;
    let cpu_used = cpu::since(cpu_start);
    if !settings.log.no_summary {
        let per_op: Vec<(&str, Span)> = outcome
            .per_op
            .iter()
            .map(|(k, s)| (k.as_str(), s.clone()))
            .collect();
        let mut lines = report::results(&outcome.total, &per_op, cpu_used);
        if let Some(p) = &outcome.pacing {
            // Before the block's closing blank line.
            lines.insert(lines.len() - 1, report::pacing_line(p));
        }
        lines.iter().for_each(|l| out.line(l));
    }
    match outcome.error {
        Some(e) => Err(e),
        None => Ok(outcome.total),
    }
}

/// `-rate threads>=A threads<=B [auto]`: cassandra-stress's `runMulti`.
async fn auto_threads(
    settings: &Arc<Settings>,
    prepared: &Prepared,
    (min, max, auto): (u32, u32, bool),
    out: &mut Output<'_>,
) -> Result<(), String> {
    let mut threads = min;
    let mut runs: Vec<(u32, Span)> = Vec::new();
    loop {
        out.line("");
        out.line(&format!("Running with {threads} threadCount"));
        let phase = Phase {
            ops: prepared.ops.clone(),
            threads,
            stop: settings.command.stop.clone(),
            limit: None,
        };
        let span = measured(settings, prepared, phase, out).await?;
        runs.push((threads, span));
        if let [.., (prev, a), (_, b)] = runs.as_slice() {
            out.line(&format!(
                "Improvement over {prev} threadCount: {:.0}%",
                100.0 * (b.op_rate() - a.op_rate()) / a.op_rate()
            ));
        }
        threads = if threads < 16 {
            threads * 2
        } else {
            threads + threads / 2
        };
        if threads > max {
            break;
        }
        if settings.command.writes() {
            out.line("Sleeping for 15s");
            tokio::time::sleep(Duration::from_secs(15)).await;
        }
        let target = match settings.command.stop {
            Stop::Uncertainty { target, .. } => target,
            _ => -1.0,
        };
        if auto && !(improving(&runs, 3, 0.0) && improving(&runs, 5, target)) {
            break;
        }
    }
    summarise(&runs, out);
    Ok(())
}

/// `hasAverageImprovement`: too few runs to judge, or the mean gain of the last `count`.
fn improving(runs: &[(u32, Span)], count: usize, min: f64) -> bool {
    if runs.len() < count + 1 {
        return true;
    }
    let gains: f64 = runs[runs.len() - count - 1..]
        .windows(2)
        .map(|w| (w[1].1.op_rate() - w[0].1.op_rate()) / w[0].1.op_rate())
        .sum();
    gains / count as f64 >= min
}

fn summarise(runs: &[(u32, Span)], out: &mut Output<'_>) {
    let ids: Vec<String> = runs
        .iter()
        .map(|(t, _)| format!("{t} threadCount"))
        .collect();
    let width = ids.iter().map(String::len).max().unwrap_or(2);
    out.line(&format!("{:>width$}, {}", "id", report::header()));
    for (id, (_, span)) in ids.iter().zip(runs) {
        out.line(&format!(
            "{id:>width$}, {}",
            report::row("total", span, span.ops(), span.elapsed, 0.0)
        ));
    }
}
