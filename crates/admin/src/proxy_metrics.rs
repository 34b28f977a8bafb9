//! The storage proxy's cluster-path figures in `/metrics`: failed client requests by kind and
//! outcome (Cassandra's ClientRequest Timeouts/Unavailables/Failures), speculative retries,
//! digest mismatches, read repairs, where single-partition requests were routed, and each
//! replica's latency as this coordinator sees it, and the Paxos proposers' events.
use std::sync::atomic::Ordering::Relaxed;

use coordinator::RequestKind;

use crate::exposition::{Labels, Sample, Snapshot};
use crate::AdminNode;

pub(crate) fn add(node: &AdminNode, snapshot: &mut Snapshot) {
    let proxy = node.coordinator.metrics().proxy();
    let errors = RequestKind::ALL
        .iter()
        .flat_map(|&kind| {
            proxy.errors(kind).into_iter().map(move |(outcome, n)| {
                let labels: Labels = vec![
                    ("request", kind.name().to_string()),
                    ("outcome", outcome.name().to_string()),
                ];
                (labels, Sample::Counter(n))
            })
        })
        .collect();
    snapshot.add(
        "helenus_client_request_errors_total",
        "Client requests that failed, by kind and outcome (timeouts, unavailables, failures)",
        errors,
    );
    let counters = [
        (
            "helenus_speculative_retries_total",
            "Reads that asked one more replica (speculative_retry)",
            &proxy.speculative_retries,
        ),
        (
            "helenus_digest_mismatches_total",
            "Reads whose replicas' digests disagreed",
            &proxy.digest_mismatches,
        ),
        (
            "helenus_read_repairs_total",
            "Repair mutations sent to replicas found stale by a read",
            &proxy.read_repairs,
        ),
    ];
    for (name, help, counter) in counters {
        snapshot.one(name, help, Sample::Counter(counter.load(Relaxed)));
    }
    let paxos = node
        .coordinator
        .paxos_counters()
        .into_iter()
        .map(|(event, n)| {
            let labels: Labels = vec![("event", event.to_string())];
            (labels, Sample::Counter(n))
        });
    snapshot.add(
        "helenus_paxos_total",
        "Lightweight transactions coordinated here, by event (applied, condition_not_met, \
         serial_reads, contention, unfinished_commit, commit_refreshes, timeouts, \
         write_unknown, unavailables, failures)",
        paxos.collect(),
    );
    let routed = [
        ("replica", &proxy.routed_to_replica),
        ("elsewhere", &proxy.routed_elsewhere),
    ]
    .into_iter()
    .map(|(to, n)| {
        (
            vec![("to", to.to_string())],
            Sample::Counter(n.load(Relaxed)),
        )
    })
    .collect();
    snapshot.add(
        "helenus_single_partition_requests_total",
        "Single-partition requests this node coordinated, by whether it is a replica of the key",
        routed,
    );
    let replicas = proxy
        .replicas()
        .into_iter()
        .map(|(addr, h)| (vec![("replica", addr.to_string())], Sample::Latency(h)))
        .collect();
    snapshot.add(
        "helenus_replica_latency_seconds",
        "Latency of requests this coordinator sent to each replica",
        replicas,
    );
}
