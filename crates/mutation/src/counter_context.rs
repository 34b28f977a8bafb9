//! Counter contexts: what a counter cell holds, as Cassandra's `CounterContext` with global
//! shards only. A context is a list of shards — counter id (the host id of the replica that
//! led the increments), logical clock, count — sorted by id, each id once. The counter's value
//! is the sum of the counts. Two versions of a context merge shard by shard: for the same id
//! the higher clock wins (equal clocks: the higher count, so merging never depends on order),
//! so merging is commutative, associative and idempotent and replicas converge whatever order
//! they receive updates in.
//!
//! Binary form: the shards one after the other, 32 bytes each (id, clock and count big-endian).
//!
//! Counter cells written before contexts existed hold an 8-byte big-endian total and are not
//! flagged as counter cells. Such a total reads as one shard of [`LEGACY_ID`] whose clock is the
//! cell's timestamp: the newest total wins, as it did, and shards written since add to it.
use bytes::{BufMut, Bytes};

use crate::codec::DecodeError;
use crate::model::Cell;

/// Bytes of one shard: id (16), clock (8), count (8).
pub const SHARD_LEN: usize = 32;

/// The counter id of totals written before counters had shards (see the module docs).
pub const LEGACY_ID: [u8; 16] = [0; 16];

/// One replica's part of a counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    pub id: [u8; 16],
    pub clock: i64,
    pub count: i64,
}

impl Shard {
    /// Whether this version of a shard wins over `other` (same id).
    fn wins_over(&self, other: &Shard) -> bool {
        (self.clock, self.count) >= (other.clock, other.count)
    }
}

/// The shards of a counter, sorted by id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CounterContext {
    shards: Vec<Shard>,
}

impl CounterContext {
    /// A context of one shard.
    pub fn single(shard: Shard) -> CounterContext {
        CounterContext {
            shards: vec![shard],
        }
    }

    /// The context a legacy 8-byte total written at `timestamp` stands for.
    pub fn legacy(total: i64, timestamp: i64) -> CounterContext {
        CounterContext::single(Shard {
            id: LEGACY_ID,
            clock: timestamp,
            count: total,
        })
    }

    /// The context of a live counter cell: its shards when flagged as a counter cell, a
    /// legacy total when it holds 8 unflagged bytes; `None` for tombstones and other values.
    pub fn of_cell(cell: &Cell) -> Option<Result<CounterContext, DecodeError>> {
        let value = cell.value.as_ref()?;
        if cell.counter {
            return Some(CounterContext::decode(value));
        }
        let total: [u8; 8] = value.as_ref().try_into().ok()?;
        Some(Ok(CounterContext::legacy(
            i64::from_be_bytes(total),
            cell.timestamp,
        )))
    }

    /// Decodes the binary form, checking its length and that ids are sorted and distinct.
    pub fn decode(bytes: &[u8]) -> Result<CounterContext, DecodeError> {
        if !bytes.len().is_multiple_of(SHARD_LEN) {
            return Err(DecodeError(
                "counter context length is not a multiple of 32",
            ));
        }
        let shards: Vec<Shard> = bytes.chunks_exact(SHARD_LEN).map(shard).collect();
        if shards.windows(2).any(|w| w[0].id >= w[1].id) {
            return Err(DecodeError("counter context shards out of order"));
        }
        Ok(CounterContext { shards })
    }

    pub fn encode(&self) -> Bytes {
        let mut out = Vec::with_capacity(self.shards.len() * SHARD_LEN);
        for s in &self.shards {
            out.put_slice(&s.id);
            out.put_i64(s.clock);
            out.put_i64(s.count);
        }
        out.into()
    }

    pub fn shards(&self) -> &[Shard] {
        &self.shards
    }

    /// The shard of counter id `id`, if the context has one.
    pub fn shard(&self, id: [u8; 16]) -> Option<Shard> {
        self.shards
            .binary_search_by(|s| s.id.cmp(&id))
            .ok()
            .map(|i| self.shards[i])
    }

    /// The counter's value: the sum of the counts (wrapping, as Cassandra's long arithmetic).
    pub fn total(&self) -> i64 {
        self.shards
            .iter()
            .fold(0i64, |sum, s| sum.wrapping_add(s.count))
    }

    /// Both contexts merged shard by shard (see the module docs).
    pub fn merge(&self, other: &CounterContext) -> CounterContext {
        let (left, right) = (&self.shards, &other.shards);
        let mut shards = Vec::with_capacity(left.len().max(right.len()));
        let (mut i, mut j) = (0, 0);
        while i < left.len() && j < right.len() {
            let (l, r) = (left[i], right[j]);
            match l.id.cmp(&r.id) {
                std::cmp::Ordering::Less => {
                    shards.push(l);
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    shards.push(r);
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    shards.push(if l.wins_over(&r) { l } else { r });
                    i += 1;
                    j += 1;
                }
            }
        }
        shards.extend_from_slice(&left[i..]);
        shards.extend_from_slice(&right[j..]);
        CounterContext { shards }
    }
}

