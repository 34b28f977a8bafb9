//! [`TokenRanges`]: a set of token ranges, normalised so that membership and containment are
//! simple searches.

use mutation::TokenRange;

/// A union of token ranges. Each range given is left-exclusive and right-inclusive, as
/// Cassandra's `(left, right]`; one whose right end is not above its left wraps around the
/// ring (`(t, t]` is the whole ring), and a right end of `i64::MIN` is the ring's end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TokenRanges {
    /// Disjoint, sorted, non-adjacent inclusive intervals `[first, last]`.
    spans: Vec<(i128, i128)>,
}

impl TokenRanges {
    pub fn new(ranges: &[TokenRange]) -> TokenRanges {
        let mut spans: Vec<(i128, i128)> = ranges.iter().flat_map(|r| inclusive(*r)).collect();
        spans.sort_unstable();
        let mut merged: Vec<(i128, i128)> = Vec::with_capacity(spans.len());
        for (first, last) in spans {
            match merged.last_mut() {
                Some(prev) if first <= prev.1 + 1 => prev.1 = prev.1.max(last),
                _ => merged.push((first, last)),
            }
        }
        TokenRanges { spans: merged }
    }

    /// The whole ring.
    pub fn all() -> TokenRanges {
        TokenRanges::new(&[(i64::MIN, i64::MIN)])
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    pub fn contains(&self, token: i64) -> bool {
        self.span_of(i128::from(token)).is_some()
    }

    /// Whether every token from `first` to `last` (inclusive) is in the set.
    pub fn covers(&self, first: i64, last: i64) -> bool {
        let last = i128::from(last);
        self.span_of(i128::from(first))
            .is_some_and(|(_, end)| last <= end)
    }

    /// Whether some token from `first` to `last` (inclusive) is in the set.
    pub fn overlaps(&self, first: i64, last: i64) -> bool {
        let (first, last) = (i128::from(first), i128::from(last));
        let after = self.spans.partition_point(|(_, end)| *end < first);
        self.spans
            .get(after)
            .is_some_and(|(start, _)| *start <= last)
    }

    /// The ranges as `(left, right]` pairs, none wrapping (for the wire and for display).
    pub fn to_ranges(&self) -> Vec<TokenRange> {
        self.spans
            .iter()
            .map(|(first, last)| {
                let left = (first - 1) as i64;
                let right = if *last == i128::from(i64::MAX) {
                    i64::MIN
                } else {
                    *last as i64
                };
                (left, right)
            })
            .collect()
    }

    fn span_of(&self, token: i128) -> Option<(i128, i128)> {
        let after = self.spans.partition_point(|(_, end)| *end < token);
        self.spans
            .get(after)
            .copied()
            .filter(|(start, _)| *start <= token)
    }
}

/// `(left, right]` as inclusive intervals of tokens, split where it wraps.
fn inclusive((left, right): TokenRange) -> Vec<(i128, i128)> {
    let (first, end) = (i128::from(left) + 1, i128::from(i64::MAX));
    if right == i64::MIN {
        return vec![(first, end)];
    }
    let last = i128::from(right);
    if left < right {
        vec![(first, last)]
    } else {
        // Wraps: from after `left` to the end, then from the start (after MIN) to `right`.
        vec![(first, end), (i128::from(i64::MIN) + 1, last)]
            .into_iter()
            .filter(|(a, b)| a <= b)
            .collect()
    }
}
