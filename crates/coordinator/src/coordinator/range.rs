//! Range scans over replicas, as Cassandra's StorageProxy.getRangeSlice: the scanned range is
//! cut where token ownership changes, consecutive pieces are merged while the replicas they
//! share still meet the consistency level (so a ring whose nodes all hold everything is asked
//! once), and each stretch is asked of the replicas the level needs until enough partitions
//! are found. Several consecutive stretches are asked at once (Cassandra's
//! RangeCommandIterator and its concurrency factor): as many as the partitions expected in
//! them need to fill the request, from this node's share of the table at first and from what
//! the stretches asked so far returned after each round; their answers are taken in token
//! order and the scan stops as soon as it is full. Replicas answer with unresolved partitions
//! (tombstones kept), merged here; only partitions up to the earliest key where a replica
//! stopped are complete, and the stretch resumes after it. Replicas that missed something are
//! repaired before the stretch goes on. Paging stays with the query layer and is by key, valid
//! on any coordinator.
use std::collections::BTreeMap;
use std::ops::Bound;

use futures::future::BoxFuture;
use futures::stream::{FuturesOrdered, StreamExt};
use mutation::rounds::resolve_partition;
use mutation::scan::{ScanRound, ScanSource};
use mutation::PartitionData;
use mutation::{
    KeyRange, Partition, PartitionKey, PartitionPosition, ReadFilter, ReadStats, TableId,
};
use net::Verb;
use ring::{Endpoint, ReplicationStrategy, Token};
use storage::Storage;
use tokio::time::Instant;
use types::{Consistency, CqlResult};

use super::gather::{self, gather, Answer, Failure, Speculation};
use super::read::{self, contacts, HasData, ReadPlan, ReadScope, Readers};
use super::Coordinator;
use crate::consistency::validate_for_read;
use crate::failures::reason;
use crate::messages::{decode_scan, RangeRequest};
use crate::proxy_metrics::RequestKind;
use crate::replicas::ReplicaPlan;
use crate::responses::{unavailable, Requirement};
use crate::timeouts::TimeoutKind;
use crate::topology::Topology;
use crate::trace;

impl Coordinator {
    /// Reads up to `limit` partitions of a key range, in token order, adding what the scan
    /// did to `stats`.
    pub async fn scan(
        &self,
        scope: &ReadScope<'_>,
        range: &KeyRange,
        filter: &ReadFilter,
        limit: usize,
        stats: &mut ReadStats,
    ) -> CqlResult<Vec<Partition>> {
        let ReadScope {
            table,
            cl,
            now,
            trace,
            ..
        } = *scope;
        let strategy = &*self.strategy(scope.keyspace);
        let begun = tokio::time::Instant::now();
        let scan = async {
            validate_for_read(cl)?;
            let reachable = self.attached.remote.get().is_some();
            let requirement = Requirement::new(strategy, cl, &self.local.datacenter);
            let stretches =
                stretches(&self.topology, strategy, range, reachable, &requirement, cl)?;
            let started = tokio::time::Instant::now();
            if !stretches
                .iter()
                .all(|s| self.is_only_contact(&requirement, &s.live))
            {
                if trace.is_some() {
                    let contacted: Vec<ring::Endpoint> = stretches
                        .iter()
                        .flat_map(|s| read::contacts(&requirement, &s.live).0)
                        .collect();
                    let (local, port) = (self.local.addr, self.replica.storage_port);
                    trace::sending(trace, Verb::RangeRead, local, port, contacted.iter());
                }
                let plan = ScanPlan {
                    table,
                    filter,
                    now,
                    cl,
                    requirement: &requirement,
                    stretches,
                    per_piece: per_piece(&self.storage, table, &self.topology, strategy),
                };
                let readers = self.readers(TimeoutKind::Range, trace);
                let found = scan(&readers, plan, limit, stats).await?;
                self.slow
                    .check(started.elapsed(), || self.describe_read(table, None, limit));
                self.record(RequestKind::Range, cl, &[table], started);
                return Ok(found);
            }
            trace::trace(trace, || {
                let sstables = self.sstable_count(table);
                let range = trace::range_text(range);
                format!("Executing seq scan across {sstables} sstables for {range}")
            });
            let (partitions, read) = self
                .storage
                .scan_with_stats(table, range, filter, now, limit)
                .map_err(|e| self.read_error(e, strategy, cl))?;
            if let Some(t) = trace {
                trace::rows_read(t, &read);
            }
            stats.add(read);
            self.slow
                .check(started.elapsed(), || self.describe_read(table, None, limit));
            self.in_time(TimeoutKind::Range, started, strategy, cl)?;
            self.record(RequestKind::Range, cl, &[table], started);
            Ok(partitions)
        };
        self.counted(RequestKind::Range, cl, begun, scan.await)
    }
}

