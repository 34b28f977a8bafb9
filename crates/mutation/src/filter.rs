//! Read selections: clustering slices within a partition and partition key ranges for scans.

use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;

use crate::{in_slice, PartitionKey};

/// A clustering slice: rows whose clustering lies between the bounds (byte order).
pub type Slice = (Bound<Bytes>, Bound<Bytes>);

/// What to return from each partition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadFilter {
    /// Sorted, non-overlapping slices; an empty vec selects no rows (only the static row).
    pub slices: Vec<Slice>,
    /// Return rows in descending clustering order.
    pub reversed: bool,
    /// At most this many live rows per partition.
    pub row_limit: Option<usize>,
    /// Scans: at most this many live rows in all, the last partition cut there.
    pub total_row_limit: Option<usize>,
    /// Whether to return the static row.
    pub include_static: bool,
    /// The regular columns the caller needs (sorted), `None` for all. Only a hint for point
    /// reads of named rows (each slice a single clustering, no static row): they stop
    /// consulting older SSTables once these columns and the row markers found are newer than
    /// anything older SSTables hold, so other columns may then come back incomplete.
    pub columns: Option<Arc<[Bytes]>>,
}

impl ReadFilter {
    /// Every row and the static row, in clustering order.
    pub fn all() -> Self {
        ReadFilter {
            slices: vec![(Bound::Unbounded, Bound::Unbounded)],
            reversed: false,
            row_limit: None,
            total_row_limit: None,
            include_static: true,
            columns: None,
        }
    }

    /// Only the row with exactly this clustering (plus the static row).
    pub fn row(clustering: Bytes) -> Self {
        ReadFilter {
            slices: vec![(
                Bound::Included(clustering.clone()),
                Bound::Included(clustering),
            )],
            ..ReadFilter::all()
        }
    }

    /// Whether a row with this clustering is selected.
    pub fn selects(&self, clustering: &[u8]) -> bool {
        self.slices
            .iter()
            .any(|(start, end)| in_slice(start, end, clustering))
    }

    /// The slices that can contain rows (empty or inverted ones removed).
    pub fn non_empty_slices(&self) -> impl DoubleEndedIterator<Item = &Slice> {
        self.slices
            .iter()
            .filter(|(start, end)| !slice_is_empty(start, end))
    }

    /// The slices in read order: ascending, or descending for a reversed read.
    pub fn slices_in_read_order(&self) -> Box<dyn Iterator<Item = &Slice> + '_> {
        if self.reversed {
            Box::new(self.non_empty_slices().rev())
        } else {
            Box::new(self.non_empty_slices())
        }
    }

    /// The same selection restricted to the rows after `clustering` in read order (the
    /// static row is kept as asked).
    pub fn after(&self, clustering: &Bytes) -> ReadFilter {
        let bound = Bound::Excluded(clustering.clone());
        let beyond = if self.reversed {
            (Bound::Unbounded, bound)
        } else {
            (bound, Bound::Unbounded)
        };
        self.intersected(&beyond)
    }

    /// The same selection restricted to the rows up to `clustering` in read order (included).
    pub fn up_to(&self, clustering: &Bytes) -> ReadFilter {
        let bound = Bound::Included(clustering.clone());
        let before = if self.reversed {
            (bound, Bound::Unbounded)
        } else {
            (Bound::Unbounded, bound)
        };
        self.intersected(&before)
    }

    fn intersected(&self, other: &Slice) -> ReadFilter {
        let slices = self
            .slices
            .iter()
            .map(|(start, end)| {
                let start = tighter(start, &other.0, true);
                let end = tighter(end, &other.1, false);
                (start, end)
            })
            .filter(|(start, end)| !slice_is_empty(start, end))
            .collect();
        ReadFilter {
            slices,
            ..self.clone()
        }
    }
}

/// The tighter of two bounds on the same side of slices: the later start (`start`) or the
/// earlier end; at equal values an exclusive bound is the tighter.
fn tighter(a: &Bound<Bytes>, b: &Bound<Bytes>, start: bool) -> Bound<Bytes> {
    let keep_a = match (a, b) {
        (Bound::Unbounded, _) => false,
        (_, Bound::Unbounded) => true,
        (Bound::Included(x) | Bound::Excluded(x), Bound::Included(y) | Bound::Excluded(y)) => {
            let order = if start { x.cmp(y) } else { y.cmp(x) };
            order.is_gt() || (order.is_eq() && matches!(a, Bound::Excluded(_)))
        }
    };
    if keep_a {
        a.clone()
    } else {
        b.clone()
    }
}

