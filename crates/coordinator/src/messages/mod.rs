//! Payloads of the storage verbs, on `mutation::codec`: a version byte, the sender's metadata
//! epoch (a replica that has not applied it yet waits for it before failing on an unknown
//! table), then the verb's body. Decoding checks every length and never panics.
pub(crate) mod batch;
pub(crate) mod paxos;

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use bytes::{BufMut, Bytes};
use mutation::codec::{put_bytes, put_len, put_mutation, DecodeError, Reader};
use mutation::scan::ScanSource;
use mutation::wire::{key_range, put_key_range, put_read_filter, read_filter};
use mutation::wire::{put_scan_source, put_source_rows, scan_source, source_rows};
use mutation::{CounterUpdate, KeyRange, Mutation, PartitionKey, ReadFilter, SourceRows, TableId};
use ring::ReplicationStrategy;
use types::{Consistency, CqlError, CqlResult};
use uuid::Uuid;

/// The encoding version of every storage verb's payload.
const VERSION: u8 = 2;

/// `Verb::Mutation`: mutations a replica applies as one commit-log record.
#[derive(Clone, Debug, PartialEq)]
pub struct MutationRequest {
    pub epoch: u64,
    pub session: Option<Uuid>,
    pub mutations: Vec<Mutation>,
}

impl MutationRequest {
    /// Encodes `mutations` (any iterator over them: a replica gets the ones it owns).
    pub fn encode<'a>(
        epoch: u64,
        session: Option<Uuid>,
        mutations: impl ExactSizeIterator<Item = &'a Mutation>,
    ) -> Bytes {
        let mut out = header(epoch, session);
        put_len(&mut out, mutations.len());
        for m in mutations {
            put_mutation(&mut out, m);
        }
        out.into()
    }

    pub fn decode(payload: &[u8]) -> Result<MutationRequest, DecodeError> {
        let mut reader = Reader { bytes: payload };
        let (epoch, session) = read_header(&mut reader)?;
        let count = reader.len()?;
        let mutations = (0..count)
            .map(|_| reader.mutation())
            .collect::<Result<Vec<_>, _>>()?;
        end(&reader)?;
        Ok(MutationRequest {
            epoch,
            session,
            mutations,
        })
    }
}

/// `Verb::Read`: one round of a single-partition read, answered with the replica's
/// unresolved data (or only its digest).
#[derive(Clone, Debug, PartialEq)]
pub struct ReadRequest {
    pub epoch: u64,
    pub session: Option<Uuid>,
    pub table: TableId,
    pub key: PartitionKey,
    pub filter: ReadFilter,
    pub cap: usize,
    pub digest: bool,
}

impl ReadRequest {
    /// The encoding of this request asking for data or (`digest`) only its digest (the
    /// coordinator sends one request to several replicas, some for digests).
    pub fn encode_asking(&self, digest: bool) -> Bytes {
        let mut out = header(self.epoch, self.session);
        out.put_slice(self.table.0.as_bytes());
        out.put_i64(self.key.token);
        put_bytes(&mut out, &self.key.key);
        put_read_filter(&mut out, &self.filter);
        out.put_u64(u64::try_from(self.cap).unwrap_or(u64::MAX));
        out.put_u8(u8::from(digest));
        out.into()
    }

    pub fn decode(payload: &[u8]) -> Result<ReadRequest, DecodeError> {
        let mut r = Reader { bytes: payload };
        let (epoch, session) = read_header(&mut r)?;
        let request = ReadRequest {
            epoch,
            session,
            table: r.table_id()?,
            key: PartitionKey {
                token: r.i64()?,
                key: r.bytes()?,
            },
            filter: read_filter(&mut r)?,
            cap: usize::try_from(r.i64()? as u64).unwrap_or(usize::MAX),
            digest: r.flag()?,
        };
        end(&r)?;
        Ok(request)
    }
}

/// A replica's answer to a [`ReadRequest`].
#[derive(Clone, Debug, PartialEq)]
pub enum ReadReply {
    /// Its data (`None`: it holds nothing of the partition).
    Data(Option<SourceRows>),
    Digest([u8; 16]),
}