fn shard(bytes: &[u8]) -> Shard {
    let mut id = [0u8; 16];
    id.copy_from_slice(&bytes[..16]);
    let word = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&bytes[at..at + 8]);
        i64::from_be_bytes(b)
    };
    Shard {
        id,
        clock: word(16),
        count: word(24),
    }
}

/// The context of a live counter cell, or why its value is none.
pub fn context_of(cell: &Cell) -> Result<CounterContext, String> {
    match CounterContext::of_cell(cell) {
        Some(Ok(context)) => Ok(context),
        Some(Err(e)) => Err(format!("counter cell: {}", e.0)),
        None => {
            let len = cell.value.as_ref().map_or(0, Bytes::len);
            Err(format!(
                "counter cell holds {len} bytes, neither a total nor a counter context"
            ))
        }
    }
}

/// Cassandra's `resolveCounter`, for two cells at least one of which is a live counter cell: a
/// tombstone wins over a live counter cell whatever their timestamps; two live cells merge
/// their contexts (a legacy total counting as one shard) at the greater timestamp. `None` when
/// a value is no counter at all (the cells then reconcile as regular cells).
pub fn reconcile(left: &Cell, right: &Cell) -> Option<Cell> {
    match (left.is_tombstone(), right.is_tombstone()) {
        (true, false) => return Some(left.clone()),
        (false, true) => return Some(right.clone()),
        (true, true) => return None,
        (false, false) => {}
    }
    let merged = context_of(left).ok()?.merge(&context_of(right).ok()?);
    Some(Cell::counter(left.timestamp.max(right.timestamp), &merged))
}

/// The cell a read returns: a counter cell's total as an 8-byte big-endian value (what the
/// client sees of a counter column); any other cell as it is.
pub fn readable(cell: &Cell) -> Cell {
    if !cell.is_counter() {
        return cell.clone();
    }
    match context_of(cell) {
        Ok(context) => Cell::live(
            cell.timestamp,
            Bytes::copy_from_slice(&context.total().to_be_bytes()),
        ),
        Err(e) => {
            tracing::error!("unreadable counter cell: {e}");
            cell.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn shard_of(id: u8, clock: i64, count: i64) -> Shard {
        Shard {
            id: [id; 16],
            clock,
            count,
        }
    }

    fn context(shards: Vec<(u8, i64, i64)>) -> CounterContext {
        shards
            .into_iter()
            .map(|(id, clock, count)| CounterContext::single(shard_of(id, clock, count)))
            .fold(CounterContext::default(), |a, b| a.merge(&b))
    }

    fn contexts() -> impl Strategy<Value = CounterContext> {
        proptest::collection::vec((0u8..5, 0i64..4, -3i64..4), 0..6).prop_map(context)
    }

    proptest! {
        #[test]
        fn merging_is_commutative_associative_and_idempotent(
            a in contexts(), b in contexts(), c in contexts()
        ) {
            prop_assert_eq!(a.merge(&b), b.merge(&a));
            prop_assert_eq!(a.merge(&b).merge(&c), a.merge(&b.merge(&c)));
            prop_assert_eq!(a.merge(&a), a.clone());
            prop_assert_eq!(a.merge(&b).merge(&b), a.merge(&b));
        }

        #[test]
        fn contexts_round_trip_through_their_binary_form(a in contexts()) {
            prop_assert_eq!(CounterContext::decode(&a.encode()), Ok(a.clone()));
        }
    }

    #[test]
    fn the_higher_clock_of_a_shard_wins_and_the_total_sums_the_shards() {
        let old = context(vec![(1, 3, 10), (2, 1, 5)]);
        let new = context(vec![(1, 4, 12)]);
        let merged = old.merge(&new);
        assert_eq!(merged.shard([1; 16]), Some(shard_of(1, 4, 12)));
        assert_eq!(merged.total(), 17);
        assert_eq!(merged.shard([3; 16]), None);
    }

    #[test]
    fn damaged_contexts_are_refused() {
        let bytes = context(vec![(1, 1, 1), (2, 1, 1)]).encode();
        assert!(CounterContext::decode(&bytes[..40]).is_err());
        let mut swapped = bytes[32..].to_vec();
        swapped.extend_from_slice(&bytes[..32]);
        assert!(CounterContext::decode(&swapped).is_err());
        let mut twice = bytes[..32].to_vec();
        twice.extend_from_slice(&bytes[..32]);
        assert!(CounterContext::decode(&twice).is_err());
    }

    #[test]
    fn legacy_totals_are_one_shard_clocked_by_their_timestamp() {
        let cell = Cell::live(77, Bytes::copy_from_slice(&(-12i64).to_be_bytes()));
        let ctx = CounterContext::of_cell(&cell)
            .expect("a total")
            .expect("valid");
        assert_eq!(ctx, CounterContext::legacy(-12, 77));
        assert_eq!(ctx.total(), -12);
        assert!(CounterContext::of_cell(&Cell::tombstone(1, 0)).is_none());
        assert!(CounterContext::of_cell(&Cell::live(1, Bytes::from_static(b"abc"))).is_none());
    }
}