/// A stretch of the scanned range whose keys share live replicas (closest first).
#[derive(Clone, Debug)]
pub(crate) struct Stretch {
    pub range: KeyRange,
    pub live: Vec<Endpoint>,
    /// The ring's pieces it spans.
    pub pieces: usize,
}

/// One piece of the ring: keys with tokens in (`after`, `upto`] (unbounded when `None`) and
/// the token whose replicas own them.
struct Piece {
    after: Option<i64>,
    upto: Option<i64>,
    owner: i64,
}

/// The ring's pieces in token order: up to the first token, between tokens, after the last
/// (owned, wrapping around, by the first token's replicas).
fn pieces(tokens: &[Token]) -> Vec<Piece> {
    let Some(first) = tokens.first() else {
        return vec![Piece {
            after: None,
            upto: None,
            owner: 0,
        }];
    };
    let mut pieces = vec![Piece {
        after: None,
        upto: Some(first.0),
        owner: first.0,
    }];
    for pair in tokens.windows(2) {
        pieces.push(Piece {
            after: Some(pair[0].0),
            upto: Some(pair[1].0),
            owner: pair[1].0,
        });
    }
    let last = tokens[tokens.len() - 1].0;
    pieces.push(Piece {
        after: Some(last),
        upto: None,
        owner: first.0,
    });
    pieces
}

/// The lowest token a start bound admits.
fn start_token(bound: &Bound<PartitionPosition>) -> i64 {
    match bound {
        Bound::Unbounded => i64::MIN,
        Bound::Included(p) | Bound::Excluded(p) => position_token(p),
    }
}

/// The highest token an end bound admits.
fn end_token(bound: &Bound<PartitionPosition>) -> i64 {
    match bound {
        Bound::Unbounded => i64::MAX,
        Bound::Included(p) | Bound::Excluded(p) => position_token(p),
    }
}

fn position_token(p: &PartitionPosition) -> i64 {
    match p {
        PartitionPosition::Token(t) => *t,
        PartitionPosition::Key(k) => k.token,
    }
}

/// `range` restricted to `piece`, or `None` when they do not meet.
fn clip(range: &KeyRange, piece: &Piece) -> Option<KeyRange> {
    let (from, to) = (start_token(&range.start), end_token(&range.end));
    if piece.upto.is_some_and(|upto| upto < from) || piece.after.is_some_and(|after| after >= to) {
        return None;
    }
    let start = match piece.after {
        Some(after) if from <= after => Bound::Excluded(PartitionPosition::Token(after)),
        _ => range.start.clone(),
    };
    let end = match piece.upto {
        Some(upto) if to > upto => Bound::Included(PartitionPosition::Token(upto)),
        _ => range.end.clone(),
    };
    Some(KeyRange { start, end })
}

