//! Request tracing as Cassandra does it: a client sets the tracing flag on a request (or the
//! node draws it with `nodetool settraceprobability`), the layers record their steps in a
//! [`Trace`], and once the request is answered its session and events are written to
//! `system_traces.sessions` and `system_traces.events` with `tracetype_query_ttl` (one day).
//! The session id travels with the request's internode messages; each replica traces its part
//! and writes its own events (source: the replica). Every node writes its rows as Cassandra
//! does, through the storage proxy to the replicas of `system_traces` at ANY, so a session
//! reads whole from any node.
mod rows;

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use coordinator::{Coordinator, Trace, TraceEvent, TraceSink};
use mutation::Mutation;
use schema::{Schema, TableMetadata};
use types::request::QueryOptions;
use types::result::Outcome;
use types::{Consistency, CqlResult};
use uuid::Uuid;

use crate::exec::{timeuuid, unique_micros};

/// The keyspace trace rows are written to.
const KEYSPACE: &str = "system_traces";

/// Cassandra's `tracetype_query_ttl` default: trace rows live one day.
pub const TRACE_TTL_SECONDS: i32 = 86_400;

/// What the transport knows about a request's tracing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tracing {
    /// The client set the tracing flag: the response carries the session id.
    pub requested: bool,
    /// The client's address (`system_traces.sessions.client`).
    pub client: IpAddr,
}

/// The session row's description of a request, built only for traced requests.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRequest {
    /// `request`: "Execute CQL3 query" and the like.
    pub request: &'static str,
    /// `parameters`: query text, consistency level, page size…
    pub parameters: Vec<(String, String)>,
}

impl TraceRequest {
    /// A QUERY or EXECUTE of `query` (Cassandra's `QueryMessage.traceQuery`).
    pub fn statement(request: &'static str, query: &str, options: &QueryOptions) -> TraceRequest {
        let mut parameters = vec![("query".to_string(), query.to_string())];
        if let Some(size) = options.page_size.filter(|s| *s > 0) {
            parameters.push(("page_size".into(), size.to_string()));
        }
        parameters.push((
            "consistency_level".into(),
            options.consistency.name().into(),
        ));
        if let Some(serial) = options.serial_consistency {
            parameters.push(("serial_consistency_level".into(), serial.name().into()));
        }
        TraceRequest {
            request,
            parameters,
        }
    }

    /// A PREPARE of `query`.
    pub fn prepare(query: &str) -> TraceRequest {
        TraceRequest {
            request: "Preparing CQL3 query",
            parameters: vec![("query".to_string(), query.to_string())],
        }
    }
}

/// One traced request in flight.
pub struct Session {
    id: Uuid,
    requested: bool,
    client: IpAddr,
    started_at_micros: i64,
    request: TraceRequest,
    trace: Arc<Trace>,
}

impl Session {
    /// The event log the layers append to.
    pub fn trace(&self) -> Arc<Trace> {
        Arc::clone(&self.trace)
    }
}

/// The node's tracing settings and the writer of finished sessions.
pub struct Tracer {
    coordinator: Arc<Coordinator>,
    sessions: Option<Arc<TableMetadata>>,
    events: Option<Arc<TableMetadata>>,
    /// `coordinator`/`source` and their ports.
    source: rows::Source,
    /// The probability (f64 bits) of tracing a request the client did not ask to trace.
    probability: AtomicU64,
}

impl Tracer {
    pub fn new(
        coordinator: Arc<Coordinator>,
        schema: &Schema,
        address: IpAddr,
        port: u16,
    ) -> Tracer {
        let table = |name: &str| schema.table(KEYSPACE, name).cloned();
        Tracer {
            coordinator,
            sessions: table("sessions"),
            events: table("events"),
            source: rows::Source {
                address,
                port: i32::from(port),
            },
            probability: AtomicU64::new(0f64.to_bits()),
        }
    }

    /// What writes the events this node traces as a replica of another node's session.
    pub fn replica_sink(&self) -> Option<Arc<dyn TraceSink>> {
        let sink = ReplicaEvents {
            coordinator: Arc::downgrade(&self.coordinator),
            events: self.events.clone()?,
            source: self.source,
        };
        Some(Arc::new(sink))
    }

