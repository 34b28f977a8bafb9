//! The payloads of the repair verbs (the frames carrying them are CRC-checked by `net`). All
//! integers big-endian. `ValidationRequest` asks a replica for the Merkle tree of a table's
//! range and is answered with the tree ([`MerkleTree`]); `SyncRequest` asks a replica to fetch
//! some ranges of a table from another one and is answered once the stream ended
//! ([`Synced`]).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use bytes::{BufMut, Bytes, BytesMut};
use mutation::{TableId, TokenRange};
use storage::RepairScope;
use streaming::messages::Reader;
use uuid::Uuid;

use crate::merkle::{Leaf, MerkleTree, MAX_DEPTH};

/// A payload that does not decode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed repair message: {0}")]
pub struct DecodeError(pub String);

impl From<streaming::messages::DecodeError> for DecodeError {
    fn from(e: streaming::messages::DecodeError) -> DecodeError {
        DecodeError(e.0)
    }
}

/// Build the tree of `table` over `range` at `depth`, reading the data as of `now`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationRequest {
    pub session: Uuid,
    pub table: TableId,
    pub range: TokenRange,
    pub depth: u8,
    /// Seconds: the same for every replica, so expiry and purging agree.
    pub now: i32,
    /// The data compared: all of it (full repair) or one repair state.
    pub scope: RepairScope,
}

/// What a replica does with its data of an incremental repair session (Cassandra's
/// PrepareConsistentRequest, FinalizeCommit and FailSession): mark the unrepaired data of
/// `ranges` pending for the session, or end the session, its data then repaired or unrepaired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingRequest {
    pub session: Uuid,
    /// Every replica of the session (`repair_admin list` shows them).
    pub participants: Vec<SocketAddr>,
    pub tables: Vec<TableId>,
    pub ranges: Vec<TokenRange>,
    pub action: PendingAction,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PendingAction {
    Prepare,
    /// Promote the session's data to repaired at this time (milliseconds).
    Promote(u64),
    Release,
}

/// Fetch `ranges` of `table` from `source`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncRequest {
    pub session: Uuid,
    pub table: TableId,
    pub source: SocketAddr,
    pub ranges: Vec<TokenRange>,
    /// What is fetched joins as pending for `session` (an incremental repair), instead of
    /// unrepaired.
    pub pending: bool,
}

/// What a sync moved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Synced {
    pub files: u64,
    pub bytes: u64,
}

impl ValidationRequest {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(53);
        out.put_slice(self.session.as_bytes());
        out.put_slice(self.table.0.as_bytes());
        put_range(&mut out, self.range);
        out.put_u8(self.depth);
        out.put_i32(self.now);
        put_scope(&mut out, self.scope);
        out.freeze()
    }

    pub fn decode(bytes: &[u8]) -> Result<ValidationRequest, DecodeError> {
        let mut r = Reader(bytes);
        let request = ValidationRequest {
            session: r.uuid()?,
            table: TableId(r.uuid()?),
            range: r.range()?,
            depth: depth(&mut r)?,
            now: r.i32()?,
            scope: scope(&mut r)?,
        };
        r.end()?;
        Ok(request)
    }
}

/// A tree's wire form: its range, depth, then each leaf's hash and partition count.
pub fn encode_tree(tree: &MerkleTree) -> Bytes {
    let mut out = BytesMut::with_capacity(17 + tree.leaves().len() * 40);
    put_range(&mut out, tree.range());
    out.put_u8(tree.depth());
    for leaf in tree.leaves() {
        out.put_slice(&leaf.hash);
        out.put_u64(leaf.partitions);
    }
    out.freeze()
}

pub fn decode_tree(bytes: &[u8]) -> Result<MerkleTree, DecodeError> {
    let mut r = Reader(bytes);
    let range = r.range()?;
    let depth = depth(&mut r)?;
    let mut leaves = Vec::with_capacity(1 << depth);
    for _ in 0..1u32 << depth {
        leaves.push(Leaf {
            hash: r.array()?,
            partitions: r.u64()?,
        });
    }
    r.end()?;
    MerkleTree::from_leaves(range, depth, leaves)
        .ok_or_else(|| DecodeError("a tree's leaves do not match its depth".into()))
}