/// The stretches of `range`, each with the live replicas its keys share; Unavailable when a
/// piece's live replicas cannot meet the level.
pub(crate) fn stretches(
    topology: &Topology,
    strategy: &ReplicationStrategy,
    range: &KeyRange,
    reachable: bool,
    requirement: &Requirement,
    cl: Consistency,
) -> CqlResult<Vec<Stretch>> {
    let mut stretches: Vec<Stretch> = Vec::new();
    let ring = topology.ring();
    // One node owns the whole ring: one piece is enough (every scan of a single node).
    let tokens = match ring.endpoints().len() {
        0 | 1 => Vec::new(),
        _ => ring.tokens(),
    };
    for piece in pieces(&tokens) {
        let Some(clipped) = clip(range, &piece) else {
            continue;
        };
        let plan = ReplicaPlan::new(topology, strategy, piece.owner, reachable);
        unavailable(requirement, &plan, cl)?;
        if let Some(last) = stretches.last_mut() {
            let shared: Vec<Endpoint> = last
                .live
                .iter()
                .filter(|e| plan.live.iter().any(|o| o.addr == e.addr))
                .cloned()
                .collect();
            if requirement.unavailable(&shared).is_none() {
                last.range.end = clipped.end;
                last.live = shared;
                last.pieces += 1;
                continue;
            }
        }
        stretches.push(Stretch {
            range: clipped,
            live: plan.live,
            pieces: 1,
        });
    }
    Ok(stretches)
}

/// What a scan asks and needs.
pub(crate) struct ScanPlan<'a> {
    pub table: TableId,
    pub filter: &'a ReadFilter,
    /// The time the read counts as, in seconds (what has expired).
    pub now: i32,
    pub cl: Consistency,
    pub requirement: &'a Requirement,
    pub stretches: Vec<Stretch>,
    /// Live partitions expected in one piece of the ring ([`per_piece`]).
    pub per_piece: f64,
}

/// Live partitions expected in one piece of the ring (Cassandra's estimateResultsPerRange):
/// this node's partitions of the table over the pieces it replicates, about `replicas / nodes`
/// of the ring's pieces.
pub(crate) fn per_piece(
    storage: &Storage,
    table: TableId,
    topology: &Topology,
    strategy: &ReplicationStrategy,
) -> f64 {
    let partitions = storage.estimated_partitions(table).unwrap_or(0) as f64;
    let ring = topology.ring();
    let nodes = ring.endpoints().len().max(1);
    let pieces = ring.tokens().len() + 1;
    let replicas = strategy.total_replication_factor().clamp(1, nodes);
    partitions * nodes as f64 / (pieces * replicas) as f64
}

/// Most stretches asked at once (Cassandra's MAX_CONCURRENT_RANGE_REQUESTS: ten per core),
/// read once (finding the cores reads cgroup files).
fn max_concurrency() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()) * 10)
}

/// How many stretches to ask at once (Cassandra's concurrency factor).
struct Concurrency {
    /// Live partitions expected per piece; `None` once stretches were asked and returned
    /// none, when as many as allowed are asked.
    per_piece: Option<f64>,
    pieces_asked: usize,
    found: usize,
}

impl Concurrency {
    fn new(per_piece: f64) -> Concurrency {
        Concurrency {
            per_piece: Some(per_piece),
            pieces_asked: 0,
            found: 0,
        }
    }

    /// The first stretches of `next` whose expected partitions reach `wanted` (one when
    /// nothing is expected yet), at most `max_concurrency`.
    fn factor(&self, next: &[Stretch], wanted: usize) -> usize {
        let cap = max_concurrency().min(next.len()).max(1);
        let per_piece = match self.per_piece {
            None => return cap,
            Some(p) if p <= 0.0 => return 1,
            Some(p) => p,
        };
        let mut expected = 0.0;
        for (n, stretch) in next.iter().take(cap).enumerate() {
            expected += per_piece * stretch.pieces as f64;
            if expected >= wanted as f64 {
                return n + 1;
            }
        }
        cap
    }

    /// A round asked `pieces` pieces and found `found` live partitions.
    fn observe(&mut self, pieces: usize, found: usize) {
        self.pieces_asked += pieces;
        self.found += found;
        self.per_piece = match self.found {
            0 => None,
            n => Some(n as f64 / self.pieces_asked as f64),
        };
    }
}

