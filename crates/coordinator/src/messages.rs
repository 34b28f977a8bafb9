//! Payloads of the storage verbs, on `mutation::codec`: a version byte, the sender's metadata
//! epoch (a replica that has not applied it yet waits for it before failing on an unknown
//! table), then the verb's body. Decoding checks every length and never panics.
use bytes::{BufMut, Bytes};
use mutation::codec::{put_bytes, put_len, put_mutation, DecodeError, Reader};
use mutation::{Mutation, PartitionKey, TableId};
use storage::wire::{
    key_range, put_key_range, put_read_filter, put_scan_source, put_source_rows, read_filter,
    scan_source, source_rows,
};
use storage::{KeyRange, ReadFilter, ScanSource, SourceRows};

/// The encoding version of every storage verb's payload.
const VERSION: u8 = 1;

/// `Verb::Mutation`: mutations a replica applies as one commit-log record.
#[derive(Clone, Debug, PartialEq)]
pub struct MutationRequest {
    pub epoch: u64,
    pub mutations: Vec<Mutation>,
}

impl MutationRequest {
    /// Encodes `mutations` (any iterator over them: a replica gets the ones it owns).
    pub fn encode<'a>(epoch: u64, mutations: impl ExactSizeIterator<Item = &'a Mutation>) -> Bytes {
        let mut out = header(epoch);
        put_len(&mut out, mutations.len());
        for m in mutations {
            put_mutation(&mut out, m);
        }
        out.into()
    }

    pub fn decode(payload: &[u8]) -> Result<MutationRequest, DecodeError> {
        let mut reader = Reader { bytes: payload };
        let epoch = read_header(&mut reader)?;
        let count = reader.len()?;
        let mutations = (0..count)
            .map(|_| reader.mutation())
            .collect::<Result<Vec<_>, _>>()?;
        end(&reader)?;
        Ok(MutationRequest { epoch, mutations })
    }
}

/// `Verb::Read`: one round of a single-partition read, answered with the replica's
/// unresolved data (or only its digest).
#[derive(Clone, Debug, PartialEq)]
pub struct ReadRequest {
    pub epoch: u64,
    pub table: TableId,
    pub key: PartitionKey,
    pub filter: ReadFilter,
    pub cap: usize,
    pub digest: bool,
}

impl ReadRequest {
    pub fn encode(&self) -> Bytes {
        let mut out = header(self.epoch);
        out.put_slice(self.table.0.as_bytes());
        out.put_i64(self.key.token);
        put_bytes(&mut out, &self.key.key);
        put_read_filter(&mut out, &self.filter);
        out.put_u64(u64::try_from(self.cap).unwrap_or(u64::MAX));
        out.put_u8(u8::from(self.digest));
        out.into()
    }

    pub fn decode(payload: &[u8]) -> Result<ReadRequest, DecodeError> {
        let mut r = Reader { bytes: payload };
        let request = ReadRequest {
            epoch: read_header(&mut r)?,
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
    pub table: TableId,
    pub range: KeyRange,
    pub filter: ReadFilter,
    pub partition_limit: usize,
}

impl RangeRequest {
    pub fn encode(&self) -> Bytes {
        let mut out = header(self.epoch);
        out.put_slice(self.table.0.as_bytes());
        put_key_range(&mut out, &self.range);
        put_read_filter(&mut out, &self.filter);
        out.put_u64(u64::try_from(self.partition_limit).unwrap_or(u64::MAX));
        out.into()
    }

    pub fn decode(payload: &[u8]) -> Result<RangeRequest, DecodeError> {
        let mut r = Reader { bytes: payload };
        let request = RangeRequest {
            epoch: read_header(&mut r)?,
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
    storage::wire::decode_all(payload, scan_source)
}

/// The version byte and the epoch.
pub(crate) fn header(epoch: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.push(VERSION);
    out.extend_from_slice(&epoch.to_be_bytes());
    out
}

/// Checks the version and reads the epoch.
pub(crate) fn read_header(reader: &mut Reader) -> Result<u64, DecodeError> {
    if reader.u8()? != VERSION {
        return Err(DecodeError("unknown storage message version"));
    }
    Ok(reader.i64()? as u64)
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
        let bytes = MutationRequest::encode(17, mutations.iter());
        let decoded = MutationRequest::decode(&bytes).unwrap();
        assert_eq!(decoded.epoch, 17);
        assert_eq!(decoded.mutations, mutations.to_vec());
    }

    #[test]
    fn read_requests_and_replies_round_trip() {
        let request = ReadRequest {
            epoch: 5,
            table: TableId(uuid::Uuid::from_u128(3)),
            key: mutation("k").key,
            filter: ReadFilter::all(),
            cap: usize::MAX,
            digest: true,
        };
        let bytes = request.encode();
        assert_eq!(ReadRequest::decode(&bytes).unwrap(), request);
        for cut in 0..bytes.len() {
            assert!(ReadRequest::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut data = storage::PartitionData::default();
        data.apply(&mutation("k").update);
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
            table: TableId(uuid::Uuid::from_u128(4)),
            range: KeyRange {
                start: std::ops::Bound::Excluded(storage::PartitionPosition::Key(
                    mutation("a").key,
                )),
                end: std::ops::Bound::Included(storage::PartitionPosition::Token(99)),
            },
            filter: ReadFilter::all(),
            partition_limit: 128,
        };
        let bytes = request.encode();
        assert_eq!(RangeRequest::decode(&bytes).unwrap(), request);
        for cut in 0..bytes.len() {
            assert!(RangeRequest::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut data = storage::PartitionData::default();
        data.apply(&mutation("k").update);
        let scan = ScanSource {
            partitions: vec![(mutation("k").key, data)],
            stopped_at: Some(mutation("k").key),
        };
        assert_eq!(decode_scan(&encode_scan(&scan)).unwrap(), scan);
    }

    #[test]
    fn damaged_mutation_requests_are_refused_not_panicked_on() {
        let bytes = MutationRequest::encode(3, [mutation("a")].iter());
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
