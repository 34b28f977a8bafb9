//! [`RowMap`]: the rows of an unresolved partition, ordered by clustering. Most partitions hold
//! one row or a few, so small maps are a sorted vector (one allocation sized to the rows); past
//! [`SMALL_MAX`] rows they become a B-tree, so a wide partition still inserts in O(log n).
//! A B-tree leaf alone is about 1.3 KB, more than a typical one-row partition's data.

use std::collections::btree_map::{self, BTreeMap};
use std::ops::{Bound, RangeBounds};

use bytes::Bytes;

use crate::Row;

/// Rows kept in the sorted vector before switching to the B-tree.
const SMALL_MAX: usize = 16;

/// A map from clustering to row (a decoded [`Row`], or a row in another form: a memtable keeps
/// its rows encoded) with `BTreeMap`'s ordered interface.
#[derive(Clone, Debug)]
pub struct RowMap<V = Row>(Repr<V>);

#[derive(Clone, Debug)]
enum Repr<V> {
    Small(Vec<(Bytes, V)>),
    Large(BTreeMap<Bytes, V>),
}

impl<V> Default for RowMap<V> {
    fn default() -> Self {
        RowMap::new()
    }
}

impl<V: PartialEq> PartialEq for RowMap<V> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<V: Eq> Eq for RowMap<V> {}

/// One of two iterators with the same items.
pub enum Either<A, B> {
    Small(A),
    Large(B),
}

impl<T, A: Iterator<Item = T>, B: Iterator<Item = T>> Iterator for Either<A, B> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match self {
            Either::Small(a) => a.next(),
            Either::Large(b) => b.next(),
        }
    }
}

impl<T, A, B> DoubleEndedIterator for Either<A, B>
where
    A: DoubleEndedIterator<Item = T>,
    B: DoubleEndedIterator<Item = T>,
{
    fn next_back(&mut self) -> Option<T> {
        match self {
            Either::Small(a) => a.next_back(),
            Either::Large(b) => b.next_back(),
        }
    }
}

type Pair<'a, V> = (&'a Bytes, &'a V);

fn pair<V>(entry: &(Bytes, V)) -> Pair<'_, V> {
    (&entry.0, &entry.1)
}

impl<V> RowMap<V> {
    pub const fn new() -> Self {
        RowMap(Repr::Small(Vec::new()))
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Small(rows) => rows.len(),
            Repr::Large(rows) => rows.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, clustering: &[u8]) -> Option<&V> {
        match &self.0 {
            Repr::Small(rows) => find(rows, clustering).ok().map(|i| &rows[i].1),
            Repr::Large(rows) => rows.get(clustering),
        }
    }

    pub fn get_mut(&mut self, clustering: &[u8]) -> Option<&mut V> {
        match &mut self.0 {
            Repr::Small(rows) => find(rows, clustering).ok().map(|i| &mut rows[i].1),
            Repr::Large(rows) => rows.get_mut(clustering),
        }
    }

    /// Puts `row` under `clustering`, returning the row it replaces.
    pub fn insert(&mut self, clustering: Bytes, row: V) -> Option<V> {
        match &mut self.0 {
            Repr::Small(rows) => match find(rows, &clustering) {
                Ok(i) => Some(std::mem::replace(&mut rows[i].1, row)),
                Err(_) if rows.len() >= SMALL_MAX => {
                    let mut tree: BTreeMap<Bytes, V> = std::mem::take(rows).into_iter().collect();
                    tree.insert(clustering, row);
                    self.0 = Repr::Large(tree);
                    None
                }
                Err(i) => {
                    // Most partitions keep their first row alone: room for exactly one.
                    rows.reserve_exact(usize::from(rows.is_empty()));
                    rows.insert(i, (clustering, row));
                    None
                }
            },
            Repr::Large(rows) => rows.insert(clustering, row),
        }
    }

    /// Rows in clustering order.
    pub fn iter(
        &self,
    ) -> Either<impl DoubleEndedIterator<Item = Pair<'_, V>>, btree_map::Iter<'_, Bytes, V>> {
        match &self.0 {
            Repr::Small(rows) => Either::Small(rows.iter().map(pair)),
            Repr::Large(rows) => Either::Large(rows.iter()),
        }
    }

    /// Rows whose clustering lies within `bounds`, in clustering order.
    pub fn range(
        &self,
        bounds: (Bound<Bytes>, Bound<Bytes>),
    ) -> Either<impl DoubleEndedIterator<Item = Pair<'_, V>>, btree_map::Range<'_, Bytes, V>> {
        match &self.0 {
            Repr::Small(rows) => {
                let start = rows.partition_point(|(c, _)| before(c, bounds.start_bound()));
                let end = rows.partition_point(|(c, _)| !after(c, bounds.end_bound()));
                Either::Small(rows[start..end.max(start)].iter().map(pair))
            }
            Repr::Large(rows) => Either::Large(rows.range(bounds)),
        }
    }