/// The digest of a replica holding nothing of the partition.
const NO_DATA: [u8; 16] = [0; 16];

impl ReadReply {
    /// The reply to a request for data or (`digest`) only its digest.
    pub fn new(data: Option<SourceRows>, digest: bool) -> ReadReply {
        match digest {
            true => ReadReply::Digest(data.as_ref().map_or(NO_DATA, SourceRows::digest)),
            false => ReadReply::Data(data),
        }
    }

    /// The digest of this reply, whichever form it has.
    pub fn digest(&self) -> [u8; 16] {
        match self {
            ReadReply::Data(data) => data.as_ref().map_or(NO_DATA, SourceRows::digest),
            ReadReply::Digest(digest) => *digest,
        }
    }

    pub fn encode(&self) -> Bytes {
        let mut out = Vec::new();
        match self {
            ReadReply::Data(None) => out.put_u8(0),
            ReadReply::Data(Some(rows)) => {
                out.put_u8(1);
                put_source_rows(&mut out, rows);
            }
            ReadReply::Digest(digest) => {
                out.put_u8(2);
                out.put_slice(digest);
            }
        }
        out.into()
    }

    pub fn decode(payload: &[u8]) -> Result<ReadReply, DecodeError> {
        let mut r = Reader { bytes: payload };
        let reply = match r.u8()? {
            0 => ReadReply::Data(None),
            1 => ReadReply::Data(Some(source_rows(&mut r)?)),
            2 => {
                let mut digest = [0; 16];
                digest[..8].copy_from_slice(&r.i64()?.to_be_bytes());
                digest[8..].copy_from_slice(&r.i64()?.to_be_bytes());
                ReadReply::Digest(digest)
            }
            _ => return Err(DecodeError("unknown read reply kind")),
        };
        end(&r)?;
        Ok(reply)
    }
}

/// `Verb::RangeRead`: a replica's unresolved partitions of a key range, at most a number.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeRequest {
    pub epoch: u64,
    pub session: Option<Uuid>,
    pub table: TableId,
    pub range: KeyRange,
    pub filter: ReadFilter,
    pub partition_limit: usize,
}

impl RangeRequest {
    pub fn encode(&self) -> Bytes {
        let mut out = header(self.epoch, self.session);
        out.put_slice(self.table.0.as_bytes());
        put_key_range(&mut out, &self.range);
        put_read_filter(&mut out, &self.filter);
        out.put_u64(u64::try_from(self.partition_limit).unwrap_or(u64::MAX));
        out.into()
    }

    pub fn decode(payload: &[u8]) -> Result<RangeRequest, DecodeError> {
        let mut r = Reader { bytes: payload };
        let (epoch, session) = read_header(&mut r)?;
        let request = RangeRequest {
            epoch,
            session,
            table: r.table_id()?,
            range: key_range(&mut r)?,
            filter: read_filter(&mut r)?,
            partition_limit: usize::try_from(r.i64()? as u64).unwrap_or(usize::MAX),
        };
        end(&r)?;
        Ok(request)
    }
}

/// The reply to a [`RangeRequest`].
pub fn encode_scan(scan: &ScanSource) -> Bytes {
    let mut out = Vec::new();
    put_scan_source(&mut out, scan);
    out.into()
}

pub fn decode_scan(payload: &[u8]) -> Result<ScanSource, DecodeError> {
    mutation::wire::decode_all(payload, scan_source)
}

/// `Verb::Counter`: counter deltas of one partition for their leader replica to apply and
/// replicate at `consistency`. It carries the keyspace's replication as the coordinator saw it
/// at `epoch`, and how long the leader may wait for the other replicas (`budget`, a little less
/// than the coordinator waits, so the leader's account of the answers reaches the client).
#[derive(Clone, Debug, PartialEq)]
pub struct CounterRequest {
    pub epoch: u64,
    pub table: TableId,
    pub key: PartitionKey,
    pub updates: Vec<CounterUpdate>,
    pub timestamp: i64,
    pub consistency: Consistency,
    pub strategy: ReplicationStrategy,
    pub budget: Duration,
}

