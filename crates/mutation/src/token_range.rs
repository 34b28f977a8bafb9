//! [`TokenRange`]: a range of the token ring, as streaming, repair, cleanup, size estimates and
//! node operations pass them around.
//!
//! A type alias of a pair rather than a newtype: ranges are built and taken apart as `(left,
//! right)` in every crate that moves data (ring arithmetic, Merkle trees, stream plans, the
//! admin API's JSON), and a newtype would only add `.0`/`.1` and constructors there without a
//! rule of its own to enforce.

/// A token range: left-exclusive, right-inclusive (`left < right`; a wrapping range is split).
/// A right end of `i64::MIN` is the end of the ring, as Cassandra's `(t, MIN]`.
pub type TokenRange = (i64, i64);

/// Whether two ranges (left, right] — wrapping when left >= right — share a token.
pub fn tokens_overlap(a: TokenRange, b: TokenRange) -> bool {
    pieces(a)
        .iter()
        .any(|p| pieces(b).iter().any(|q| p.0 < q.1 && q.0 < p.1))
}

/// Whether `token` lies in `range` (left, right], wrapping when left >= right.
pub fn token_in(range: TokenRange, token: i64) -> bool {
    pieces(range).iter().any(|p| p.0 < token && token <= p.1)
}

/// The tokens two ranges share, as ranges (left, right] (`i64::MAX` on the right where the
/// ring ends).
pub fn token_intersection(a: TokenRange, b: TokenRange) -> Vec<TokenRange> {
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

    #[test]
    fn intersections_cut_ranges_to_what_both_cover() {
        assert_eq!(token_intersection((0, 100), (50, 150)), vec![(50, 100)]);
        assert_eq!(token_intersection((0, 100), (100, 150)), vec![]);
        assert_eq!(
            token_intersection((90, -90), (-100, 100)),
            vec![(90, 100), (-100, -90)]
        );
        assert_eq!(token_intersection((5, 5), (1, 2)), vec![(1, 2)]);
    }

    #[test]
    fn wrapping_and_whole_ring_ranges_overlap_what_they_cover() {
        assert!(tokens_overlap((5, 5), (1, 2)));
        assert!(tokens_overlap(
            (i64::MAX - 1, i64::MIN + 5),
            (i64::MIN, i64::MIN + 1)
        ));
        assert!(!tokens_overlap((i64::MAX - 1, i64::MIN + 5), (0, 10)));
        assert!(tokens_overlap((0, i64::MIN), (i64::MAX - 1, i64::MAX)));
        assert!(!tokens_overlap((0, 10), (10, 20)));
    }

    #[test]
    fn a_token_is_in_the_ranges_that_cover_it() {
        assert!(token_in((0, 10), 10) && !token_in((0, 10), 0));
        assert!(token_in((90, -90), 95) && token_in((90, -90), -95) && !token_in((90, -90), 0));
        assert!(token_in((0, i64::MIN), i64::MAX) && !token_in((0, i64::MIN), -1));
        assert!(token_in((5, 5), 5) && token_in((5, 5), -7));
    }
}
