//! Test helpers: SSTable descriptions and option maps.

use crate::compaction::{Options, SstableInfo};

pub(crate) const MIB: u64 = 1 << 20;
pub(crate) const GIB: u64 = 1 << 30;
pub(crate) const DAY_MS: i64 = 86_400_000;
/// A fixed "now": 2024-01-01T00:00:00Z in ms.
pub(crate) const NOW_MS: i64 = 1_704_067_200_000;
/// `gc_before` for `NOW_MS` with the default `gc_grace_seconds` (10 days).
pub(crate) const GC_BEFORE: i64 = NOW_MS / 1000 - 864_000;

/// A fresh full-ring SSTable of `size` bytes, written an hour before `NOW_MS`, repaired (so
/// its tombstones may go under the default `only_purge_repaired_tombstones`).
pub(crate) fn sst(generation: u64, size: u64) -> SstableInfo {
    let ts = (NOW_MS - 3_600_000) * 1000;
    SstableInfo {
        generation,
        size_bytes: size,
        min_timestamp: ts,
        max_timestamp: ts,
        max_local_deletion_time: i64::MAX,
        min_token: i64::MIN,
        max_token: i64::MAX,
        level: 0,
        droppable_tombstones: 0.0,
        created_at_ms: NOW_MS - 3_600_000,
        key_count: 1000,
        repaired: true,
        pending_repair: None,
        being_compacted: false,
    }
}

/// `sst` restricted to the token range `[min, max]`.
pub(crate) fn ranged(generation: u64, size: u64, min: i64, max: i64) -> SstableInfo {
    SstableInfo {
        min_token: min,
        max_token: max,
        ..sst(generation, size)
    }
}

/// An option map from pairs.
pub(crate) fn opts(pairs: &[(&str, &str)]) -> Options {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