impl CounterRequest {
    pub fn encode(&self) -> Bytes {
        let mut out = header(self.epoch, None);
        out.put_slice(self.table.0.as_bytes());
        out.put_i64(self.key.token);
        put_bytes(&mut out, &self.key.key);
        put_len(&mut out, self.updates.len());
        for update in &self.updates {
            match &update.clustering {
                Some(clustering) => {
                    out.put_u8(1);
                    put_bytes(&mut out, clustering);
                }
                None => out.put_u8(0),
            }
            put_bytes(&mut out, &update.column);
            out.put_i64(update.delta);
        }
        out.put_i64(self.timestamp);
        out.put_u16(self.consistency as u16);
        put_strategy(&mut out, &self.strategy);
        out.put_u64(u64::try_from(self.budget.as_millis()).unwrap_or(u64::MAX));
        out.into()
    }

    pub fn decode(payload: &[u8]) -> Result<CounterRequest, DecodeError> {
        let mut r = Reader { bytes: payload };
        let (epoch, _) = read_header(&mut r)?;
        let table = r.table_id()?;
        let key = PartitionKey {
            token: r.i64()?,
            key: r.bytes()?,
        };
        let count = r.len()?;
        let updates = (0..count)
            .map(|_| counter_update(&mut r))
            .collect::<Result<Vec<_>, _>>()?;
        let request = CounterRequest {
            epoch,
            table,
            key,
            updates,
            timestamp: r.i64()?,
            consistency: consistency(&mut r)?,
            strategy: strategy(&mut r)?,
            budget: Duration::from_millis(r.i64()? as u64),
        };
        end(&r)?;
        Ok(request)
    }
}

fn counter_update(r: &mut Reader) -> Result<CounterUpdate, DecodeError> {
    Ok(CounterUpdate {
        clustering: if r.flag()? { Some(r.bytes()?) } else { None },
        column: r.bytes()?,
        delta: r.i64()?,
    })
}

fn consistency(r: &mut Reader) -> Result<Consistency, DecodeError> {
    let code = u16::from_be_bytes([r.u8()?, r.u8()?]);
    Consistency::from_code(code).ok_or(DecodeError("unknown consistency level"))
}

fn put_strategy(out: &mut Vec<u8>, strategy: &ReplicationStrategy) {
    let rf = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    match strategy {
        ReplicationStrategy::Simple { rf: n } => {
            out.put_u8(0);
            out.put_u32(rf(*n));
        }
        ReplicationStrategy::NetworkTopology { dc_rf } => {
            out.put_u8(1);
            put_len(out, dc_rf.len());
            for (dc, n) in dc_rf {
                put_bytes(out, dc.as_bytes());
                out.put_u32(rf(*n));
            }
        }
        ReplicationStrategy::Local => out.put_u8(2),
        ReplicationStrategy::Everywhere => out.put_u8(3),
    }
}

fn strategy(r: &mut Reader) -> Result<ReplicationStrategy, DecodeError> {
    Ok(match r.u8()? {
        0 => ReplicationStrategy::Simple { rf: factor(r)? },
        1 => {
            let count = r.len()?;
            let mut dc_rf = BTreeMap::new();
            for _ in 0..count {
                let dc = String::from_utf8(r.bytes()?.to_vec())
                    .map_err(|_| DecodeError("datacenter name is not UTF-8"))?;
                dc_rf.insert(dc, factor(r)?);
            }
            ReplicationStrategy::NetworkTopology { dc_rf }
        }
        2 => ReplicationStrategy::Local,
        3 => ReplicationStrategy::Everywhere,
        _ => return Err(DecodeError("unknown replication strategy")),
    })
}

/// A replication factor (a count that is no length of what follows).
fn factor(r: &mut Reader) -> Result<usize, DecodeError> {
    Ok(r.i32()? as u32 as usize)
}

/// The leader's answer to a [`CounterRequest`]: the write's outcome at the level asked, which
/// the coordinator gives its client with the level's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterReply {
    Applied,
    Timeout {
        received: i32,
        block_for: i32,
    },
    Failure {
        received: i32,
        block_for: i32,
        failures: i32,
        /// The replicas that failed and their reason codes.
        reasons: Vec<(IpAddr, u16)>,
    },
    Unavailable {
        required: i32,
        alive: i32,
    },
}

