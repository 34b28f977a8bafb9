//! Payloads of the Paxos verbs (Cassandra's `PAXOS2_PREPARE`, `PAXOS2_PROPOSE`,
//! `PAXOS_COMMIT`), after the storage verbs' header (version, epoch, tracing session). A
//! proposal's partition is its mutation's.
use bytes::{BufMut, Bytes};
use mutation::codec::{put_len, put_mutation, DecodeError, Reader};
use mutation::wire::{counted, key, option, put_key, put_option, put_read_filter, read_filter};
use mutation::wire::{put_source_rows, source_rows};
use mutation::{PartitionKey, SourceRows, TableId, TokenRange};
use paxos::{Ballot, Permitted, Prepare, PrepareAnswer, Proposal, ProposeAnswer};
use uuid::Uuid;

use super::{end, header, read_header};
use crate::paxos::{Lwt, LwtKey, LwtQuery};

/// A Paxos request with the header every storage verb carries.
#[derive(Clone, Debug)]
pub(crate) struct PaxosRequest<B> {
    pub epoch: u64,
    pub session: Option<Uuid>,
    pub body: B,
}

fn put_ballot(out: &mut Vec<u8>, ballot: &Ballot) {
    out.put_u64(ballot.micros);
    out.put_u16(ballot.counter);
    out.put_u64(ballot.node);
}

fn ballot(r: &mut Reader<'_>) -> Result<Ballot, DecodeError> {
    let micros = r.i64()? as u64;
    let counter = u16::from_be_bytes([r.u8()?, r.u8()?]);
    let node = r.i64()? as u64;
    Ok(Ballot {
        micros,
        counter,
        node,
    })
}

fn put_proposal(out: &mut Vec<u8>, proposal: &Proposal<mutation::Mutation>) {
    put_ballot(out, &proposal.ballot);
    put_mutation(out, &proposal.update);
}

fn proposal(r: &mut Reader<'_>) -> Result<Proposal<mutation::Mutation>, DecodeError> {
    Ok(Proposal::new(ballot(r)?, r.mutation()?))
}

