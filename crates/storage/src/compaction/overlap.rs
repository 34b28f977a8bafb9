//! Token-range geometry over [`SstableInfo`]s: intersection, coverage, span fraction, and the
//! groups of transitively overlapping SSTables.

use super::SstableInfo;

/// The number of tokens in the Murmur3 ring, as a float.
const RING: f64 = 18_446_744_073_709_551_616.0;

/// Whether two SSTables share at least one token (bounds inclusive, as Cassandra's `Bounds`).
pub(crate) fn intersects(a: &SstableInfo, b: &SstableInfo) -> bool {
    a.min_token <= b.max_token && b.min_token <= a.max_token
}

/// Whether the SSTable intersects the inclusive token interval `[min, max]`.
pub(crate) fn intersects_range(s: &SstableInfo, min: i64, max: i64) -> bool {
    s.min_token <= max && min <= s.max_token
}

/// The fraction of the ring covered by `[min, max]`.
pub(crate) fn span_fraction(min: i64, max: i64) -> f64 {
    if max < min {
        return 0.0;
    }
    ((i128::from(max) - i128::from(min) + 1) as f64) / RING
}

/// The smallest interval holding every SSTable of `set`, or `None` when it is empty.
pub(crate) fn bounds<'a>(set: impl IntoIterator<Item = &'a SstableInfo>) -> Option<(i64, i64)> {
    set.into_iter().fold(None, |acc, s| match acc {
        None => Some((s.min_token, s.max_token)),
        Some((lo, hi)) => Some((lo.min(s.min_token), hi.max(s.max_token))),
    })
}

/// The fraction of `target`'s token range that none of `others` covers.
pub(crate) fn uncovered_fraction(target: &SstableInfo, others: &[&SstableInfo]) -> f64 {
    let width = span_fraction(target.min_token, target.max_token);
    if width == 0.0 {
        return 0.0;
    }
    let mut ranges: Vec<(i64, i64)> = others
        .iter()
        .filter(|o| intersects(target, o))
        .map(|o| {
            (
                o.min_token.max(target.min_token),
                o.max_token.min(target.max_token),
            )
        })
        .collect();
    ranges.sort_unstable();
    let covered: f64 = merge(ranges)
        .into_iter()
        .map(|(lo, hi)| span_fraction(lo, hi))
        .sum();
    ((width - covered) / width).clamp(0.0, 1.0)
}

/// Merges sorted inclusive intervals that touch or overlap.
fn merge(sorted: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    let mut merged: Vec<(i64, i64)> = Vec::with_capacity(sorted.len());
    for (lo, hi) in sorted {
        match merged.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    merged
}

/// Splits `set` into groups of transitively overlapping SSTables, ordered by token, each group
/// ordered by `(min_token, generation)`.
pub(crate) fn components<'a>(set: &[&'a SstableInfo]) -> Vec<Vec<&'a SstableInfo>> {
    let mut sorted = set.to_vec();
    sorted.sort_by_key(|s| (s.min_token, s.generation));
    let mut groups: Vec<Vec<&SstableInfo>> = Vec::new();
    let mut reach = i64::MIN;
    for s in sorted {
        match groups.last_mut() {
            Some(group) if s.min_token <= reach => group.push(s),
            _ => groups.push(vec![s]),
        }
        reach = if groups.last().is_some_and(|g| g.len() == 1) {
            s.max_token
        } else {
            reach.max(s.max_token)
        };
    }
    groups
}

/// The largest set of SSTables of `group` that all contain one common token (the deepest
/// overlap), ordered by generation.
pub(crate) fn deepest_overlap<'a>(group: &[&'a SstableInfo]) -> Vec<&'a SstableInfo> {
    let mut best: Vec<&SstableInfo> = Vec::new();
    for probe in group {
        let mut here: Vec<&SstableInfo> = group
            .iter()
            .copied()
            .filter(|s| s.min_token <= probe.min_token && probe.min_token <= s.max_token)
            .collect();
        if here.len() > best.len() {
            here.sort_by_key(|s| s.generation);
            best = here;
        }
    }
    best
}
