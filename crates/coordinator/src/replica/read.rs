//! `Verb::Read` and `Verb::RangeRead` on a replica: this node's unresolved data, which the
//! coordinator reconciles with the other replicas'.
use bytes::Bytes;
use mutation::TableId;
use net::{Peer, RemoteError, Verb};

use super::context::Replica;
use crate::failures::{malformed, read_failure};
use crate::messages::{encode_scan, RangeRequest, ReadReply, ReadRequest};
use crate::trace::{self, Trace};

/// `Verb::Read`: this node's unresolved data for one round of a read, or its digest.
pub(super) async fn read(
    replica: Replica,
    from: Peer,
    payload: Bytes,
) -> Result<Bytes, RemoteError> {
    let request = ReadRequest::decode(&payload).map_err(|e| malformed("read", &from, e))?;
    let r = &request;
    let trace = trace::received(r.session, Verb::Read, from.addr);
    let known = replica
        .known_tables(r.epoch, std::iter::once(r.table))
        .await;
    trace_query(&replica, trace.as_ref(), r.table);
    let data = known.and_then(|()| {
        replica
            .storage
            .read_source(r.table, &r.key, &r.filter, r.cap)
    });
    if let (Some(t), Ok(found)) = (&trace, &data) {
        trace::data_read(t, found.iter().map(|rows| &rows.data));
    }
    replica.respond(trace, &from);
    match data {
        Ok(data) => Ok(ReadReply::new(data, request.digest).encode()),
        Err(e) => Err(read_failure(e)),
    }
}

/// `Verb::RangeRead`: this node's unresolved partitions of a key range.
pub(super) async fn scan(
    replica: Replica,
    from: Peer,
    payload: Bytes,
) -> Result<Bytes, RemoteError> {
    let request = RangeRequest::decode(&payload).map_err(|e| malformed("range read", &from, e))?;
    let r = &request;
    let trace = trace::received(r.session, Verb::RangeRead, from.addr);
    let known = replica
        .known_tables(r.epoch, std::iter::once(r.table))
        .await;
    trace::trace(trace.as_ref(), || {
        let sstables = replica
            .storage
            .table_stats(r.table)
            .map_or(0, |s| s.sstables);
        let range = trace::range_text(&r.range);
        format!("Executing seq scan across {sstables} sstables for {range}")
    });
    let scan = known.and_then(|()| {
        replica
            .storage
            .scan_source(r.table, &r.range, &r.filter, r.partition_limit)
    });
    if let (Some(t), Ok(found)) = (&trace, &scan) {
        trace::data_read(t, found.partitions.iter().map(|(_, data)| data));
    }
    replica.respond(trace, &from);
    match scan {
        Ok(found) => Ok(encode_scan(&found)),
        Err(e) => Err(read_failure(e)),
    }
}

/// "Executing single-partition query on <table>".
fn trace_query(replica: &Replica, trace: Option<&Trace>, table: TableId) {
    trace::trace(trace, || {
        let name = replica
            .storage
            .table_name(table)
            .map_or_else(|_| format!("{table:?}"), |n| n.1);
        format!("Executing single-partition query on {name}")
    });
    trace::trace(trace, || "Acquiring sstable references".into());
}