impl CounterReply {
    /// The reply telling `result`; `None` for errors a leader does not answer with (they
    /// travel as a remote error).
    pub fn of(result: &CqlResult<()>) -> Option<CounterReply> {
        Some(match result {
            Ok(()) => CounterReply::Applied,
            Err(CqlError::WriteTimeout {
                received,
                block_for,
                ..
            }) => CounterReply::Timeout {
                received: *received,
                block_for: *block_for,
            },
            Err(CqlError::WriteFailure {
                received,
                block_for,
                failures,
                reasons,
                ..
            }) => CounterReply::Failure {
                received: *received,
                block_for: *block_for,
                failures: *failures,
                reasons: reasons.clone(),
            },
            Err(CqlError::Unavailable {
                required, alive, ..
            }) => CounterReply::Unavailable {
                required: *required,
                alive: *alive,
            },
            Err(_) => return None,
        })
    }

    /// What the client of a counter write at `cl` gets.
    pub fn into_result(self, cl: Consistency) -> CqlResult<()> {
        match self {
            CounterReply::Applied => Ok(()),
            CounterReply::Timeout {
                received,
                block_for,
            } => Err(CqlError::WriteTimeout {
                message: format!("Operation timed out - received only {received} responses."),
                consistency: cl,
                received,
                block_for,
                write_type: "COUNTER".into(),
            }),
            CounterReply::Failure {
                received,
                block_for,
                failures,
                reasons,
            } => Err(CqlError::WriteFailure {
                message: format!(
                    "Operation failed - received {received} responses and {failures} failures"
                ),
                consistency: cl,
                received,
                block_for,
                failures,
                write_type: "COUNTER".into(),
                reasons,
            }),
            CounterReply::Unavailable { required, alive } => Err(CqlError::Unavailable {
                message: format!("Cannot achieve consistency level {}", cl.name()),
                consistency: cl,
                required,
                alive,
            }),
        }
    }

    pub fn encode(&self) -> Bytes {
        let mut out = Vec::with_capacity(13);
        let (kind, numbers) = match self {
            CounterReply::Applied => (0, [0, 0, 0]),
            CounterReply::Timeout {
                received,
                block_for,
            } => (1, [*received, *block_for, 0]),
            CounterReply::Failure {
                received,
                block_for,
                failures,
                ..
            } => (2, [*received, *block_for, *failures]),
            CounterReply::Unavailable { required, alive } => (3, [*required, *alive, 0]),
        };
        out.put_u8(kind);
        for n in numbers {
            out.put_i32(n);
        }
        if let CounterReply::Failure { reasons, .. } = self {
            put_reasons(&mut out, reasons);
        }
        out.into()
    }

    pub fn decode(payload: &[u8]) -> Result<CounterReply, DecodeError> {
        let mut r = Reader { bytes: payload };
        let kind = r.u8()?;
        let [a, b, c] = [r.i32()?, r.i32()?, r.i32()?];
        let reply = match kind {
            0 => CounterReply::Applied,
            1 => CounterReply::Timeout {
                received: a,
                block_for: b,
            },
            2 => CounterReply::Failure {
                received: a,
                block_for: b,
                failures: c,
                reasons: reasons(&mut r)?,
            },
            3 => CounterReply::Unavailable {
                required: a,
                alive: b,
            },
            _ => return Err(DecodeError("unknown counter reply kind")),
        };
        end(&r)?;
        Ok(reply)
    }
}

/// A failure reason map: its length, then each replica's address bytes and reason code.
fn put_reasons(out: &mut Vec<u8>, reasons: &[(IpAddr, u16)]) {
    put_len(out, reasons.len());
    for (addr, code) in reasons {
        match addr {
            IpAddr::V4(v4) => put_bytes(out, &v4.octets()),
            IpAddr::V6(v6) => put_bytes(out, &v6.octets()),
        }
        out.put_i32(i32::from(*code));
    }
}