    /// The fraction of untraced requests traced anyway (`nodetool gettraceprobability`).
    pub fn probability(&self) -> f64 {
        f64::from_bits(self.probability.load(Ordering::Relaxed))
    }

    /// Sets the fraction of requests traced (`nodetool settraceprobability`), 0 to 1; else
    /// fails with Cassandra's message.
    pub fn set_probability(&self, probability: f64) -> Result<(), String> {
        if !(0.0..=1.0).contains(&probability) {
            return Err("Trace probability must be between 0 and 1".into());
        }
        self.probability
            .store(probability.to_bits(), Ordering::Relaxed);
        Ok(())
    }

    /// Starts a session when the client asked for one or the trace probability draws one;
    /// `describe` runs only then.
    pub fn begin(
        &self,
        tracing: Tracing,
        describe: impl FnOnce() -> TraceRequest,
    ) -> Option<Session> {
        if !tracing.requested && !self.draw() {
            return None;
        }
        let started_at_micros = unique_micros();
        let request = describe();
        let id = Uuid::from_bytes(timeuuid(started_at_micros));
        Some(Session {
            id,
            requested: tracing.requested,
            client: tracing.client,
            started_at_micros,
            request,
            trace: Arc::new(Trace::new(id)),
        })
    }

    /// Whether this untraced request is traced by probability.
    fn draw(&self) -> bool {
        let p = self.probability();
        if p <= 0.0 {
            return false;
        }
        // The low 53 bits of a random UUID are all random (its fixed bits are higher up).
        let bits = Uuid::new_v4().as_u64_pair().1 & ((1u64 << 53) - 1);
        let roll = bits as f64 / (1u64 << 53) as f64;
        roll < p
    }

    /// Ends `session` (if any): its rows are written in the background, and a client that
    /// asked for tracing gets the session id with the result.
    pub fn finish(
        &self,
        session: Option<Session>,
        result: CqlResult<Outcome>,
    ) -> CqlResult<Outcome> {
        let Some(session) = session else {
            return result;
        };
        let duration = session.trace.elapsed_micros();
        let (id, requested) = (session.id, session.requested);
        self.write_in_background(session, duration);
        result.map(|mut outcome| {
            if requested {
                outcome.tracing_id = Some(id);
            }
            outcome
        })
    }

    fn write_in_background(&self, session: Session, duration: i32) {
        let (Some(sessions), Some(events)) = (&self.sessions, &self.events) else {
            return;
        };
        let tables = rows::Tables { sessions, events };
        let mutations = rows::mutations(&tables, &self.source, &session, duration);
        write_rows(self.coordinator.clone(), mutations, session.id);
    }
}

/// Writes trace rows in the background as Cassandra does: through the storage proxy to the
/// replicas of `system_traces`, at ANY (a trace never fails or delays its request).
fn write_rows(coordinator: Arc<Coordinator>, mutations: CqlResult<Vec<Mutation>>, session: Uuid) {
    tokio::spawn(async move {
        let written = match mutations {
            Ok(mutations) => {
                let any = Consistency::Any;
                coordinator.write(KEYSPACE, mutations, any, None).await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            tracing::warn!("cannot write trace session {session}: {e}");
        }
    });
}

/// Writes the events this node records as a replica of other nodes' sessions (their source
/// is this node). Holds the coordinator weakly: the coordinator holds the sink.
struct ReplicaEvents {
    coordinator: Weak<Coordinator>,
    events: Arc<TableMetadata>,
    source: rows::Source,
}

impl TraceSink for ReplicaEvents {
    fn write(&self, session: Uuid, events: Vec<TraceEvent>) {
        let Some(coordinator) = self.coordinator.upgrade() else {
            return;
        };
        // The trace began this long before its last event, which was just recorded.
        let last = events.last().map_or(0, |e| e.elapsed_micros);
        let started = unique_micros() - i64::from(last);
        let rows = rows::event_mutations(&self.events, &self.source, session, started, events);
        write_rows(coordinator, rows, session);
    }
}

#[cfg(test)]
mod tests;
