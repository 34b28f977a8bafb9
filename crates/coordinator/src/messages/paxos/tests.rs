//! Each Paxos payload decodes to what was encoded; truncated or padded ones are refused.
use bytes::Bytes;
use mutation::{
    Cell, ColumnData, Mutation, PartitionKey, PartitionUpdate, ReadFilter, Row, TableId,
};
use mutation::{PartitionData, SourceRows};
use paxos::{Ballot, Permitted, Prepare, PrepareAnswer, Proposal, ProposeAnswer};
use uuid::Uuid;

use super::*;

const TABLE: TableId = TableId(Uuid::from_u128(0x77));

fn key() -> PartitionKey {
    PartitionKey {
        token: -42,
        key: Bytes::from_static(b"pk"),
    }
}

fn ballot(micros: u64) -> Ballot {
    Ballot {
        micros,
        counter: 0x1234,
        node: 0xabcd_ef01_2345,
    }
}

fn update(value: &'static [u8]) -> Mutation {
    let mut row = Row::new(Bytes::from_static(b"c"));
    row.columns = vec![ColumnData::simple(
        "v",
        Cell::live(9, Bytes::from_static(value)),
    )];
    Mutation {
        table: TABLE,
        key: key(),
        update: PartitionUpdate {
            rows: vec![row],
            ..PartitionUpdate::default()
        },
    }
}

fn prepare() -> PaxosRequest<Prepare<Lwt>> {
    PaxosRequest {
        epoch: 7,
        session: Some(Uuid::from_u128(5)),
        body: Prepare {
            key: LwtKey {
                table: TABLE,
                key: key(),
            },
            ballot: ballot(1_000),
            is_write: true,
            read: Some(LwtQuery {
                key: key(),
                filter: ReadFilter::row(Bytes::from_static(b"c")),
                now: 0,
            }),
            commit: Some(Proposal::new(ballot(900), update(b"old"))),
        },
    }
}

#[test]
fn a_prepare_round_trips_with_its_read_and_commit() {
    let request = prepare();
    let decoded = PaxosRequest::decode_prepare(&request.encode_prepare()).unwrap();
    assert_eq!((decoded.epoch, decoded.session), (7, request.session));
    let (sent, got) = (&request.body, &decoded.body);
    assert_eq!(
        (&got.key, got.ballot, got.is_write),
        (&sent.key, sent.ballot, true)
    );
    assert_eq!(
        got.read.as_ref().map(|q| &q.filter),
        sent.read.as_ref().map(|q| &q.filter)
    );
    assert_eq!(got.read.as_ref().map(|q| &q.key), Some(&key()));
    assert_eq!(got.commit, sent.commit);
    // Without a read nor a commit.
    let mut bare = prepare();
    bare.body.read = None;
    bare.body.commit = None;
    bare.session = None;
    let decoded = PaxosRequest::decode_prepare(&bare.encode_prepare()).unwrap();
    assert!(decoded.body.read.is_none() && decoded.body.commit.is_none());
}

#[test]
fn prepare_answers_round_trip() {
    let mut data = PartitionData::default();
    data.apply(update(b"now").update);
    let read = SourceRows {
        data,
        stopped_at: Some(Bytes::from_static(b"c")),
    };
    let answers = [
        PrepareAnswer::Rejected { by: ballot(5) },
        PrepareAnswer::Permitted(Permitted {
            promised: true,
            superseded_by: None,
            accepted: Some(Proposal::new(ballot(3), update(b"acc"))),
            committed: Some(Proposal::new(ballot(2), update(b"com"))),
            read: Some(Some(read)),
            stable: false,
        }),
        PrepareAnswer::Permitted(Permitted {
            promised: false,
            superseded_by: Some(ballot(8)),
            accepted: None,
            committed: None,
            read: Some(None),
            stable: true,
        }),
        PrepareAnswer::Permitted(Permitted {
            promised: true,
            superseded_by: None,
            accepted: None,
            committed: None,
            read: None,
            stable: true,
        }),
    ];
    for answer in answers {
        assert_eq!(
            decode_prepare_answer(&encode_prepare_answer(&answer)).unwrap(),
            answer
        );
    }
}

#[test]
fn proposals_and_their_answers_round_trip() {
    let request = PaxosRequest {
        epoch: 3,
        session: None,
        body: Proposal::new(ballot(77), update(b"x")),
    };
    let decoded = PaxosRequest::decode_proposal(&request.encode_proposal()).unwrap();
    assert_eq!(decoded.body, request.body);
    for answer in [
        ProposeAnswer::Accepted,
        ProposeAnswer::Rejected { by: ballot(1) },
    ] {
        assert_eq!(
            decode_propose_answer(&encode_propose_answer(&answer)).unwrap(),
            answer
        );
    }
}

#[test]
fn truncated_padded_and_unknown_payloads_are_refused() {
    let payload = prepare().encode_prepare();
    for len in 0..payload.len() {
        assert!(
            PaxosRequest::decode_prepare(&payload[..len]).is_err(),
            "cut at {len}"
        );
    }
    let mut padded = payload.to_vec();
    padded.push(0);
    assert!(PaxosRequest::decode_prepare(&padded).is_err());
    let answer = encode_prepare_answer(&PrepareAnswer::Rejected { by: ballot(5) });
    for len in 0..answer.len() {
        assert!(
            decode_prepare_answer(&answer[..len]).is_err(),
            "cut at {len}"
        );
    }
    assert!(decode_prepare_answer(&[9]).is_err());
    assert!(decode_propose_answer(&[2]).is_err());
    assert!(decode_propose_answer(&[1, 0]).is_err());
}

#[test]
fn cleanup_requests_and_answers_round_trip_and_truncated_ones_are_refused() {
    for keys in [None, Some(vec![key(), key()])] {
        let request = PaxosRequest {
            epoch: 4,
            session: None,
            body: CleanupRequest {
                table: TABLE,
                ranges: vec![(i64::MIN, -5), (10, 20)],
                repaired: ballot(60),
                keys,
            },
        };
        let payload = request.encode_cleanup();
        let decoded = PaxosRequest::decode_cleanup(&payload).unwrap();
        assert_eq!((decoded.epoch, &decoded.body), (4, &request.body));
        for len in 0..payload.len() {
            assert!(
                PaxosRequest::decode_cleanup(&payload[..len]).is_err(),
                "cut at {len}"
            );
        }
    }
    let answer = vec![(key(), true), (key(), false)];
    let encoded = encode_cleanup_answer(&answer);
    assert_eq!(decode_cleanup_answer(&encoded).unwrap(), answer);
    assert!(decode_cleanup_answer(&encoded[..encoded.len() - 1]).is_err());
}