const BAD_ADDRESS: DecodeError = DecodeError("bad replica address");

fn reasons(r: &mut Reader) -> Result<Vec<(IpAddr, u16)>, DecodeError> {
    let n = r.len()?;
    let mut reasons = Vec::with_capacity(n);
    for _ in 0..n {
        let bytes = r.bytes()?;
        let addr = match bytes.len() {
            4 => IpAddr::from(<[u8; 4]>::try_from(bytes.as_ref()).map_err(|_| BAD_ADDRESS)?),
            _ => IpAddr::from(<[u8; 16]>::try_from(bytes.as_ref()).map_err(|_| BAD_ADDRESS)?),
        };
        let code = u16::try_from(r.i32()?).map_err(|_| DecodeError("bad reason code"))?;
        reasons.push((addr, code));
    }
    Ok(reasons)
}

/// The version byte, the epoch, and the tracing session the message belongs to (a flag byte,
/// then its 16 bytes when traced).
pub(crate) fn header(epoch: u64, session: Option<Uuid>) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.push(VERSION);
    out.extend_from_slice(&epoch.to_be_bytes());
    match session {
        Some(id) => {
            out.push(1);
            out.extend_from_slice(id.as_bytes());
        }
        None => out.push(0),
    }
    out
}

/// Checks the version and reads the epoch and the tracing session.
pub(crate) fn read_header(reader: &mut Reader) -> Result<(u64, Option<Uuid>), DecodeError> {
    if reader.u8()? != VERSION {
        return Err(DecodeError("unknown storage message version"));
    }
    let epoch = reader.i64()? as u64;
    if !reader.flag()? {
        return Ok((epoch, None));
    }
    let high = reader.i64()? as u64;
    let low = reader.i64()? as u64;
    Ok((epoch, Some(Uuid::from_u64_pair(high, low))))
}

