//! A client bound to one coordinator: random conditional statements and SERIAL reads on a few
//! rows, each recorded with its call and return times for the checker.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use paxos::linearizability::{Operation, RowInput, RowOutput};
use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};
use scylla::policies::host_filter::AllowListHostFilter;
use scylla::policies::retry::FallthroughRetryPolicy;
use scylla::response::query_result::QueryResult;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::{Consistency, SerialConsistency};
use scylla::value::{CqlValue, Row};

use crate::rng::Rng;

/// One operation of the history: a row's key and what was done to it.
pub type Recorded = Operation<(i32, RowInput), RowOutput>;

/// Everything the clients record, with the instant times are measured from.
pub struct Recorder {
    start: Instant,
    history: Mutex<Vec<Recorded>>,
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder {
            start: Instant::now(),
            history: Mutex::new(Vec::new()),
        }
    }

    fn now(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    fn record(&self, operation: Recorded) {
        self.history.lock().expect("history").push(operation);
    }

    pub fn history(&self) -> Vec<Recorded> {
        self.history.lock().expect("history").clone()
    }
}

pub const KEYSPACE_CQL: &str = "CREATE KEYSPACE lin WITH replication = \
                                {'class': 'SimpleStrategy', 'replication_factor': 3}";
pub const TABLE_CQL: &str = "CREATE TABLE lin.r (k int PRIMARY KEY, v int)";

/// A session that sends every request to `node` only, never retries (a retried conditional
/// statement could apply twice in the history's eyes) and gives up after `timeout`.
pub async fn connect(node: SocketAddr, timeout: Duration) -> Session {
    let profile = ExecutionProfile::builder()
        .consistency(Consistency::Quorum)
        .serial_consistency(Some(SerialConsistency::Serial))
        .retry_policy(Arc::new(FallthroughRetryPolicy))
        .request_timeout(Some(timeout))
        .build();
    SessionBuilder::new()
        .known_node_addr(node)
        .host_filter(Arc::new(
            AllowListHostFilter::new([node]).expect("allow list"),
        ))
        .default_execution_profile_handle(profile.into_handle())
        .connection_timeout(Duration::from_secs(5))
        .build()
        .await
        .unwrap_or_else(|e| panic!("connect to {node}: {e}"))
}

/// The four statements, prepared.
pub struct Statements {
    read: PreparedStatement,
    insert: PreparedStatement,
    update: PreparedStatement,
    delete: PreparedStatement,
}

impl Statements {
    pub async fn prepare(session: &Session) -> Statements {
        let prepare = |cql: &'static str| async move {
            session
                .prepare(cql)
                .await
                .unwrap_or_else(|e| panic!("prepare {cql}: {e}"))
        };
        let mut read = prepare("SELECT v FROM lin.r WHERE k = ?").await;
        read.set_consistency(Consistency::Serial);
        Statements {
            read,
            insert: prepare("INSERT INTO lin.r (k, v) VALUES (?, ?) IF NOT EXISTS").await,
            update: prepare("UPDATE lin.r SET v = ? WHERE k = ? IF v = ?").await,
            delete: prepare("DELETE FROM lin.r WHERE k = ? IF EXISTS").await,
        }
    }
}

/// What one client does.
#[derive(Clone, Copy)]
pub struct Workload {
    pub id: i32,
    pub keys: i32,
    pub until: Instant,
    pub seed: u64,
}

/// Runs operations until `workload.until`, recording each one that may have had an effect.
pub async fn run(
    session: Session,
    statements: Statements,
    workload: Workload,
    recorder: Arc<Recorder>,
) {
    let mut rng = Rng::new(workload.seed ^ (workload.id as u64 + 1) << 32);
    let mut seen: Vec<Option<i32>> = vec![None; workload.keys as usize];
    let mut n = 0;
    while Instant::now() < workload.until {
        n += 1;
        let key = rng.below(workload.keys as u64) as i32;
        let unique = workload.id * 1_000_000 + n;
        let input = choose(&mut rng, seen[key as usize], unique);
        let call = recorder.now();
        let result = execute(&session, &statements, key, input).await;
        let ret = recorder.now();
        match result {
            Ok(output) => {
                if let Some(value) = value_after(input, output) {
                    seen[key as usize] = value;
                }
                recorder.record(Operation {
                    input: (key, input),
                    output,
                    call,
                    ret: Some(ret),
                });
            }
            Err(error) => {
                if input != RowInput::Read && !surely_not_applied(&error) {
                    recorder.record(Operation {
                        input: (key, input),
                        output: RowOutput::Unknown,
                        call,
                        ret: None,
                    });
                }
                tokio::time::sleep(Duration::from_millis(100 + rng.below(200))).await;
            }
        }
    }
}

