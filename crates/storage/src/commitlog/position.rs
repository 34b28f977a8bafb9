//! Positions in the commit log: a segment id and a byte offset in it, ordered. A table's
//! *replay floor* is the position before which all its logged data is safely in SSTables.

use std::fmt;

/// The start of one record: `(segment id, offset)`, ordered by segment then offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    pub segment: u64,
    pub offset: u64,
}

impl Position {
    /// The smallest position: nothing is covered.
    pub const ZERO: Position = Position {
        segment: 0,
        offset: 0,
    };

    pub fn new(segment: u64, offset: u64) -> Self {
        Position { segment, offset }
    }

    /// Packs into one `u64` (segment in the high 32 bits) for lock-free tracking; segments are
    /// at most 4 GiB and ids stay below 2^32.
    pub fn pack(self) -> u64 {
        (self.segment.min(u64::from(u32::MAX)) << 32) | self.offset.min(u64::from(u32::MAX))
    }

    pub fn unpack(packed: u64) -> Self {
        Position {
            segment: packed >> 32,
            offset: packed & u64::from(u32::MAX),
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.segment, self.offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips_and_keeps_order() {
        let a = Position::new(3, 70_000);
        let b = Position::new(4, 0);
        assert_eq!(Position::unpack(a.pack()), a);
        assert!(a.pack() < b.pack());
        assert!(a < b);
        assert_eq!(a.to_string(), "3:70000");
    }
}