    /// The row with the greatest clustering.
    pub fn last_key_value(&self) -> Option<Pair<'_, V>> {
        match &self.0 {
            Repr::Small(rows) => rows.last().map(pair),
            Repr::Large(rows) => rows.last_key_value(),
        }
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Bytes> {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> {
        self.iter().map(|(_, v)| v)
    }

    pub fn into_values(self) -> impl DoubleEndedIterator<Item = V> {
        self.into_iter().map(|(_, v)| v)
    }
}

/// Where `clustering` is in the sorted `rows`, or where it would go.
fn find<V>(rows: &[(Bytes, V)], clustering: &[u8]) -> Result<usize, usize> {
    rows.binary_search_by(|(c, _)| c.as_ref().cmp(clustering))
}

/// Whether `clustering` comes before the range starting at `start`.
fn before(clustering: &Bytes, start: Bound<&Bytes>) -> bool {
    match start {
        Bound::Included(s) => clustering < s,
        Bound::Excluded(s) => clustering <= s,
        Bound::Unbounded => false,
    }
}

/// Whether `clustering` comes after the range ending at `end`.
fn after(clustering: &Bytes, end: Bound<&Bytes>) -> bool {
    match end {
        Bound::Included(e) => clustering > e,
        Bound::Excluded(e) => clustering >= e,
        Bound::Unbounded => false,
    }
}

impl<V> IntoIterator for RowMap<V> {
    type Item = (Bytes, V);
    type IntoIter = Either<std::vec::IntoIter<(Bytes, V)>, btree_map::IntoIter<Bytes, V>>;

    fn into_iter(self) -> Self::IntoIter {
        match self.0 {
            Repr::Small(rows) => Either::Small(rows.into_iter()),
            Repr::Large(rows) => Either::Large(rows.into_iter()),
        }
    }
}

impl<V> FromIterator<(Bytes, V)> for RowMap<V> {
    fn from_iter<I: IntoIterator<Item = (Bytes, V)>>(iter: I) -> Self {
        let mut map = RowMap::new();
        for (clustering, row) in iter {
            map.insert(clustering, row);
        }
        map
    }
}

impl<V> std::ops::Index<&Bytes> for RowMap<V> {
    type Output = V;

    #[expect(
        clippy::expect_used,
        reason = "indexing a missing key panics, as for a std map"
    )]
    fn index(&self, clustering: &Bytes) -> &V {
        self.get(clustering).expect("no row with this clustering")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(n: u8) -> (Bytes, Row) {
        let clustering = Bytes::from(vec![n]);
        (clustering.clone(), Row::new(clustering))
    }

    /// The map and a `BTreeMap` given the same inserts agree on every query, before and after
    /// the switch to the B-tree.
    #[test]
    fn behaves_as_a_btree_map_at_every_size() {
        let mut map = RowMap::new();
        let mut reference = BTreeMap::new();
        for n in (0..40u8).map(|n| n.wrapping_mul(37) % 64) {
            let (k, v) = row(n);
            assert_eq!(map.insert(k.clone(), v.clone()), reference.insert(k, v));
            assert_eq!(map.len(), reference.len());
            assert!(map.iter().eq(reference.iter()));
            let b = |n: u8| Bytes::from(vec![n]);
            for bounds in [
                (Bound::Included(b(5)), Bound::Excluded(b(30))),
                (Bound::Excluded(b(5)), Bound::Included(b(30))),
                (Bound::Unbounded, Bound::Included(b(10))),
                (Bound::Excluded(b(60)), Bound::Unbounded),
            ] {
                assert!(map
                    .range(bounds.clone())
                    .eq(reference.range(bounds.clone())));
                assert!(map
                    .range(bounds.clone())
                    .rev()
                    .eq(reference.range(bounds).rev()));
            }
            assert_eq!(map.get(&b(n)), reference.get(&b(n)));
            assert_eq!(map.get(&b(99)), None);
        }
        assert!(matches!(map.0, Repr::Large(_)));
        let small: RowMap = (0..3).map(row).collect();
        assert!(matches!(small.0, Repr::Small(_)));
        assert!(small
            .into_values()
            .map(|r| r.clustering)
            .eq((0..3).map(|n| Bytes::from(vec![n]))));
    }

    #[test]
    fn equality_ignores_the_representation() {
        let large: RowMap = (0..20).map(row).collect();
        assert!(matches!(large.0, Repr::Large(_)));
        let small = RowMap(Repr::Small((0..20).map(row).collect()));
        assert_eq!(large, small);
        let mut changed = small.clone();
        changed.insert(row(0).0, Row::new(Bytes::from_static(b"x")));
        assert_ne!(large, changed);
    }
}