impl SyncRequest {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::new();
        out.put_slice(self.session.as_bytes());
        out.put_slice(self.table.0.as_bytes());
        put_addr(&mut out, self.source);
        put_ranges(&mut out, &self.ranges);
        out.put_u8(u8::from(self.pending));
        out.freeze()
    }

    pub fn decode(bytes: &[u8]) -> Result<SyncRequest, DecodeError> {
        let mut r = Reader(bytes);
        let session = r.uuid()?;
        let table = TableId(r.uuid()?);
        let source = addr(&mut r)?;
        let ranges = ranges(&mut r)?;
        let pending = flag(&mut r)?;
        r.end()?;
        Ok(SyncRequest {
            session,
            table,
            source,
            ranges,
            pending,
        })
    }
}

impl PendingRequest {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::new();
        out.put_slice(self.session.as_bytes());
        out.put_u32(self.participants.len() as u32);
        for participant in &self.participants {
            put_addr(&mut out, *participant);
        }
        out.put_u32(self.tables.len() as u32);
        for table in &self.tables {
            out.put_slice(table.0.as_bytes());
        }
        put_ranges(&mut out, &self.ranges);
        match self.action {
            PendingAction::Prepare => out.put_u8(0),
            PendingAction::Promote(at) => {
                out.put_u8(1);
                out.put_u64(at);
            }
            PendingAction::Release => out.put_u8(2),
        }
        out.freeze()
    }

    pub fn decode(bytes: &[u8]) -> Result<PendingRequest, DecodeError> {
        let mut r = Reader(bytes);
        let session = r.uuid()?;
        let count = r.u32()? as usize;
        if count.saturating_mul(7) > r.0.len() {
            return Err(DecodeError(format!(
                "{count} participants in {} bytes",
                r.0.len()
            )));
        }
        let participants = (0..count).map(|_| addr(&mut r)).collect::<Result<_, _>>()?;
        let count = r.u32()? as usize;
        if count.saturating_mul(16) > r.0.len() {
            return Err(DecodeError(format!(
                "{count} tables in {} bytes",
                r.0.len()
            )));
        }
        let tables = (0..count)
            .map(|_| r.uuid().map(TableId))
            .collect::<Result<_, _>>()?;
        let ranges = ranges(&mut r)?;
        let action = match r.u8()? {
            0 => PendingAction::Prepare,
            1 => PendingAction::Promote(r.u64()?),
            2 => PendingAction::Release,
            other => return Err(DecodeError(format!("unknown pending action {other}"))),
        };
        r.end()?;
        Ok(PendingRequest {
            session,
            participants,
            tables,
            ranges,
            action,
        })
    }
}

fn put_addr(out: &mut BytesMut, addr: SocketAddr) {
    match addr.ip() {
        IpAddr::V4(ip) => {
            out.put_u8(4);
            out.put_slice(&ip.octets());
        }
        IpAddr::V6(ip) => {
            out.put_u8(6);
            out.put_slice(&ip.octets());
        }
    }
    out.put_u16(addr.port());
}

fn addr(r: &mut Reader) -> Result<SocketAddr, DecodeError> {
    let ip = match r.u8()? {
        4 => IpAddr::V4(Ipv4Addr::from(r.array::<4>()?)),
        6 => IpAddr::V6(Ipv6Addr::from(r.array::<16>()?)),
        other => return Err(DecodeError(format!("unknown address family {other}"))),
    };
    Ok(SocketAddr::new(ip, r.u16()?))
}

fn put_ranges(out: &mut BytesMut, ranges: &[TokenRange]) {
    out.put_u32(ranges.len() as u32);
    for range in ranges {
        put_range(out, *range);
    }
}

fn ranges(r: &mut Reader) -> Result<Vec<TokenRange>, DecodeError> {
    let count = r.u32()? as usize;
    if count.saturating_mul(16) > r.0.len() {
        return Err(DecodeError(format!(
            "{count} ranges in {} bytes",
            r.0.len()
        )));
    }
    Ok((0..count).map(|_| r.range()).collect::<Result<_, _>>()?)
}

