//! `GET /v1/proxyhistograms` — `nodetool proxyhistograms`: the coordinator's client-request
//! latencies of each kind, every consistency level merged. Helenus has no materialized views,
//! so their histogram stays empty (all zero).

use coordinator::metrics::LatencySnapshot;
use coordinator::RequestKind;

use super::snapshots::latency_percentiles;
use super::types::ProxyHistograms;
use crate::node::AdminNode;

pub fn histograms(node: &AdminNode) -> ProxyHistograms {
    let of = |kind| latency_percentiles(&merged(node, kind));
    ProxyHistograms {
        read_latency_micros: of(RequestKind::Read),
        write_latency_micros: of(RequestKind::Write),
        range_latency_micros: of(RequestKind::Range),
        cas_read_latency_micros: of(RequestKind::CasRead),
        cas_write_latency_micros: of(RequestKind::CasWrite),
        view_write_latency_micros: Default::default(),
    }
}

/// The latencies of one kind of request over every consistency level.
fn merged(node: &AdminNode, kind: RequestKind) -> LatencySnapshot {
    let levels = node.coordinator.metrics().requests(kind);
    let mut total = LatencySnapshot::default();
    for (_, snapshot) in levels {
        add(&mut total, &snapshot);
    }
    total
}

pub(super) fn add(total: &mut LatencySnapshot, one: &LatencySnapshot) {
    total.count += one.count;
    total.sum_micros += one.sum_micros;
    if total.buckets.len() < one.buckets.len() {
        total.buckets.resize(one.buckets.len(), 0);
    }
    for (mine, theirs) in total.buckets.iter_mut().zip(&one.buckets) {
        *mine += theirs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_add_bucket_by_bucket() {
        let mut total = LatencySnapshot::default();
        let one = LatencySnapshot {
            count: 3,
            sum_micros: 600,
            buckets: vec![1, 2, 0],
        };
        add(&mut total, &one);
        add(&mut total, &one);
        assert_eq!((total.count, total.sum_micros), (6, 1200));
        assert_eq!(total.buckets, vec![2, 4, 0]);
    }
}
