//! The workers of `helenus stress lwt` and what they measured.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::response::query_result::QueryResult;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::{Consistency, SerialConsistency};
use scylla::value::{CqlValue, Row};
use tokio::task::JoinSet;

use super::{Config, Contention};
use crate::client::contact_points;
use crate::metrics::new_histogram;

/// What the workers counted and measured.
pub struct Report {
    applied: u64,
    not_applied: u64,
    errors: u64,
    elapsed: Duration,
    latencies: Histogram<u64>,
}

impl Report {
    fn empty() -> Report {
        Report {
            applied: 0,
            not_applied: 0,
            errors: 0,
            elapsed: Duration::ZERO,
            latencies: new_histogram(),
        }
    }

    fn add(&mut self, other: &Report) {
        self.applied += other.applied;
        self.not_applied += other.not_applied;
        self.errors += other.errors;
        // Both histograms have the same bounds, so adding cannot fail.
        let _ = self.latencies.add(&other.latencies);
    }

    /// One JSON object; latencies in milliseconds.
    pub fn json(&self, config: &Config) -> String {
        let operations = self.applied + self.not_applied;
        let seconds = self.elapsed.as_secs_f64();
        let ms = |micros: u64| micros as f64 / 1000.0;
        serde_json::json!({
            "workload": config.contention.name(),
            "nodes": config.nodes,
            "threads": config.threads,
            "operations": operations,
            "applied": self.applied,
            "not_applied": self.not_applied,
            "errors": self.errors,
            "seconds": seconds,
            "ops_per_second": if seconds > 0.0 { operations as f64 / seconds } else { 0.0 },
            "p50_ms": ms(self.latencies.value_at_quantile(0.5)),
            "p99_ms": ms(self.latencies.value_at_quantile(0.99)),
            "max_ms": ms(self.latencies.max()),
        })
        .to_string()
    }
}

/// The prepared statements and the run's partitions: keys start with `run`, fresh each run.
struct Job {
    session: Session,
    insert: PreparedStatement,
    update: PreparedStatement,
    run: u128,
    until: Instant,
}

pub async fn run(config: &Config) -> Result<Report, String> {
    let session = connect(config).await?;
    let ddl = [
        format!(
            "CREATE KEYSPACE IF NOT EXISTS stress_lwt WITH replication = \
             {{'class': 'SimpleStrategy', 'replication_factor': {}}}",
            config.replication_factor
        ),
        "CREATE TABLE IF NOT EXISTS stress_lwt.t (k text PRIMARY KEY, v bigint)".into(),
    ];
    for statement in &ddl {
        session
            .query_unpaged(statement.as_str(), ())
            .await
            .map_err(|e| format!("{statement}: {e}"))?;
    }
    session
        .await_schema_agreement()
        .await
        .map_err(|e| format!("Schema agreement: {e}"))?;
    let prepare = |cql: &'static str| {
        let session = &session;
        async move {
            session
                .prepare(cql)
                .await
                .map_err(|e| format!("Failed to prepare {cql}: {e}"))
        }
    };
    let insert = prepare("INSERT INTO stress_lwt.t (k, v) VALUES (?, ?) IF NOT EXISTS").await?;
    let update = prepare("UPDATE stress_lwt.t SET v = ? WHERE k = ? IF v = ?").await?;
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let start = Instant::now();
    let job = std::sync::Arc::new(Job {
        session,
        insert,
        update,
        run,
        until: start + config.duration,
    });
    if config.contention == Contention::Contended {
        job.session
            .execute_unpaged(&job.insert, (job.key(0, 0), 0i64))
            .await
            .map_err(|e| format!("Creating the contended partition: {e}"))?;
    }
    let mut workers = JoinSet::new();
    for worker in 0..config.threads {
        let job = job.clone();
        match config.contention {
            Contention::Uncontended => workers.spawn(async move { job.uncontended(worker).await }),
            Contention::Contended => workers.spawn(async move { job.contended(worker).await }),
        };
    }
    let mut report = Report::empty();
    while let Some(done) = workers.join_next().await {
        report.add(&done.map_err(|e| format!("A worker failed: {e}"))?);
    }
    report.elapsed = start.elapsed();
    Ok(report)
}

async fn connect(config: &Config) -> Result<Session, String> {
    let profile = ExecutionProfile::builder()
        .consistency(Consistency::Quorum)
        .serial_consistency(Some(SerialConsistency::Serial))
        .build();
    SessionBuilder::new()
        .known_nodes(contact_points(&config.nodes, config.port))
        .default_execution_profile_handle(profile.into_handle())
        .build()
        .await
        .map_err(|e| format!("Failed to connect to {:?}: {e}", config.nodes))
}

impl Job {
    fn key(&self, worker: u32, n: u64) -> String {
        format!("{}-{worker}-{n}", self.run)
    }

    /// Inserts a new partition, then updates it on the condition the insert made true.
    async fn uncontended(&self, worker: u32) -> Report {
        let mut report = Report::empty();
        let mut n = 0;
        while Instant::now() < self.until {
            let key = self.key(worker, n);
            self.measure(&mut report, &self.insert, (key.as_str(), 0i64))
                .await;
            self.measure(&mut report, &self.update, (1i64, key.as_str(), 0i64))
                .await;
            n += 1;
        }
        report
    }

    /// Compare-and-sets on the shared partition, each expecting the value seen last.
    async fn contended(&self, worker: u32) -> Report {
        let mut report = Report::empty();
        let key = self.key(0, 0);
        let mut seen = 0i64;
        let mut n = 0i64;
        while Instant::now() < self.until {
            n += 1;
            let new = (i64::from(worker) << 40) | n;
            let values = (new, key.as_str(), seen);
            if let Some(result) = self.measure(&mut report, &self.update, values).await {
                seen = match applied(&result) {
                    (true, _) => new,
                    (false, current) => current.unwrap_or(seen),
                };
            }
        }
        report
    }

    /// Runs one statement, counting its outcome and timing it when it answered.
    async fn measure(
        &self,
        report: &mut Report,
        statement: &PreparedStatement,
        values: impl scylla::serialize::row::SerializeRow,
    ) -> Option<QueryResult> {
        let started = Instant::now();
        match self.session.execute_unpaged(statement, values).await {
            Ok(result) => {
                let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                let _ = report.latencies.record(micros.max(1));
                match applied(&result).0 {
                    true => report.applied += 1,
                    false => report.not_applied += 1,
                }
                Some(result)
            }
            Err(_) => {
                report.errors += 1;
                None
            }
        }
    }
}

/// `[applied]` and, when false, the `v` the statement saw.
fn applied(result: &QueryResult) -> (bool, Option<i64>) {
    let Ok(rows) = result.clone().into_rows_result() else {
        return (false, None);
    };
    let names: Vec<String> = rows
        .column_specs()
        .iter()
        .map(|spec| spec.name().to_string())
        .collect();
    let Some(Ok(row)) = rows.rows::<Row>().ok().and_then(|mut rows| rows.next()) else {
        return (false, None);
    };
    let mut outcome = (false, None);
    for (name, value) in names.iter().zip(row.columns) {
        match (name.as_str(), value) {
            ("[applied]", Some(CqlValue::Boolean(applied))) => outcome.0 = applied,
            ("v", Some(CqlValue::BigInt(v))) => outcome.1 = Some(v),
            _ => {}
        }
    }
    outcome
}
