//! A batch as the batchlog keeps it, and the payloads of `Verb::BatchStore` and
//! `Verb::BatchRemove` (on the storage verbs' header: version byte and metadata epoch). The
//! mutations travel and are stored encoded, one blob each (`system.batches.mutations`), and
//! are decoded only when a batch is replayed. Decoding checks every length and never panics.
use bytes::{BufMut, Bytes};
use mutation::codec::{put_bytes, put_len, put_mutation, DecodeError, Reader};
use mutation::Mutation;
use uuid::Uuid;

use super::{end, header, read_header};

/// The encoding of the mutation blobs (`system.batches.version`): `mutation::codec`'s.
pub(crate) const MUTATIONS_VERSION: i32 = 1;

/// A logged batch in the batchlog.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Batch {
    /// A time-based UUID: when the coordinator wrote it.
    pub id: Uuid,
    pub version: i32,
    pub mutations: Vec<Bytes>,
}

impl Batch {
    /// A new batch of `mutations`, identified by `id`.
    pub fn new<'a>(id: Uuid, mutations: impl Iterator<Item = &'a Mutation>) -> Batch {
        let mutations = mutations
            .map(|m| {
                let mut out = Vec::with_capacity(128);
                put_mutation(&mut out, m);
                Bytes::from(out)
            })
            .collect();
        Batch {
            id,
            version: MUTATIONS_VERSION,
            mutations,
        }
    }

    /// When the batch was written, in microseconds since the epoch (from its id).
    pub fn written_at(&self) -> i64 {
        written_at(&self.id)
    }

    /// The bytes of its mutations (what the replay throttle counts).
    pub fn size(&self) -> usize {
        self.mutations.iter().map(Bytes::len).sum()
    }

    /// Its mutations, decoded.
    pub fn decode_mutations(&self) -> Result<Vec<Mutation>, DecodeError> {
        if self.version != MUTATIONS_VERSION {
            return Err(DecodeError("unknown batchlog mutation version"));
        }
        self.mutations
            .iter()
            .map(|blob| {
                let mut reader = Reader { bytes: blob };
                let mutation = reader.mutation()?;
                end(&reader)?;
                Ok(mutation)
            })
            .collect()
    }
}

/// The microseconds since the epoch a time-based UUID holds (0 for any other UUID).
pub(crate) fn written_at(id: &Uuid) -> i64 {
    id.get_timestamp().map_or(0, |ts| {
        let (secs, nanos) = ts.to_unix();
        secs as i64 * 1_000_000 + i64::from(nanos / 1_000)
    })
}

/// `Verb::BatchStore`: store a batch in `system.batches`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StoreRequest {
    pub epoch: u64,
    pub batch: Batch,
}

impl StoreRequest {
    pub fn encode(epoch: u64, batch: &Batch) -> Bytes {
        let mut out = header(epoch, None);
        out.put_slice(batch.id.as_bytes());
        out.put_i32(batch.version);
        put_len(&mut out, batch.mutations.len());
        for blob in &batch.mutations {
            put_bytes(&mut out, blob);
        }
        out.into()
    }

    pub fn decode(payload: &[u8]) -> Result<StoreRequest, DecodeError> {
        let mut r = Reader { bytes: payload };
        let (epoch, _) = read_header(&mut r)?;
        let id = uuid(&mut r)?;
        let version = r.i32()?;
        let count = r.len()?;
        let mutations = (0..count)
            .map(|_| r.bytes())
            .collect::<Result<Vec<_>, _>>()?;
        end(&r)?;
        let batch = Batch {
            id,
            version,
            mutations,
        };
        Ok(StoreRequest { epoch, batch })
    }
}

/// `Verb::BatchRemove`: delete a batch from `system.batches`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RemoveRequest {
    pub epoch: u64,
    pub id: Uuid,
}

impl RemoveRequest {
    pub fn encode(&self) -> Bytes {
        let mut out = header(self.epoch, None);
        out.put_slice(self.id.as_bytes());
        out.into()
    }

    pub fn decode(payload: &[u8]) -> Result<RemoveRequest, DecodeError> {
        let mut r = Reader { bytes: payload };
        let (epoch, _) = read_header(&mut r)?;
        let id = uuid(&mut r)?;
        end(&r)?;
        Ok(RemoveRequest { epoch, id })
    }
}

fn uuid(r: &mut Reader) -> Result<Uuid, DecodeError> {
    Ok(r.table_id()?.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::batchlog::tests::insert as mutation;

    fn batch() -> Batch {
        let id = Uuid::now_v1(&[1, 2, 3, 4, 5, 6]);
        Batch::new(id, [mutation("a"), mutation("b")].iter())
    }

    #[test]
    fn batches_keep_their_mutations_and_time() {
        let batch = batch();
        assert_eq!(
            batch.decode_mutations().unwrap(),
            vec![mutation("a"), mutation("b")]
        );
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros() as i64;
        assert!((now - batch.written_at()).abs() < 5_000_000);
        assert_eq!(written_at(&Uuid::from_u128(5)), 0);
        let other = Batch {
            version: 99,
            ..batch.clone()
        };
        assert!(other.decode_mutations().is_err());
        let damaged = Batch {
            mutations: vec![batch.mutations[0].slice(..5)],
            ..batch
        };
        assert!(damaged.decode_mutations().is_err());
    }

    #[test]
    fn store_and_remove_requests_round_trip() {
        let batch = batch();
        let bytes = StoreRequest::encode(12, &batch);
        let decoded = StoreRequest::decode(&bytes).unwrap();
        assert_eq!((decoded.epoch, decoded.batch), (12, batch.clone()));
        let remove = RemoveRequest {
            epoch: 3,
            id: batch.id,
        };
        assert_eq!(RemoveRequest::decode(&remove.encode()).unwrap(), remove);
    }

    #[test]
    fn damaged_requests_are_refused_not_panicked_on() {
        let store = StoreRequest::encode(12, &batch());
        let remove = RemoveRequest {
            epoch: 3,
            id: batch().id,
        }
        .encode();
        for cut in 0..store.len() {
            assert!(StoreRequest::decode(&store[..cut]).is_err(), "cut at {cut}");
        }
        for cut in 0..remove.len() {
            assert!(
                RemoveRequest::decode(&remove[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        let mut longer = store.to_vec();
        longer.push(0);
        assert!(StoreRequest::decode(&longer).is_err());
        let mut other_version = remove.to_vec();
        other_version[0] = 9;
        assert!(RemoveRequest::decode(&other_version).is_err());
    }
}