/// Up to `limit` live partitions of the plan's stretches, in token order (and at most
/// `filter.total_row_limit` live rows in all).
pub(crate) async fn scan(
    readers: &Readers,
    plan: ScanPlan<'_>,
    limit: usize,
    stats: &mut ReadStats,
) -> CqlResult<Vec<Partition>> {
    let deadline = Instant::now() + readers.timeout;
    let rows = plan.filter.total_row_limit.unwrap_or(usize::MAX);
    let mut found = Found::new(limit, rows);
    let mut concurrency = Concurrency::new(plan.per_piece);
    let mut next = 0;
    while next < plan.stretches.len() && !found.full() {
        let factor = concurrency.factor(&plan.stretches[next..], found.wanted());
        let round = &plan.stretches[next..next + factor];
        next += factor;
        let (wanted, rows_left) = (found.limit - found.partitions.len(), found.rows_left);
        let before = found.partitions.len();
        let mut answers: FuturesOrdered<_> = round
            .iter()
            .map(|stretch| {
                let want = Found::new(wanted, rows_left);
                scan_stretch(readers, &plan, stretch, want, deadline)
            })
            .collect();
        while let Some(answer) = answers.next().await {
            let (partitions, read) = answer?;
            stats.add(read);
            partitions.into_iter().for_each(|p| found.keep(p));
            if found.full() {
                break;
            }
        }
        let pieces = round.iter().map(|s| s.pieces).sum();
        concurrency.observe(pieces, found.partitions.len() - before);
    }
    Ok(found.partitions)
}

/// The live partitions of one stretch up to what `found` wants, and what reading them took.
async fn scan_stretch(
    readers: &Readers,
    plan: &ScanPlan<'_>,
    stretch: &Stretch,
    mut found: Found,
    deadline: Instant,
) -> CqlResult<(Vec<Partition>, ReadStats)> {
    let (contacts, spares) = contacts(plan.requirement, &stretch.live);
    let mut asked = ReadPlan {
        table: plan.table,
        key: &PartitionKey {
            token: 0,
            key: bytes::Bytes::new(),
        },
        cl: plan.cl,
        block_for: plan.requirement.block_for(),
        contacts,
        spares,
        speculate_after: None,
    };
    let mut stats = ReadStats::default();
    let mut range = stretch.range.clone();
    while !found.full() {
        let wanted = found.limit - found.partitions.len();
        let replies = ask(readers, &mut asked, &range, plan.filter, wanted, deadline).await?;
        let Some(horizon) = found
            .take(readers, &asked, replies, plan, &mut stats)
            .await?
        else {
            break;
        };
        range.start = Bound::Excluded(PartitionPosition::Key(horizon));
    }
    Ok((found.partitions, stats))
}

/// The live partitions found so far and what the scan still wants.
struct Found {
    partitions: Vec<Partition>,
    limit: usize,
    rows_left: usize,
}

impl Found {
    fn new(limit: usize, rows_left: usize) -> Found {
        Found {
            partitions: Vec::new(),
            limit,
            rows_left,
        }
    }

    fn full(&self) -> bool {
        self.partitions.len() >= self.limit || self.rows_left == 0
    }

    /// The partitions still wanted (each live one has a row or more).
    fn wanted(&self) -> usize {
        (self.limit - self.partitions.len()).min(self.rows_left)
    }

    /// Keeps `partition` unless full, its rows cut to the rows still wanted.
    fn keep(&mut self, mut partition: Partition) {
        if self.full() {
            return;
        }
        partition.rows.truncate(self.rows_left);
        self.rows_left -= partition.rows.len();
        self.partitions.push(partition);
    }

    /// Merges the replicas' answers, repairs those that missed something, and keeps the live
    /// partitions; the key to resume after when a replica stopped. ReadTimeout when a repair
    /// was not applied (see `read::repair_timed_out`).
    async fn take(
        &mut self,
        readers: &Readers,
        asked: &ReadPlan<'_>,
        replies: Vec<(Endpoint, ScanSource)>,
        plan: &ScanPlan<'_>,
        stats: &mut ReadStats,
    ) -> CqlResult<Option<PartitionKey>> {
        let mut round = ScanRound::new();
        for (_, reply) in &replies {
            round.add(reply.clone());
        }
        let (complete, horizon) = round.complete();
        if replies.len() > 1 && readers.read_repair {
            let unapplied = repair(readers, asked.table, &complete, &replies).await;
            if unapplied > 0 {
                return Err(read::repair_timed_out(asked.cl, asked.block_for, unapplied));
            }
        }
        let (filter, now) = (plan.filter, plan.now);
        let mut partition_filter = filter.clone();
        for (key, data) in complete {
            if self.full() {
                return Ok(None);
            }
            let cap = filter.row_limit.unwrap_or(usize::MAX).min(self.rows_left);
            partition_filter.row_limit = Some(cap).filter(|&c| c < usize::MAX);
            if let Some(p) = resolve_partition(&key, data, &partition_filter, now, stats) {
                self.keep(p);
            }
        }
        Ok(horizon.filter(|_| !self.full()))
    }
}