fn flag(r: &mut Reader) -> Result<bool, DecodeError> {
    match r.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(DecodeError(format!("invalid flag {other}"))),
    }
}

fn put_scope(out: &mut BytesMut, scope: RepairScope) {
    match scope {
        RepairScope::All => out.put_u8(0),
        RepairScope::Unrepaired => out.put_u8(1),
        RepairScope::Repaired => out.put_u8(2),
        RepairScope::Pending(session) => {
            out.put_u8(3);
            out.put_slice(session.as_bytes());
        }
    }
}

fn scope(r: &mut Reader) -> Result<RepairScope, DecodeError> {
    Ok(match r.u8()? {
        0 => RepairScope::All,
        1 => RepairScope::Unrepaired,
        2 => RepairScope::Repaired,
        3 => RepairScope::Pending(r.uuid()?),
        other => return Err(DecodeError(format!("unknown validation scope {other}"))),
    })
}

impl Synced {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(16);
        out.put_u64(self.files);
        out.put_u64(self.bytes);
        out.freeze()
    }

    pub fn decode(bytes: &[u8]) -> Result<Synced, DecodeError> {
        let mut r = Reader(bytes);
        let synced = Synced {
            files: r.u64()?,
            bytes: r.u64()?,
        };
        r.end()?;
        Ok(synced)
    }
}

fn put_range(out: &mut BytesMut, (left, right): TokenRange) {
    out.put_i64(left);
    out.put_i64(right);
}

/// A tree depth no deeper than [`MAX_DEPTH`].
fn depth(reader: &mut Reader) -> Result<u8, DecodeError> {
    match reader.u8()? {
        depth if depth <= MAX_DEPTH => Ok(depth),
        depth => Err(DecodeError(format!("tree depth {depth} over {MAX_DEPTH}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_truncations_are_refused() {
        let validation = ValidationRequest {
            session: Uuid::from_u128(1),
            table: TableId(Uuid::from_u128(2)),
            range: (i64::MAX - 5, i64::MIN + 3),
            depth: 4,
            now: 1_700_000_000,
            scope: RepairScope::Pending(Uuid::from_u128(5)),
        };
        let sync = SyncRequest {
            session: Uuid::from_u128(1),
            table: TableId(Uuid::from_u128(2)),
            source: "127.0.0.3:7000".parse().unwrap(),
            ranges: vec![(1, 5), (9, i64::MIN)],
            pending: true,
        };
        let pending = PendingRequest {
            session: Uuid::from_u128(3),
            participants: vec![
                "127.0.0.3:7000".parse().unwrap(),
                "[::1]:7001".parse().unwrap(),
            ],
            tables: vec![TableId(Uuid::from_u128(2)), TableId(Uuid::from_u128(4))],
            ranges: vec![(1, 5)],
            action: PendingAction::Promote(1_700_000_000_000),
        };

        let mut tree = MerkleTree::new((0, 100), 3);
        tree.add(42, &[9; 32]);
        let synced = Synced { files: 2, bytes: 3 };
        assert_eq!(
            ValidationRequest::decode(&validation.encode()),
            Ok(validation.clone())
        );
        assert_eq!(SyncRequest::decode(&sync.encode()), Ok(sync.clone()));
        assert_eq!(decode_tree(&encode_tree(&tree)), Ok(tree.clone()));
        assert_eq!(Synced::decode(&synced.encode()), Ok(synced));
        let cuts = |bytes: Bytes| (0..bytes.len()).map(move |cut| bytes.slice(..cut));
        assert_eq!(
            PendingRequest::decode(&pending.encode()),
            Ok(pending.clone())
        );
        assert!(cuts(pending.encode()).all(|b| PendingRequest::decode(&b).is_err()));
        assert!(cuts(validation.encode()).all(|b| ValidationRequest::decode(&b).is_err()));
        assert!(cuts(sync.encode()).all(|b| SyncRequest::decode(&b).is_err()));
        assert!(cuts(encode_tree(&tree)).all(|b| decode_tree(&b).is_err()));
        let mut deep = encode_tree(&tree).to_vec();
        deep[16] = MAX_DEPTH + 1;
        assert!(decode_tree(&deep).is_err());
    }
}
