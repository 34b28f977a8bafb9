//! The event log of one traced request (Cassandra's `TraceState`): each step a layer reports
//! is kept with the microseconds since the request started and the thread that ran it. The
//! query layer owns the session (its `system_traces` rows); the layers below only append
//! events through an `Option<&Trace>`, which is `None` for untraced requests.
use std::net::{IpAddr, SocketAddr};
use std::ops::Bound;
use std::sync::Arc;
use std::time::Instant;

use net::Verb;

use mutation::{KeyRange, PartitionData, PartitionPosition, ReadStats};
use parking_lot::Mutex;
use uuid::Uuid;

/// One traced step.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    pub activity: String,
    /// Microseconds since the request started (`source_elapsed`).
    pub elapsed_micros: i32,
    pub thread: String,
}

/// The events one node records for a traced request, in the order they happened.
#[derive(Debug)]
pub struct Trace {
    session: Uuid,
    started: Instant,
    events: Mutex<Vec<TraceEvent>>,
}

impl Trace {
    /// The trace of tracing session `session` on this node, whose clock starts now.
    pub fn new(session: Uuid) -> Trace {
        Trace {
            session,
            started: Instant::now(),
            events: Mutex::new(Vec::new()),
        }
    }

    /// The session id, which travels with the request's internode messages.
    pub fn session(&self) -> Uuid {
        self.session
    }

    /// Records `activity` as happening now on the current thread.
    pub fn event(&self, activity: impl Into<String>) {
        let thread = std::thread::current();
        let event = TraceEvent {
            activity: activity.into(),
            elapsed_micros: self.elapsed_micros(),
            thread: thread.name().unwrap_or("unnamed").to_string(),
        };
        self.events.lock().push(event);
    }

    /// Microseconds since the trace started, saturated to an `int` column.
    pub fn elapsed_micros(&self) -> i32 {
        i32::try_from(self.started.elapsed().as_micros()).unwrap_or(i32::MAX)
    }

    /// The events recorded so far, leaving the log empty.
    pub fn take_events(&self) -> Vec<TraceEvent> {
        std::mem::take(&mut *self.events.lock())
    }
}

/// Records `activity()` when the request is traced; the text is only built then.
pub fn trace(trace: Option<&Trace>, activity: impl FnOnce() -> String) {
    if let Some(t) = trace {
        t.event(activity());
    }
}

/// The events of a finished single-partition read, in Cassandra's words. `total` is the
/// table's SSTable count; SSTables not read were ruled out by key range, Bloom filter or the
/// timestamp early exit, which Cassandra reports under "non-slice-intersecting".
pub(crate) fn partition_read(t: &Trace, stats: &ReadStats, total: usize) {
    let read = stats.sstables as usize;
    t.event(format!(
        "Skipped {}/{total} non-slice-intersecting sstables, included 0 due to tombstones",
        total.saturating_sub(read)
    ));
    t.event(format!("Merged data from memtables and {read} sstables"));
    rows_read(t, stats);
}

/// "Adding to <table> memtable", once per table written, in the order first written.
pub fn memtables<S: AsRef<str>>(t: &Trace, names: impl IntoIterator<Item = S>) {
    let mut seen: Vec<S> = Vec::new();
    for name in names {
        if !seen.iter().any(|s| s.as_ref() == name.as_ref()) {
            seen.push(name);
        }
    }
    for name in seen {
        t.event(format!("Adding to {} memtable", name.as_ref()));
    }
}

/// "Read N live rows and M tombstone cells", the end of every local read.
pub(crate) fn rows_read(t: &Trace, stats: &ReadStats) {
    t.event(format!(
        "Read {} live rows and {} tombstone cells",
        stats.live_rows, stats.tombstones
    ));
}

/// A key range as Cassandra prints one: `(min(-9223372036854775808), min(-9223372036854775808)]`
/// for the whole ring.
pub(crate) fn range_text(range: &KeyRange) -> String {
    let open = match &range.start {
        Bound::Included(_) => "[",
        _ => "(",
    };
    let close = match &range.end {
        Bound::Excluded(_) => ")",
        _ => "]",
    };
    format!(
        "{open}{}, {}{close}",
        position_text(&range.start),
        position_text(&range.end)
    )
}