/// Asks every contact for its partitions of `range`.
async fn ask(
    readers: &Readers,
    asked: &mut ReadPlan<'_>,
    range: &KeyRange,
    filter: &ReadFilter,
    partition_limit: usize,
    deadline: Instant,
) -> CqlResult<Vec<(Endpoint, ScanSource)>> {
    let request = RangeRequest {
        epoch: readers.epoch,
        session: readers.session,
        table: asked.table,
        range: range.clone(),
        filter: filter.clone(),
        partition_limit,
    };
    let ask = |slot: usize, endpoint: Endpoint| ask_one(readers, &request, endpoint, slot);
    let speculation = Speculation::default();
    gather(
        &mut asked.contacts,
        &mut asked.spares,
        ask,
        speculation,
        deadline,
    )
    .await
    .map_err(|shortfall| read::shortfall_error(asked, shortfall))
}

fn ask_one(
    readers: &Readers,
    request: &RangeRequest,
    endpoint: Endpoint,
    slot: usize,
) -> BoxFuture<'static, Answer<ScanSource>> {
    if endpoint.addr == readers.local {
        let r = request;
        let answer = readers
            .storage
            .scan_source(r.table, &r.range, &r.filter, r.partition_limit)
            .map_err(|e| {
                tracing::error!("local range read failed: {e}");
                Failure::Failed(reason::UNKNOWN)
            });
        return Box::pin(async move { (slot, endpoint, answer) });
    }
    let payload = request.encode();
    let replica = readers.metrics.replica(endpoint.addr);
    let asking = readers.remote(endpoint.addr);
    Box::pin(async move {
        let answer = asking
            .request(net::Verb::RangeRead, payload, &replica)
            .await;
        (
            slot,
            endpoint,
            answer.and_then(|b| gather::decoded(b, decode_scan)),
        )
    })
}

impl HasData for ScanSource {
    fn has_data(&self) -> bool {
        true
    }
}

