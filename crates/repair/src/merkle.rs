//! Merkle trees over a token range, as Cassandra's `MerkleTree`: the range is split in halves
//! at its midpoint token, `depth` times, and each of the `2^depth` leaves holds the hash of the
//! partitions whose tokens fall in its sub-range (the XOR of their digests, so the order they
//! are added in does not matter) and how many there were. An inner node's hash is the XOR of
//! its children's; the tree is kept as its leaves, and two trees of the same range and depth
//! are compared top-down, an equal subtree ending the descent.

use mutation::TokenRange;

/// A SHA-256 digest.
pub type Hash = [u8; 32];

/// Cassandra's cap on a tree's depth (`repair_session_max_tree_depth`, 20 by default).
pub const MAX_DEPTH: u8 = 20;

/// Bytes a leaf takes in memory and on the wire: its hash and its partition count.
pub const LEAF_BYTES: u64 = 40;

/// One leaf: the XOR of the digests of its partitions, and their number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Leaf {
    pub hash: Hash,
    pub partitions: u64,
}

impl Leaf {
    fn add(&mut self, hash: &Hash) {
        xor_into(&mut self.hash, hash);
        self.partitions += 1;
    }
}

/// A tree over `range` = (left, right]: left exclusive, right inclusive, wrapping past the end
/// of the ring when `left >= right` (`left == right` is the whole ring).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MerkleTree {
    range: TokenRange,
    depth: u8,
    leaves: Vec<Leaf>,
}

impl MerkleTree {
    /// An empty tree of `2^depth` leaves (depth at most [`MAX_DEPTH`]).
    pub fn new(range: TokenRange, depth: u8) -> MerkleTree {
        let depth = depth.min(MAX_DEPTH);
        MerkleTree {
            range,
            depth,
            leaves: vec![Leaf::default(); 1 << depth],
        }
    }

    /// A tree from its parts; `None` when the leaves are not `2^depth`.
    pub fn from_leaves(range: TokenRange, depth: u8, leaves: Vec<Leaf>) -> Option<MerkleTree> {
        (depth <= MAX_DEPTH && leaves.len() == 1 << depth).then_some(MerkleTree {
            range,
            depth,
            leaves,
        })
    }

    pub fn range(&self) -> TokenRange {
        self.range
    }

    pub fn depth(&self) -> u8 {
        self.depth
    }

    pub fn leaves(&self) -> &[Leaf] {
        &self.leaves
    }

    /// Adds a partition's digest to the leaf covering `token`; false when the token lies
    /// outside the tree's range.
    pub fn add(&mut self, token: i64, hash: &Hash) -> bool {
        let Some(offset) = self.offset(token) else {
            return false;
        };
        let (mut low, mut high, mut index) = (0u128, self.size(), 0usize);
        for _ in 0..self.depth {
            let middle = low + (high - low) / 2;
            index *= 2;
            if offset <= middle {
                high = middle;
            } else {
                low = middle;
                index += 1;
            }
        }
        self.leaves[index].add(hash);
        true
    }

    /// The root's hash: the XOR of every leaf's.
    pub fn root(&self) -> Hash {
        self.subtree(0, 0)
    }

    /// Partitions added, over every leaf.
    pub fn partitions(&self) -> u64 {
        self.leaves.iter().map(|l| l.partitions).sum()
    }

    /// The sub-ranges where the two trees differ, adjacent ones merged, in ring order from the
    /// tree's left end. Trees of another range or depth cannot be compared.
    pub fn difference(&self, other: &MerkleTree) -> Result<Vec<TokenRange>, String> {
        if (self.range, self.depth) != (other.range, other.depth) {
            return Err(format!(
                "cannot compare a tree of {:?} at depth {} with one of {:?} at depth {}",
                self.range, self.depth, other.range, other.depth
            ));
        }
        let mut differing = Vec::new();
        self.differing_leaves(other, 0, 0, &mut differing);
        Ok(self.merged_ranges(&differing))
    }

