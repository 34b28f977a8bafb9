//! The token ranges of tables under repair on this node: a repair overlapping one that runs
//! is refused, as Cassandra refuses to validate the same SSTables in two sessions at once.

use mutation::{tokens_overlap, TableId, TokenRange};
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
            tables.contains(table) && ranges.iter().any(|r| tokens_overlap(*r, *range))
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
}