/// Sends each replica what it lacks of the complete merged partitions.
async fn repair(
    readers: &Readers,
    table: TableId,
    complete: &[(PartitionKey, PartitionData)],
    replies: &[(Endpoint, ScanSource)],
) -> usize {
    let mut repairs = Vec::new();
    for (endpoint, reply) in replies {
        let theirs: BTreeMap<&PartitionKey, &PartitionData> =
            reply.partitions.iter().map(|(k, d)| (k, d)).collect();
        for (key, merged) in complete {
            let empty = PartitionData::default();
            let mine = theirs.get(key).copied().unwrap_or(&empty);
            if let Some(update) = merged.missing_in(mine) {
                let mutation = mutation::Mutation {
                    table,
                    key: key.clone(),
                    update,
                };
                repairs.push((endpoint.clone(), mutation));
            }
        }
    }
    read::apply_repairs(readers, repairs).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(ts: &[i64]) -> Vec<Token> {
        ts.iter().copied().map(Token).collect()
    }

    fn bounds(r: &KeyRange) -> (Bound<i64>, Bound<i64>) {
        let token = |b: &Bound<PartitionPosition>| match b {
            Bound::Unbounded => Bound::Unbounded,
            Bound::Included(p) => Bound::Included(position_token(p)),
            Bound::Excluded(p) => Bound::Excluded(position_token(p)),
        };
        (token(&r.start), token(&r.end))
    }

    fn stretches_of(pieces: &[usize]) -> Vec<Stretch> {
        let stretch = |&pieces| Stretch {
            range: KeyRange::all(),
            live: Vec::new(),
            pieces,
        };
        pieces.iter().map(stretch).collect()
    }

    #[test]
    fn the_concurrency_factor_asks_the_stretches_expected_to_fill_the_request() {
        let next = stretches_of(&[1, 2, 1, 3, 1]);
        // 4 partitions per piece: 4, 12, 16, 28 expected after 1..4 stretches.
        let concurrency = Concurrency::new(4.0);
        assert_eq!(concurrency.factor(&next, 4), 1);
        assert_eq!(concurrency.factor(&next, 13), 3);
        assert_eq!(
            concurrency.factor(&next, 1000),
            5,
            "never more than are left"
        );
        assert_eq!(concurrency.factor(&next, 0), 1, "at least one");
        assert_eq!(
            Concurrency::new(0.0).factor(&next, 10),
            1,
            "nothing expected"
        );
    }

    #[test]
    fn the_concurrency_factor_follows_what_the_rounds_returned() {
        let next = stretches_of(&[1; 100]);
        let mut concurrency = Concurrency::new(50.0);
        assert_eq!(concurrency.factor(&next, 100), 2);
        // The two pieces held 1 partition: the next round expects 0.5 per piece.
        concurrency.observe(2, 1);
        assert_eq!(concurrency.factor(&next, 3), 6);
        let mut empty = Concurrency::new(50.0);
        empty.observe(2, 0);
        assert_eq!(empty.factor(&next, 3), max_concurrency().min(100));
    }

    #[test]
    fn kept_partitions_stop_at_the_limits() {
        let partition = |rows: usize| Partition {
            key: PartitionKey {
                token: 0,
                key: bytes::Bytes::from_static(b"k"),
            },
            static_row: None,
            rows: (0..rows)
                .map(|_| mutation::Row::new(bytes::Bytes::new()))
                .collect(),
        };
        let mut found = Found::new(3, 5);
        assert_eq!(found.wanted(), 3);
        found.keep(partition(2));
        found.keep(partition(4));
        assert_eq!(found.partitions[1].rows.len(), 3, "cut to the rows left");
        assert!(found.full());
        found.keep(partition(1));
        assert_eq!(found.partitions.len(), 2);
    }

    #[test]
    fn the_whole_ring_is_cut_at_every_token_and_wraps_to_the_first_owner() {
        let ps = pieces(&tokens(&[-10, 0, 10]));
        let owners: Vec<i64> = ps.iter().map(|p| p.owner).collect();
        assert_eq!(owners, vec![-10, 0, 10, -10]);
        let clipped: Vec<_> = ps
            .iter()
            .filter_map(|p| clip(&KeyRange::all(), p))
            .collect();
        assert_eq!(clipped.len(), 4);
        assert_eq!(
            bounds(&clipped[0]),
            (Bound::Unbounded, Bound::Included(-10))
        );
        assert_eq!(
            bounds(&clipped[1]),
            (Bound::Excluded(-10), Bound::Included(0))
        );
        assert_eq!(bounds(&clipped[3]), (Bound::Excluded(10), Bound::Unbounded));
    }

    #[test]
    fn a_token_range_meets_only_the_pieces_it_overlaps() {
        let range = KeyRange {
            start: Bound::Excluded(PartitionPosition::Token(-5)),
            end: Bound::Included(PartitionPosition::Token(5)),
        };
        let ps = pieces(&tokens(&[-10, 0, 10]));
        let clipped: Vec<_> = ps.iter().filter_map(|p| clip(&range, p)).collect();
        assert_eq!(clipped.len(), 2);
        assert_eq!(
            bounds(&clipped[0]),
            (Bound::Excluded(-5), Bound::Included(0))
        );
        assert_eq!(
            bounds(&clipped[1]),
            (Bound::Excluded(0), Bound::Included(5))
        );
        let key_start = KeyRange {
            start: Bound::Excluded(PartitionPosition::Key(PartitionKey {
                token: 0,
                key: bytes::Bytes::from_static(b"k"),
            })),
            end: Bound::Unbounded,
        };
        let clipped: Vec<_> = ps.iter().filter_map(|p| clip(&key_start, p)).collect();
        // The piece ending at token 0 keeps the key bound; the next ones start after a token.
        assert_eq!(clipped.len(), 3);
        assert_eq!(clipped[0].start, key_start.start);
    }
}
