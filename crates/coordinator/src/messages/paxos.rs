//! Payloads of the Paxos verbs (Cassandra's `PAXOS2_PREPARE`, `PAXOS2_PROPOSE`,
//! `PAXOS_COMMIT`), after the storage verbs' header (version, epoch, tracing session). A
//! proposal's partition is its mutation's.
use bytes::{BufMut, Bytes};
use mutation::codec::{put_mutation, DecodeError, Reader};
use mutation::wire::{key, option, put_key, put_option, put_read_filter, read_filter};
use mutation::wire::{put_source_rows, source_rows};
use mutation::SourceRows;
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

#[cfg(test)]
mod tests;
