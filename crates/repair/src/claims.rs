//! The token ranges of tables under repair on this node: a repair overlapping one that runs
//! is refused, as Cassandra refuses to validate the same SSTables in two sessions at once.

use mutation::{TableId, TokenRange};
use parking_lot::Mutex;

#[derive(Default)]
pub struct Claims {
    held: Mutex<Vec<(u64, TableId, TokenRange)>>,
    next: Mutex<u64>,
}

/// Ranges claimed until dropped.
pub struct Claim<'a> {
    claims: &'a Claims,
    id: u64,
}

impl Claims {
    /// Claims every range of every table, or none when one overlaps a held claim.
    pub fn claim(&self, tables: &[TableId], ranges: &[TokenRange]) -> Option<Claim<'_>> {
        let mut held = self.held.lock();
        let overlapping = held.iter().any(|(_, table, range)| {
            tables.contains(table) && ranges.iter().any(|r| overlap(*r, *range))
        });
        if overlapping {
            return None;
        }
        let id = {
            let mut next = self.next.lock();
            *next += 1;
            *next
        };
        for table in tables {
            held.extend(ranges.iter().map(|range| (id, *table, *range)));
        }
        Some(Claim { claims: self, id })
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.claims.held.lock().retain(|(id, _, _)| *id != self.id);
    }
}

/// Whether two ranges (left, right] — wrapping when left >= right — share a token.
pub fn overlap(a: TokenRange, b: TokenRange) -> bool {
    pieces(a)
        .iter()
        .any(|p| pieces(b).iter().any(|q| p.0 < q.1 && q.0 < p.1))
}

/// The tokens two ranges share, as ranges (left, right] (`i64::MAX` on the right where the
/// ring ends).
pub fn intersection(a: TokenRange, b: TokenRange) -> Vec<TokenRange> {
    let mut shared = Vec::new();
    for p in pieces(a) {
        for q in pieces(b) {
            let (left, right) = (p.0.max(q.0), p.1.min(q.1));
            if left < right {
                shared.push((left, right));
            }
        }
    }
    shared
}

/// A range as non-wrapping pieces (left, right] with `i64::MIN` as the ring's end written
/// `i64::MAX` (tokens never equal `i64::MIN`).
fn pieces((left, right): TokenRange) -> Vec<(i64, i64)> {
    let end = |t: i64| if t == i64::MIN { i64::MAX } else { t };
    if left < end(right) {
        vec![(left, end(right))]
    } else {
        vec![(left, i64::MAX), (i64::MIN, end(right))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[test]
    fn overlapping_ranges_of_a_table_are_refused_until_released() {
        let claims = Claims::default();
        let t = TableId(Uuid::from_u128(1));
        let u = TableId(Uuid::from_u128(2));
        let first = claims.claim(&[t], &[(0, 100)]);
        assert!(first.is_some());
        assert!(claims.claim(&[t], &[(50, 150)]).is_none());
        assert!(claims.claim(&[t], &[(100, 200)]).is_some());
        assert!(claims.claim(&[u], &[(0, 100)]).is_some());
        assert!(
            claims.claim(&[t], &[(i64::MAX - 1, 10)]).is_none(),
            "wrapping"
        );
        drop(first);
        assert!(claims.claim(&[t], &[(50, 150)]).is_some());
    }

    #[test]
    fn intersections_cut_ranges_to_what_both_cover() {
        assert_eq!(intersection((0, 100), (50, 150)), vec![(50, 100)]);
        assert_eq!(intersection((0, 100), (100, 150)), vec![]);
        assert_eq!(
            intersection((90, -90), (-100, 100)),
            vec![(90, 100), (-100, -90)]
        );
        assert_eq!(intersection((5, 5), (1, 2)), vec![(1, 2)]);
    }

    #[test]
    fn wrapping_and_whole_ring_ranges_overlap_what_they_cover() {
        assert!(overlap((5, 5), (1, 2)));
        assert!(overlap(
            (i64::MAX - 1, i64::MIN + 5),
            (i64::MIN, i64::MIN + 1)
        ));
        assert!(!overlap((i64::MAX - 1, i64::MIN + 5), (0, 10)));
        assert!(overlap((0, i64::MIN), (i64::MAX - 1, i64::MAX)));
        assert!(!overlap((0, 10), (10, 20)));
    }
}