/// Whether no value can lie between the bounds (so range lookups must be skipped).
pub fn slice_is_empty(start: &Bound<Bytes>, end: &Bound<Bytes>) -> bool {
    match (start, end) {
        (Bound::Included(s), Bound::Included(e)) => s > e,
        (Bound::Included(s), Bound::Excluded(e))
        | (Bound::Excluded(s), Bound::Included(e))
        | (Bound::Excluded(s), Bound::Excluded(e)) => s >= e,
        _ => false,
    }
}

/// A position on the ring: a whole token, or one partition key.
///
/// A token bound includes or excludes every key with that token: `Included(Token(t))` as a start
/// means "token >= t", `Excluded(Token(t))` as a start means "token > t"; as an end, `Included`
/// means "token <= t" and `Excluded` means "token < t".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartitionPosition {
    Token(i64),
    Key(PartitionKey),
}

/// A range of partitions for scans; partitions come back in (token, key) order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRange {
    pub start: Bound<PartitionPosition>,
    pub end: Bound<PartitionPosition>,
}

impl KeyRange {
    /// The whole ring.
    pub fn all() -> Self {
        KeyRange {
            start: Bound::Unbounded,
            end: Bound::Unbounded,
        }
    }

    /// Whether `key` is at or after the start bound.
    pub fn after_start(&self, key: &PartitionKey) -> bool {
        match &self.start {
            Bound::Unbounded => true,
            Bound::Included(PartitionPosition::Token(t)) => key.token >= *t,
            Bound::Excluded(PartitionPosition::Token(t)) => key.token > *t,
            Bound::Included(PartitionPosition::Key(k)) => key >= k,
            Bound::Excluded(PartitionPosition::Key(k)) => key > k,
        }
    }

    /// Whether `key` is at or before the end bound.
    pub fn before_end(&self, key: &PartitionKey) -> bool {
        match &self.end {
            Bound::Unbounded => true,
            Bound::Included(PartitionPosition::Token(t)) => key.token <= *t,
            Bound::Excluded(PartitionPosition::Token(t)) => key.token < *t,
            Bound::Included(PartitionPosition::Key(k)) => key <= k,
            Bound::Excluded(PartitionPosition::Key(k)) => key < k,
        }
    }

    pub fn contains(&self, key: &PartitionKey) -> bool {
        self.after_start(key) && self.before_end(key)
    }

    /// The smallest key that may satisfy the start bound, for seeking sorted sources
    /// (`None` when nothing can: a start excluding the maximum token).
    pub fn seek_key(&self) -> Option<Bound<PartitionKey>> {
        let min_key = |token: i64| PartitionKey {
            token,
            key: Bytes::new(),
        };
        match &self.start {
            Bound::Unbounded => Some(Bound::Unbounded),
            Bound::Included(PartitionPosition::Token(t)) => Some(Bound::Included(min_key(*t))),
            Bound::Excluded(PartitionPosition::Token(t)) => {
                t.checked_add(1).map(|next| Bound::Included(min_key(next)))
            }
            Bound::Included(PartitionPosition::Key(k)) => Some(Bound::Included(k.clone())),
            Bound::Excluded(PartitionPosition::Key(k)) => Some(Bound::Excluded(k.clone())),
        }
    }
}

/// Whether the range `start..end` lies entirely before `other_start`.
fn ends_before(end: &Bound<Bytes>, other_start: &Bound<Bytes>) -> bool {
    match (end, other_start) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => false,
        (Bound::Included(e), Bound::Included(s)) => e < s,
        (Bound::Included(e), Bound::Excluded(s))
        | (Bound::Excluded(e), Bound::Included(s))
        | (Bound::Excluded(e), Bound::Excluded(s)) => e <= s,
    }
}