    /// The hash of the node at `level` (0: the root) and `index` within its level.
    fn subtree(&self, level: u8, index: usize) -> Hash {
        let width = 1usize << (self.depth - level);
        let mut hash = Hash::default();
        for leaf in &self.leaves[index * width..(index + 1) * width] {
            xor_into(&mut hash, &leaf.hash);
        }
        hash
    }

    fn differing_leaves(&self, other: &MerkleTree, level: u8, index: usize, out: &mut Vec<usize>) {
        if level == self.depth {
            if self.leaves[index] != other.leaves[index] {
                out.push(index);
            }
            return;
        }
        let width = 1usize << (self.depth - level);
        let span = index * width..(index + 1) * width;
        let counts = |t: &MerkleTree| {
            t.leaves[span.clone()]
                .iter()
                .map(|l| l.partitions)
                .sum::<u64>()
        };
        if self.subtree(level, index) == other.subtree(level, index)
            && counts(self) == counts(other)
        {
            return;
        }
        self.differing_leaves(other, level + 1, index * 2, out);
        self.differing_leaves(other, level + 1, index * 2 + 1, out);
    }

    /// The partitions this tree holds in the leaves where it differs from `other` (0 when the
    /// trees cannot be compared): what it would send `other` to repair them.
    pub fn partitions_differing(&self, other: &MerkleTree) -> u64 {
        if (self.range, self.depth) != (other.range, other.depth) {
            return 0;
        }
        let mut differing = Vec::new();
        self.differing_leaves(other, 0, 0, &mut differing);
        differing.iter().map(|&i| self.leaves[i].partitions).sum()
    }

    /// The ranges of the leaves `indexes` (ascending), runs of adjacent leaves as one range.
    fn merged_ranges(&self, indexes: &[usize]) -> Vec<TokenRange> {
        let mut ranges: Vec<TokenRange> = Vec::new();
        let mut previous: Option<usize> = None;
        for &index in indexes {
            let (left, right) = self.leaf_range(index);
            match ranges.last_mut() {
                Some(last) if previous == Some(index - 1) => last.1 = right,
                _ => ranges.push((left, right)),
            }
            previous = Some(index);
        }
        ranges
    }

    /// The sub-range (left, right] the leaf `index` covers.
    pub fn leaf_range(&self, index: usize) -> TokenRange {
        let (mut low, mut high) = (0u128, self.size());
        for bit in (0..self.depth).rev() {
            let middle = low + (high - low) / 2;
            if index >> bit & 1 == 0 {
                high = middle;
            } else {
                low = middle;
            }
        }
        (self.token_at(low), self.token_at(high))
    }

    /// Tokens in the range: `2^64` for the whole ring.
    fn size(&self) -> u128 {
        match self.range.1.wrapping_sub(self.range.0) as u64 {
            0 => 1u128 << 64,
            size => u128::from(size),
        }
    }

    /// How far past the left end `token` lies, in `1..=size`; `None` outside the range.
    fn offset(&self, token: i64) -> Option<u128> {
        let offset = match token.wrapping_sub(self.range.0) as u64 {
            0 => 1u128 << 64,
            offset => u128::from(offset),
        };
        (offset <= self.size()).then_some(offset)
    }

    fn token_at(&self, offset: u128) -> i64 {
        self.range.0.wrapping_add(offset as u64 as i64)
    }
}

fn xor_into(into: &mut Hash, hash: &Hash) {
    for (a, b) in into.iter_mut().zip(hash) {
        *a ^= b;
    }
}

/// The depth Cassandra gives a tree: enough for one partition a leaf
/// (`ceil(log2(partitions))`), at most `max_depth`.
pub fn depth_for(partitions: u64, max_depth: u8) -> u8 {
    let wanted = u64::BITS - partitions.saturating_sub(1).leading_zeros();
    (wanted as u8).min(max_depth).min(MAX_DEPTH)
}