/// A statement for a row last seen holding `seen`: updates expect what the client saw.
fn choose(rng: &mut Rng, seen: Option<i32>, unique: i32) -> RowInput {
    let unique = i64::from(unique);
    match (rng.below(10), seen) {
        (0..=2, _) => RowInput::Read,
        (3..=8, Some(v)) if rng.below(5) > 0 => RowInput::UpdateIf {
            expect: i64::from(v),
            new: unique,
        },
        (9, _) => RowInput::DeleteIfExists,
        _ => RowInput::InsertIfNotExists(unique),
    }
}

/// The row's value after an operation that answered, as far as the client can tell.
fn value_after(input: RowInput, output: RowOutput) -> Option<Option<i32>> {
    let narrow = |v: Option<i64>| v.map(|v| v as i32);
    match (input, output) {
        (_, RowOutput::Value(v) | RowOutput::NotApplied(v)) => Some(narrow(v)),
        (
            RowInput::InsertIfNotExists(v) | RowInput::UpdateIf { new: v, .. },
            RowOutput::Applied,
        ) => Some(Some(v as i32)),
        (RowInput::DeleteIfExists, RowOutput::Applied) => Some(None),
        _ => None,
    }
}

/// Errors after which the statement surely did nothing: it was never sent, or the coordinator
/// refused it before any Paxos round (Unavailable).
fn surely_not_applied(error: &ExecutionError) -> bool {
    matches!(
        error,
        ExecutionError::ConnectionPoolError(_)
            | ExecutionError::EmptyPlan
            | ExecutionError::LastAttemptError(RequestAttemptError::DbError(
                DbError::Unavailable { .. },
                _
            ))
    )
}

async fn execute(
    session: &Session,
    statements: &Statements,
    key: i32,
    input: RowInput,
) -> Result<RowOutput, ExecutionError> {
    let narrow = |v: i64| v as i32;
    let result = match input {
        RowInput::Read => {
            let result = session.execute_unpaged(&statements.read, (key,)).await?;
            return Ok(RowOutput::Value(read_value(&result)));
        }
        RowInput::InsertIfNotExists(v) => {
            session
                .execute_unpaged(&statements.insert, (key, narrow(v)))
                .await?
        }
        RowInput::UpdateIf { expect, new } => {
            session
                .execute_unpaged(&statements.update, (narrow(new), key, narrow(expect)))
                .await?
        }
        RowInput::DeleteIfExists => session.execute_unpaged(&statements.delete, (key,)).await?,
    };
    Ok(applied(&result))
}

/// The first row's columns by name.
fn first_row(result: &QueryResult) -> Vec<(String, Option<CqlValue>)> {
    let rows = result.clone().into_rows_result().expect("a rows result");
    let names: Vec<String> = rows
        .column_specs()
        .iter()
        .map(|spec| spec.name().to_string())
        .collect();
    let mut rows = rows.rows::<Row>().expect("untyped rows");
    match rows.next() {
        Some(row) => names.into_iter().zip(row.expect("a row").columns).collect(),
        None => Vec::new(),
    }
}

fn column_v(columns: &[(String, Option<CqlValue>)]) -> Option<i64> {
    columns
        .iter()
        .find_map(|(name, value)| match (name.as_str(), value) {
            ("v", Some(CqlValue::Int(v))) => Some(i64::from(*v)),
            _ => None,
        })
}

fn read_value(result: &QueryResult) -> Option<i64> {
    column_v(&first_row(result))
}

/// `[applied]`, and when false the value the statement saw.
fn applied(result: &QueryResult) -> RowOutput {
    let columns = first_row(result);
    let applied = columns
        .iter()
        .any(|(name, value)| name == "[applied]" && *value == Some(CqlValue::Boolean(true)));
    if applied {
        RowOutput::Applied
    } else {
        RowOutput::NotApplied(column_v(&columns))
    }
}
