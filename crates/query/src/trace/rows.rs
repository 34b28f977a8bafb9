//! A finished trace session as `system_traces` mutations: one `sessions` row and one `events`
//! row per step, all expiring after [`TRACE_TTL_SECONDS`](super::TRACE_TTL_SECONDS).
use std::net::IpAddr;

use coordinator::TraceEvent;
use mutation::Mutation;
use schema::{Row as ValueRow, TableMetadata};
use types::{CqlResult, Value};
use uuid::Uuid;

use super::{Session, TRACE_TTL_SECONDS};
use crate::exec::{timeuuid, unique_micros};
use schema::value_rows;

/// The node that ran the request or a replica's part of it: `coordinator`/`source` and
/// their ports.
#[derive(Clone, Copy)]
pub(super) struct Source {
    pub address: IpAddr,
    pub port: i32,
}

/// The two `system_traces` tables.
pub(super) struct Tables<'a> {
    pub sessions: &'a TableMetadata,
    pub events: &'a TableMetadata,
}

/// The session row (with its `duration`) and the event rows of `session`.
pub(super) fn mutations(
    tables: &Tables,
    source: &Source,
    session: &Session,
    duration: i32,
) -> CqlResult<Vec<Mutation>> {
    let ts = unique_micros();
    let ttl = Some(TRACE_TTL_SECONDS);
    let row = session_row(source, session, duration);
    let mut out = vec![value_rows::insert_expiring(tables.sessions, &row, ts, ttl)?];
    let events = session.trace.take_events();
    let started = session.started_at_micros;
    out.extend(event_mutations(
        tables.events,
        source,
        session.id,
        started,
        events,
    )?);
    Ok(out)
}

/// The `events` rows of `session` recorded on `source`, whose trace started at
/// `started_at_micros` (microseconds since the epoch, by `source`'s clock).
pub(super) fn event_mutations(
    table: &TableMetadata,
    source: &Source,
    session: Uuid,
    started_at_micros: i64,
    events: Vec<TraceEvent>,
) -> CqlResult<Vec<Mutation>> {
    let ts = unique_micros();
    let mut out = Vec::with_capacity(events.len());
    let mut last = i64::MIN;
    for event in events {
        // Strictly increasing times keep events in order even within one microsecond.
        let at = (started_at_micros + i64::from(event.elapsed_micros)).max(last + 1);
        last = at;
        let row = event_row(source, session, &event, at);
        let ttl = Some(TRACE_TTL_SECONDS);
        out.push(value_rows::insert_expiring(table, &row, ts, ttl)?);
    }
    Ok(out)
}

fn text(s: &str) -> Option<Value> {
    Some(Value::Text(s.to_string()))
}

fn session_row(source: &Source, session: &Session, duration: i32) -> ValueRow {
    let parameters = session
        .request
        .parameters
        .iter()
        .map(|(k, v)| (Value::Text(k.clone()), Value::Text(v.clone())))
        .collect();
    ValueRow::from([
        ("session_id".to_string(), Some(Value::Uuid(session.id))),
        ("client".to_string(), Some(Value::Inet(session.client))),
        ("command".to_string(), text("QUERY")),
        ("coordinator".to_string(), Some(Value::Inet(source.address))),
        (
            "coordinator_port".to_string(),
            Some(Value::Int(source.port)),
        ),
        ("duration".to_string(), Some(Value::Int(duration))),
        ("parameters".to_string(), Some(Value::Map(parameters))),
        ("request".to_string(), text(session.request.request)),
        (
            "started_at".to_string(),
            Some(Value::Timestamp(session.started_at_micros / 1000)),
        ),
    ])
}

/// An event row; its `event_id` is a time UUID at `at` (microseconds), the event's own time.
fn event_row(source: &Source, session: Uuid, event: &TraceEvent, at: i64) -> ValueRow {
    ValueRow::from([
        ("session_id".to_string(), Some(Value::Uuid(session))),
        (
            "event_id".to_string(),
            Some(Value::Timeuuid(Uuid::from_bytes(timeuuid(at)))),
        ),
        ("activity".to_string(), text(&event.activity)),
        ("source".to_string(), Some(Value::Inet(source.address))),
        (
            "source_elapsed".to_string(),
            Some(Value::Int(event.elapsed_micros)),
        ),
        ("source_port".to_string(), Some(Value::Int(source.port))),
        ("thread".to_string(), text(&event.thread)),
    ])
}
