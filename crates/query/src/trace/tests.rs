use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use coordinator::{Coordinator, Timeouts};
use ring::Endpoint;
use schema::Schema;
use storage::{Storage, StorageConfig};
use types::request::QueryOptions;
use types::result::{Outcome, QueryResult};
use types::Consistency;

use super::rows::{mutations, Source, Tables};
use super::{TraceRequest, Tracer, Tracing};

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 9));

fn tracer(dir: &std::path::Path) -> Tracer {
    let storage = Storage::open(StorageConfig::new(dir.join("data"), dir.join("log")))
        .expect("storage opens");
    let local = Endpoint {
        addr: CLIENT,
        datacenter: "datacenter1".into(),
        rack: "rack1".into(),
        host_id: [0; 16],
    };
    let coordinator = Coordinator::new(Arc::new(storage), local, Timeouts::default());
    let schema = Schema::new(schema::system_keyspaces().into_iter().map(Arc::new));
    Tracer::new(Arc::new(coordinator), &schema, CLIENT, 9042)
}

fn tracing(requested: bool) -> Tracing {
    Tracing {
        requested,
        client: CLIENT,
    }
}

#[test]
fn statement_parameters_follow_query_message() {
    let options = QueryOptions {
        consistency: Consistency::LocalQuorum,
        page_size: Some(100),
        serial_consistency: Some(Consistency::Serial),
        ..QueryOptions::default()
    };
    let request = TraceRequest::statement("Execute CQL3 query", "SELECT 1", &options);
    assert_eq!(request.request, "Execute CQL3 query");
    let expected = [
        ("query", "SELECT 1"),
        ("page_size", "100"),
        ("consistency_level", "LOCAL_QUORUM"),
        ("serial_consistency_level", "SERIAL"),
    ];
    let got: Vec<(&str, &str)> = request
        .parameters
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(got, expected);
}

#[tokio::test]
async fn probability_is_checked_and_decides_untraced_requests() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tracer = tracer(dir.path());
    assert_eq!(tracer.probability(), 0.0);
    assert!(tracer.begin(tracing(false), || unreachable!()).is_none());
    assert!(tracer
        .begin(tracing(true), || TraceRequest::prepare("q"))
        .is_some());
    assert_eq!(
        tracer.set_probability(1.5),
        Err("Trace probability must be between 0 and 1".to_string())
    );
    assert!(tracer.set_probability(f64::NAN).is_err());
    tracer.set_probability(1.0).expect("valid probability");
    assert_eq!(tracer.probability(), 1.0);
    let drawn = tracer.begin(tracing(false), || TraceRequest::prepare("q"));
    let outcome = tracer.finish(drawn, Ok(Outcome::from(QueryResult::Void)));
    assert_eq!(outcome.expect("result passes through").tracing_id, None);
}

#[tokio::test]
async fn requested_sessions_return_their_id_and_write_rows() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tracer = tracer(dir.path());
    let session = tracer
        .begin(tracing(true), || TraceRequest::prepare("SELECT 1"))
        .expect("requested");
    session.trace().event("Parsing SELECT 1");
    session.trace().event("Preparing statement");
    let tables = Tables {
        sessions: tracer.sessions.as_deref().expect("sessions table"),
        events: tracer.events.as_deref().expect("events table"),
    };
    let source = Source {
        address: CLIENT,
        port: 9042,
    };
    let written = mutations(&tables, &source, &session, 42).expect("rows build");
    assert_eq!(written.len(), 3);
    assert!(written[0].update.rows[0]
        .liveness
        .as_ref()
        .is_some_and(|l| l.is_expiring()));
    let id = session.id;
    let outcome = tracer.finish(Some(session), Ok(QueryResult::Void.into()));
    assert_eq!(outcome.expect("ok").tracing_id, Some(id));
}
