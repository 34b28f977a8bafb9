//! The event log of one traced request (Cassandra's `TraceState`): each step a layer reports
//! is kept with the microseconds since the request started and the thread that ran it. The
//! query layer owns the session (its `system_traces` rows); the layers below only append
//! events through an `Option<&Trace>`, which is `None` for untraced requests.
use std::ops::Bound;
use std::time::Instant;

use parking_lot::Mutex;
use storage::{KeyRange, PartitionPosition, ReadStats};

/// One traced step.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    pub activity: String,
    /// Microseconds since the request started (`source_elapsed`).
    pub elapsed_micros: i32,
    pub thread: String,
}

/// The events of one traced request, in the order they happened.
#[derive(Debug)]
pub struct Trace {
    started: Instant,
    events: Mutex<Vec<TraceEvent>>,
}

impl Default for Trace {
    fn default() -> Self {
        Trace::new()
    }
}

impl Trace {
    /// A trace whose clock starts now.
    pub fn new() -> Trace {
        Trace {
            started: Instant::now(),
            events: Mutex::new(Vec::new()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use storage::PartitionKey;

    #[test]
    fn events_keep_order_and_elapsed_time() {
        let t = Trace::new();
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
        let t = Trace::new();
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
}

/// "Sending VERB message to /address" for each other replica a request goes to, once each.
pub(crate) fn sending<'a>(
    trace: Option<&Trace>,
    verb: &str,
    local: std::net::IpAddr,
    replicas: impl Iterator<Item = &'a ring::Endpoint>,
) {
    let Some(t) = trace else { return };
    let mut sent = std::collections::BTreeSet::new();
    for endpoint in replicas {
        if endpoint.addr != local && sent.insert(endpoint.addr) {
            t.event(format!("Sending {verb} message to /{}", endpoint.addr));
        }
    }
}