/// The deepest trees `trees` can be at once in `session_space` bytes (Cassandra's
/// `repair_session_space`), at most [`MAX_DEPTH`].
pub fn max_depth(session_space: u64, trees: u64) -> u8 {
    let leaves = session_space / (trees.max(1) * LEAF_BYTES);
    let depth = u64::BITS - 1 - leaves.max(1).leading_zeros();
    (depth as u8).min(MAX_DEPTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(n: u8) -> Hash {
        let mut h = Hash::default();
        h[0] = n;
        h[31] = n.wrapping_mul(7);
        h
    }

    #[test]
    fn leaves_split_the_range_at_midpoints_and_cover_it() {
        let tree = MerkleTree::new((0, 100), 2);
        let ranges: Vec<TokenRange> = (0..4).map(|i| tree.leaf_range(i)).collect();
        assert_eq!(ranges, vec![(0, 25), (25, 50), (50, 75), (75, 100)]);
        let ring = MerkleTree::new((i64::MIN, i64::MIN), 1);
        assert_eq!(ring.leaf_range(0), (i64::MIN, 0));
        assert_eq!(ring.leaf_range(1), (0, i64::MIN));
        let wrapping = MerkleTree::new((i64::MAX - 9, i64::MIN + 10), 1);
        assert_eq!(wrapping.leaf_range(0), (i64::MAX - 9, i64::MIN));
        assert_eq!(wrapping.leaf_range(1), (i64::MIN, i64::MIN + 10));
    }

    #[test]
    fn tokens_land_in_their_leaf_and_outside_tokens_are_refused() {
        let mut tree = MerkleTree::new((0, 100), 2);
        assert!(tree.add(25, &hash(1)));
        assert!(tree.add(26, &hash(2)));
        assert!(tree.add(100, &hash(3)));
        assert!(!tree.add(0, &hash(4)));
        assert!(!tree.add(101, &hash(4)));
        let counts: Vec<u64> = tree.leaves().iter().map(|l| l.partitions).collect();
        assert_eq!(counts, vec![1, 1, 0, 1]);
        let mut ring = MerkleTree::new((5, 5), 3);
        assert!([i64::MIN, -1, 0, 5, 6, i64::MAX]
            .into_iter()
            .all(|t| ring.add(t, &hash(1))));
    }

    #[test]
    fn insertion_order_does_not_change_the_tree() {
        let tokens = [3i64, 97, 40, 41, 12];
        let mut a = MerkleTree::new((0, 100), 3);
        let mut b = MerkleTree::new((0, 100), 3);
        for (n, t) in tokens.iter().enumerate() {
            a.add(*t, &hash(n as u8));
        }
        for (n, t) in tokens.iter().enumerate().rev() {
            b.add(*t, &hash(n as u8));
        }
        assert_eq!(a, b);
        assert_eq!(a.root(), b.root());
        assert_eq!(a.difference(&b), Ok(vec![]));
    }

    #[test]
    fn differences_are_the_differing_leaves_with_neighbours_merged() {
        let mut a = MerkleTree::new((0, 80), 3);
        let mut b = MerkleTree::new((0, 80), 3);
        for t in [5, 15, 25, 35, 45, 55, 65, 75] {
            a.add(t, &hash(t as u8));
            b.add(t, &hash(t as u8));
        }
        b.add(14, &hash(1)); // leaf (10, 20]
        b.add(28, &hash(2)); // leaf (20, 30]
        a.add(71, &hash(3)); // leaf (70, 80]
        assert_ne!(a.root(), b.root());
        assert_eq!(a.difference(&b), Ok(vec![(10, 30), (70, 80)]));
        assert!(a.difference(&MerkleTree::new((0, 80), 2)).is_err());
    }

    #[test]
    fn depth_follows_the_partitions_and_the_session_space() {
        assert_eq!(depth_for(0, 20), 0);
        assert_eq!(depth_for(1, 20), 0);
        assert_eq!(depth_for(1000, 20), 10);
        assert_eq!(depth_for(1024, 20), 10);
        assert_eq!(depth_for(u64::MAX, 16), 16);
        // 256 MiB for 3 trees of 40-byte leaves: 2^21 leaves fit, capped at 20.
        assert_eq!(max_depth(256 << 20, 3), 20);
        assert_eq!(max_depth(1 << 20, 3), 13);
        assert_eq!(max_depth(0, 3), 0);
    }
}