/// Fails when bytes are left after the body.
pub(crate) fn end(reader: &Reader) -> Result<(), DecodeError> {
    match reader.bytes.is_empty() {
        true => Ok(()),
        false => Err(DecodeError("trailing bytes after the message")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mutation::{Cell, ColumnData, PartitionKey, PartitionUpdate, Row, TableId};

    fn mutation(key: &str) -> Mutation {
        let mut row = Row::new(Bytes::from_static(b"c"));
        row.columns = vec![ColumnData::simple(
            "v",
            Cell::live(7, Bytes::from_static(b"x")),
        )];
        Mutation {
            table: TableId(uuid::Uuid::from_u128(9)),
            key: PartitionKey {
                token: 42,
                key: Bytes::copy_from_slice(key.as_bytes()),
            },
            update: PartitionUpdate {
                rows: vec![row],
                ..Default::default()
            },
        }
    }

    #[test]
    fn mutation_requests_round_trip() {
        let mutations = [mutation("a"), mutation("b")];
        let session = Some(uuid::Uuid::from_u128(0x1234_5678_9abc));
        for session in [None, session] {
            let bytes = MutationRequest::encode(17, session, mutations.iter());
            let decoded = MutationRequest::decode(&bytes).unwrap();
            assert_eq!((decoded.epoch, decoded.session), (17, session));
            assert_eq!(decoded.mutations, mutations.to_vec());
        }
    }

    #[test]
    fn read_requests_and_replies_round_trip() {
        let request = ReadRequest {
            epoch: 5,
            session: Some(uuid::Uuid::from_u128(77)),
            table: TableId(uuid::Uuid::from_u128(3)),
            key: mutation("k").key,
            filter: ReadFilter::all(),
            cap: usize::MAX,
            digest: true,
        };
        let bytes = request.encode_asking(request.digest);
        assert_eq!(ReadRequest::decode(&bytes).unwrap(), request);
        for cut in 0..bytes.len() {
            assert!(ReadRequest::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut data = mutation::PartitionData::default();
        data.apply(mutation("k").update);
        let rows = SourceRows {
            data,
            stopped_at: None,
        };
        for reply in [
            ReadReply::Data(None),
            ReadReply::new(Some(rows.clone()), false),
            ReadReply::new(Some(rows.clone()), true),
        ] {
            let decoded = ReadReply::decode(&reply.encode()).unwrap();
            assert_eq!(decoded, reply);
            assert_eq!(decoded.digest(), reply.digest());
        }
        assert_eq!(
            ReadReply::new(Some(rows.clone()), true).digest(),
            ReadReply::Data(Some(rows)).digest()
        );
        assert!(ReadReply::decode(&[7]).is_err());
    }

    #[test]
    fn range_requests_and_replies_round_trip() {
        let request = RangeRequest {
            epoch: 2,
            session: None,
            table: TableId(uuid::Uuid::from_u128(4)),
            range: KeyRange {
                start: std::ops::Bound::Excluded(mutation::PartitionPosition::Key(
                    mutation("a").key,
                )),
                end: std::ops::Bound::Included(mutation::PartitionPosition::Token(99)),
            },
            filter: ReadFilter::all(),
            partition_limit: 128,
        };
        let bytes = request.encode();
        assert_eq!(RangeRequest::decode(&bytes).unwrap(), request);
        for cut in 0..bytes.len() {
            assert!(RangeRequest::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut data = mutation::PartitionData::default();
        data.apply(mutation("k").update);
        let scan = ScanSource {
            partitions: vec![(mutation("k").key, data)],
            stopped_at: Some(mutation("k").key),
        };
        assert_eq!(decode_scan(&encode_scan(&scan)).unwrap(), scan);
    }

    #[test]
    fn counter_requests_and_replies_round_trip_and_damage_is_refused() {
        let request = CounterRequest {
            epoch: 8,
            table: TableId(uuid::Uuid::from_u128(4)),
            key: mutation("k").key,
            updates: vec![
                CounterUpdate {
                    clustering: Some(Bytes::from_static(b"c")),
                    column: Bytes::from_static(b"n"),
                    delta: -3,
                },
                CounterUpdate {
                    clustering: None,
                    column: Bytes::from_static(b"s"),
                    delta: 7,
                },
            ],
            timestamp: 1234,
            consistency: Consistency::LocalQuorum,
            strategy: ReplicationStrategy::NetworkTopology {
                dc_rf: BTreeMap::from([("dc1".to_string(), 3), ("dc2".to_string(), 2)]),
            },
            budget: Duration::from_millis(4500),
        };
        let bytes = request.encode();
        assert_eq!(CounterRequest::decode(&bytes), Ok(request));
        for cut in 0..bytes.len() {
            assert!(
                CounterRequest::decode(&bytes[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        for reply in [
            CounterReply::Applied,
            CounterReply::Timeout {
                received: 1,
                block_for: 2,
            },
            CounterReply::Failure {
                received: 1,
                block_for: 3,
                failures: 1,
                reasons: vec![],
            },
            CounterReply::Failure {
                received: 0,
                block_for: 2,
                failures: 2,
                reasons: vec![([127, 0, 0, 2].into(), 0), ("::3".parse().unwrap(), 3)],
            },
            CounterReply::Unavailable {
                required: 2,
                alive: 1,
            },
        ] {
            let bytes = reply.encode();
            assert_eq!(CounterReply::decode(&bytes), Ok(reply.clone()));
            assert!(CounterReply::decode(&bytes[..bytes.len() - 1]).is_err());
            let result = reply.clone().into_result(Consistency::Quorum);
            assert_eq!(CounterReply::of(&result), Some(reply));
        }
        assert!(CounterReply::decode(&[9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
    }

    #[test]
    fn damaged_mutation_requests_are_refused_not_panicked_on() {
        let session = Some(uuid::Uuid::from_u128(5));
        let bytes = MutationRequest::encode(3, session, [mutation("a")].iter());
        for cut in 0..bytes.len() {
            assert!(
                MutationRequest::decode(&bytes[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        let mut longer = bytes.to_vec();
        longer.push(0);
        assert!(MutationRequest::decode(&longer).is_err());
        let mut other_version = bytes.to_vec();
        other_version[0] = 9;
        assert!(MutationRequest::decode(&other_version).is_err());
    }
}