fn decode<T>(
    payload: &[u8],
    body: impl FnOnce(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let mut r = Reader { bytes: payload };
    let value = body(&mut r)?;
    end(&r)?;
    Ok(value)
}

impl<B> PaxosRequest<B> {
    fn encode(&self, body: impl FnOnce(&mut Vec<u8>, &B)) -> Bytes {
        let mut out = header(self.epoch, self.session);
        body(&mut out, &self.body);
        out.into()
    }

    fn decode(
        payload: &[u8],
        body: impl FnOnce(&mut Reader<'_>) -> Result<B, DecodeError>,
    ) -> Result<Self, DecodeError> {
        decode(payload, |r| {
            let (epoch, session) = read_header(r)?;
            Ok(PaxosRequest {
                epoch,
                session,
                body: body(r)?,
            })
        })
    }
}

impl PaxosRequest<Prepare<Lwt>> {
    pub fn encode_prepare(&self) -> Bytes {
        self.encode(|out, p| {
            out.put_slice(p.key.table.0.as_bytes());
            put_key(out, &p.key.key);
            put_ballot(out, &p.ballot);
            out.put_u8(u8::from(p.is_write));
            put_option(out, p.read.as_ref(), |out, q| {
                put_read_filter(out, &q.filter)
            });
            put_option(out, p.commit.as_ref(), put_proposal);
        })
    }

    pub fn decode_prepare(payload: &[u8]) -> Result<Self, DecodeError> {
        Self::decode(payload, |r| {
            let key = LwtKey {
                table: r.table_id()?,
                key: key(r)?,
            };
            let ballot = ballot(r)?;
            let is_write = r.flag()?;
            let filter = option(r, |r| read_filter(r))?;
            let read = filter.map(|filter| LwtQuery {
                key: key.key.clone(),
                filter,
                now: 0,
            });
            Ok(Prepare {
                key,
                ballot,
                is_write,
                read,
                commit: option(r, proposal)?,
            })
        })
    }
}

impl PaxosRequest<Proposal<mutation::Mutation>> {
    /// A proposal (`Verb::PaxosPropose`) or a commit (`Verb::PaxosCommit`).
    pub fn encode_proposal(&self) -> Bytes {
        self.encode(put_proposal)
    }

    pub fn decode_proposal(payload: &[u8]) -> Result<Self, DecodeError> {
        Self::decode(payload, proposal)
    }
}

/// A replica's read: absent (not asked), or its data (`None`: it holds nothing).
fn put_read(out: &mut Vec<u8>, read: &Option<Option<SourceRows>>) {
    match read {
        None => out.put_u8(0),
        Some(None) => out.put_u8(1),
        Some(Some(rows)) => {
            out.put_u8(2);
            put_source_rows(out, rows);
        }
    }
}

fn read(r: &mut Reader<'_>) -> Result<Option<Option<SourceRows>>, DecodeError> {
    match r.u8()? {
        0 => Ok(None),
        1 => Ok(Some(None)),
        2 => Ok(Some(Some(source_rows(r)?))),
        _ => Err(DecodeError("unknown Paxos read kind")),
    }
}

pub(crate) fn encode_prepare_answer(answer: &PrepareAnswer<Lwt>) -> Bytes {
    let mut out = Vec::new();
    match answer {
        PrepareAnswer::Rejected { by } => {
            out.put_u8(0);
            put_ballot(&mut out, by);
        }
        PrepareAnswer::Permitted(p) => {
            out.put_u8(1);
            out.put_u8(u8::from(p.promised));
            put_option(&mut out, p.superseded_by.as_ref(), put_ballot);
            put_option(&mut out, p.accepted.as_ref(), put_proposal);
            put_option(&mut out, p.committed.as_ref(), put_proposal);
            put_read(&mut out, &p.read);
            out.put_u8(u8::from(p.stable));
        }
    }
    out.into()
}

pub(crate) fn decode_prepare_answer(payload: &[u8]) -> Result<PrepareAnswer<Lwt>, DecodeError> {
    decode(payload, |r| match r.u8()? {
        0 => Ok(PrepareAnswer::Rejected { by: ballot(r)? }),
        1 => Ok(PrepareAnswer::Permitted(Permitted {
            promised: r.flag()?,
            superseded_by: option(r, ballot)?,
            accepted: option(r, proposal)?,
            committed: option(r, proposal)?,
            read: read(r)?,
            stable: r.flag()?,
        })),
        _ => Err(DecodeError("unknown Paxos prepare answer")),
    })
}

pub(crate) fn encode_propose_answer(answer: &ProposeAnswer) -> Bytes {
    let mut out = Vec::new();
    match answer {
        ProposeAnswer::Accepted => out.put_u8(1),
        ProposeAnswer::Rejected { by } => {
            out.put_u8(0);
            put_ballot(&mut out, by);
        }
    }
    out.into()
}

pub(crate) fn decode_propose_answer(payload: &[u8]) -> Result<ProposeAnswer, DecodeError> {
    decode(payload, |r| match r.u8()? {
        1 => Ok(ProposeAnswer::Accepted),
        0 => Ok(ProposeAnswer::Rejected { by: ballot(r)? }),
        _ => Err(DecodeError("unknown Paxos propose answer")),
    })
}

/// A purge of Paxos state after a repair (`Verb::PaxosCleanup`). Without `keys`: raise the
/// low bound to `repaired` and say which partitions of `table` in `ranges` could be purged;
/// with them: purge those.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CleanupRequest {
    pub table: TableId,
    pub ranges: Vec<TokenRange>,
    pub repaired: Ballot,
    pub keys: Option<Vec<PartitionKey>>,
}

fn put_keys(out: &mut Vec<u8>, keys: &[PartitionKey]) {
    put_len(out, keys.len());
    keys.iter().for_each(|k| put_key(out, k));
}

impl PaxosRequest<CleanupRequest> {
    pub fn encode_cleanup(&self) -> Bytes {
        self.encode(|out, c| {
            out.put_slice(c.table.0.as_bytes());
            put_len(out, c.ranges.len());
            for (left, right) in &c.ranges {
                out.put_i64(*left);
                out.put_i64(*right);
            }
            put_ballot(out, &c.repaired);
            put_option(out, c.keys.as_deref(), put_keys);
        })
    }

    pub fn decode_cleanup(payload: &[u8]) -> Result<Self, DecodeError> {
        Self::decode(payload, |r| {
            Ok(CleanupRequest {
                table: r.table_id()?,
                ranges: counted(r, |r| Ok((r.i64()?, r.i64()?)))?,
                repaired: ballot(r)?,
                keys: option(r, |r| counted(r, key))?,
            })
        })
    }
}

/// A replica's answer to a [`CleanupRequest`]: each partition and whether it could be (or
/// was) purged.
pub(crate) fn encode_cleanup_answer(answer: &[(PartitionKey, bool)]) -> Bytes {
    let mut out = Vec::new();
    put_len(&mut out, answer.len());
    for (k, purgeable) in answer {
        put_key(&mut out, k);
        out.put_u8(u8::from(*purgeable));
    }
    out.into()
}

pub(crate) fn decode_cleanup_answer(
    payload: &[u8],
) -> Result<Vec<(PartitionKey, bool)>, DecodeError> {
    decode(payload, |r| counted(r, |r| Ok((key(r)?, r.flag()?))))
}

#[cfg(test)]
mod tests;