/// Whether two clustering ranges share a point.
pub fn ranges_overlap(
    a: (&Bound<Bytes>, &Bound<Bytes>),
    b: (&Bound<Bytes>, &Bound<Bytes>),
) -> bool {
    !ends_before(a.1, b.0) && !ends_before(b.1, a.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    fn key(token: i64, k: &'static str) -> PartitionKey {
        PartitionKey { token, key: b(k) }
    }

    #[test]
    fn slices_respect_open_and_closed_bounds() {
        let (s, e) = (Bound::Excluded(b("b")), Bound::Included(b("d")));
        assert!(!in_slice(&s, &e, b"b"));
        assert!(in_slice(&s, &e, b"c"));
        assert!(in_slice(&s, &e, b"d"));
        assert!(!in_slice(&s, &e, b"da"));
        assert!(slice_is_empty(
            &Bound::Excluded(b("a")),
            &Bound::Excluded(b("a"))
        ));
        assert!(slice_is_empty(
            &Bound::Included(b("b")),
            &Bound::Included(b("a"))
        ));
        assert!(!slice_is_empty(
            &Bound::Included(b("a")),
            &Bound::Included(b("a"))
        ));
    }

    #[test]
    fn token_bounds_cover_all_keys_of_the_token() {
        let range = KeyRange {
            start: Bound::Excluded(PartitionPosition::Token(5)),
            end: Bound::Included(PartitionPosition::Token(7)),
        };
        assert!(!range.contains(&key(5, "zzz")));
        assert!(range.contains(&key(6, "")));
        assert!(range.contains(&key(7, "zzz")));
        assert!(!range.contains(&key(8, "a")));
        assert_eq!(range.seek_key(), Some(Bound::Included(key(6, ""))));
    }

    #[test]
    fn key_bounds_and_max_token() {
        let range = KeyRange {
            start: Bound::Included(PartitionPosition::Key(key(1, "b"))),
            end: Bound::Excluded(PartitionPosition::Key(key(2, "a"))),
        };
        assert!(!range.contains(&key(1, "a")));
        assert!(range.contains(&key(1, "b")));
        assert!(!range.contains(&key(2, "a")));
        let none = KeyRange {
            start: Bound::Excluded(PartitionPosition::Token(i64::MAX)),
            end: Bound::Unbounded,
        };
        assert_eq!(none.seek_key(), None);
    }

    #[test]
    fn after_and_up_to_split_the_slices_in_read_order() {
        let f = ReadFilter {
            slices: vec![
                (Bound::Included(b("a")), Bound::Included(b("c"))),
                (Bound::Excluded(b("e")), Bound::Unbounded),
            ],
            ..ReadFilter::all()
        };
        assert_eq!(
            f.after(&b("b")).slices,
            vec![
                (Bound::Excluded(b("b")), Bound::Included(b("c"))),
                (Bound::Excluded(b("e")), Bound::Unbounded)
            ]
        );
        assert_eq!(
            f.after(&b("c")).slices,
            vec![(Bound::Excluded(b("e")), Bound::Unbounded)]
        );
        assert_eq!(
            f.up_to(&b("c")).slices,
            vec![(Bound::Included(b("a")), Bound::Included(b("c")))]
        );
        let reversed = ReadFilter {
            reversed: true,
            ..f
        };
        assert_eq!(
            reversed.after(&b("f")).slices,
            vec![
                (Bound::Included(b("a")), Bound::Included(b("c"))),
                (Bound::Excluded(b("e")), Bound::Excluded(b("f")))
            ]
        );
        assert_eq!(
            reversed.up_to(&b("b")).slices,
            vec![
                (Bound::Included(b("b")), Bound::Included(b("c"))),
                (Bound::Excluded(b("e")), Bound::Unbounded)
            ]
        );
        let order: Vec<_> = reversed
            .slices_in_read_order()
            .map(|s| s.0.clone())
            .collect();
        assert_eq!(
            order,
            vec![Bound::Excluded(b("e")), Bound::Included(b("a"))]
        );
    }

    #[test]
    fn filter_selects_rows_in_any_slice() {
        let f = ReadFilter::row(b("k"));
        assert!(f.selects(b"k"));
        assert!(!f.selects(b"ka"));
        assert!(ReadFilter::all().selects(b""));
    }

    #[test]
    fn clustering_ranges_overlap_only_when_they_share_a_point() {
        let b = |s: &'static str| Bytes::from_static(s.as_bytes());
        let (inc, exc) = (Bound::Included(b("b")), Bound::Excluded(b("b")));
        assert!(!ends_before(&inc, &inc));
        assert!(ends_before(&exc, &inc));
        assert!(ends_before(&inc, &exc));
        assert!(ranges_overlap(
            (&Bound::Unbounded, &inc),
            (&inc, &Bound::Unbounded)
        ));
        assert!(!ranges_overlap(
            (&Bound::Unbounded, &exc),
            (&inc, &Bound::Unbounded)
        ));
    }
}