fn position_text(bound: &Bound<PartitionPosition>) -> String {
    match bound {
        Bound::Unbounded => format!("min({})", i64::MIN),
        Bound::Included(p) | Bound::Excluded(p) => match p {
            PartitionPosition::Token(t) => format!("min({t})"),
            PartitionPosition::Key(k) => format!("DecoratedKey({}, {})", k.token, hex(&k.key)),
        },
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// "Sending VERB message to /address:port" for each other replica a request goes to, once
/// each (Cassandra 5.0's wording).
pub(crate) fn sending<'a>(
    trace: Option<&Trace>,
    verb: Verb,
    local: IpAddr,
    port: u16,
    replicas: impl Iterator<Item = &'a ring::Endpoint>,
) {
    let Some(t) = trace else { return };
    let mut sent = std::collections::BTreeSet::new();
    for endpoint in replicas {
        if endpoint.addr != local && sent.insert(endpoint.addr) {
            let to = SocketAddr::new(endpoint.addr, port);
            t.event(format!("Sending {} message to /{to}", verb.name()));
        }
    }
}

/// Writes the events a replica recorded for another node's tracing session into
/// `system_traces.events`, naming this node as their source; the query layer installs it.
pub trait TraceSink: Send + Sync {
    fn write(&self, session: Uuid, events: Vec<TraceEvent>);
}

/// The trace a replica keeps for a message of a traced session (`None` when untraced),
/// starting with "VERB message received from /coordinator".
pub(crate) fn received(session: Option<Uuid>, verb: Verb, from: SocketAddr) -> Option<Trace> {
    let trace = Trace::new(session?);
    trace.event(format!("{} message received from /{from}", verb.name()));
    Some(trace)
}

/// Ends a replica's trace with "Enqueuing response to /coordinator" and hands its events to
/// `sink` (dropped when no sink is installed).
pub(crate) fn respond(trace: Option<Trace>, sink: Option<&Arc<dyn TraceSink>>, to: SocketAddr) {
    let (Some(trace), Some(sink)) = (trace, sink) else {
        return;
    };
    trace.event(format!("Enqueuing response to /{to}"));
    sink.write(trace.session, trace.take_events());
}

/// A replica's "Read N live rows and M tombstone cells" over the unresolved data it answers
/// with: rows not deleted as a whole count as live; row, range and partition deletions count
/// as tombstones (cell tombstones and expired cells are not told apart there).
pub(crate) fn data_read<'a>(t: &Trace, partitions: impl Iterator<Item = &'a PartitionData>) {
    let (mut live, mut tombstones) = (0, 0);
    for data in partitions {
        let deleted = data.rows.values().filter(|r| !r.deletion.is_live()).count();
        live += data.rows.len() - deleted;
        tombstones += deleted + data.range_tombstones.len();
        tombstones += usize::from(!data.partition_deletion.is_live());
    }
    t.event(format!(
        "Read {live} live rows and {tombstones} tombstone cells"
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use mutation::PartitionKey;

    #[test]
    fn events_keep_order_and_elapsed_time() {
        let t = Trace::new(Uuid::nil());
        t.event("first");
        trace(Some(&t), || "second".to_string());
        trace(None, || unreachable!("untraced requests build no text"));
        let events = t.take_events();
        let names: Vec<&str> = events.iter().map(|e| e.activity.as_str()).collect();
        assert_eq!(names, ["first", "second"]);
        assert!(events[0].elapsed_micros <= events[1].elapsed_micros);
        assert!(t.take_events().is_empty());
    }

    #[test]
    fn read_events_use_cassandras_wording() {
        let t = Trace::new(Uuid::nil());
        let stats = ReadStats {
            sstables: 1,
            tombstones: 2,
            live_rows: 3,
        };
        partition_read(&t, &stats, 4);
        let names: Vec<String> = t.take_events().into_iter().map(|e| e.activity).collect();
        assert_eq!(
            names,
            [
                "Skipped 3/4 non-slice-intersecting sstables, included 0 due to tombstones",
                "Merged data from memtables and 1 sstables",
                "Read 3 live rows and 2 tombstone cells",
            ]
        );
    }

    #[test]
    fn ranges_print_as_cassandra_prints_them() {
        assert_eq!(
            range_text(&KeyRange::all()),
            "(min(-9223372036854775808), min(-9223372036854775808)]"
        );
        let key = PartitionKey {
            token: 5,
            key: Bytes::from_static(&[0, 1]),
        };
        let range = KeyRange {
            start: Bound::Excluded(PartitionPosition::Key(key)),
            end: Bound::Unbounded,
        };
        assert_eq!(
            range_text(&range),
            "(DecoratedKey(5, 0001), min(-9223372036854775808)]"
        );
    }

    /// Keeps what a replica hands it.
    #[derive(Default)]
    struct Kept(Mutex<Vec<(Uuid, Vec<String>)>>);

    impl TraceSink for Kept {
        fn write(&self, session: Uuid, events: Vec<TraceEvent>) {
            let names = events.into_iter().map(|e| e.activity).collect();
            self.0.lock().push((session, names));
        }
    }

    #[test]
    fn a_replica_traces_only_traced_messages_and_hands_its_events_to_the_sink() {
        let coordinator: SocketAddr = "127.0.0.1:7000".parse().unwrap();
        assert!(received(None, Verb::Read, coordinator).is_none());
        let session = Uuid::from_u128(42);
        let kept_trace = received(Some(session), Verb::Mutation, coordinator);
        trace(kept_trace.as_ref(), || "Appending to commitlog".into());
        let kept = Arc::new(Kept::default());
        let sink: Arc<dyn TraceSink> = kept.clone();
        respond(kept_trace, Some(&sink), coordinator);
        let expected = vec![
            "MUTATION_REQ message received from /127.0.0.1:7000".to_string(),
            "Appending to commitlog".to_string(),
            "Enqueuing response to /127.0.0.1:7000".to_string(),
        ];
        assert_eq!(*kept.0.lock(), vec![(session, expected)]);
    }

    #[test]
    fn replica_reads_count_rows_and_deletions() {
        let mut data = PartitionData::default();
        let mut deleted = mutation::Row::new(Bytes::from_static(b"b"));
        deleted.deletion = mutation::DeletionTime::new(5, 1);
        for row in [mutation::Row::new(Bytes::from_static(b"a")), deleted] {
            data.rows.insert(row.clustering.clone(), row);
        }
        let t = Trace::new(Uuid::nil());
        data_read(&t, [&data, &PartitionData::default()].into_iter());
        let events = t.take_events();
        assert_eq!(events[0].activity, "Read 1 live rows and 1 tombstone cells");
    }
}
