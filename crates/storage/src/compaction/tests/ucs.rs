//! Unified selection: density levels, tiered and leveled thresholds, output sharding.

use super::util::{opts, ranged, sst, GC_BEFORE, GIB, MIB, NOW_MS};
use crate::compaction::{CompactionStrategy, SstableInfo, TaskKind, Unified};

fn ucs(pairs: &[(&str, &str)]) -> Unified {
    let mut all = vec![("class", "UnifiedCompactionStrategy")];
    all.extend_from_slice(pairs);
    Unified::from_options(&opts(&all)).expect("valid options")
}

fn compacted(generation: u64, size: u64) -> SstableInfo {
    SstableInfo {
        level: 1,
        ..sst(generation, size)
    }
}

#[test]
fn t4_compacts_four_flushes() {
    let s = ucs(&[]);
    let mut table: Vec<SstableInfo> = (1..=3).map(|g| sst(g, 100 * MIB)).collect();
    assert_eq!(s.next_task(&table, NOW_MS, GC_BEFORE), None);
    assert_eq!(s.pending_tasks(&table), 0);
    table.push(sst(4, 100 * MIB));
    let task = s.next_task(&table, NOW_MS, GC_BEFORE).expect("task");
    assert_eq!(
        (task.inputs, task.output_level, task.kind),
        (vec![1, 2, 3, 4], 1, TaskKind::Normal)
    );
    // 400 MiB over the whole ring: 4 base shards of 100 MiB (the 100 MiB minimum allows 4).
    assert_eq!(task.max_output_bytes, Some(100 * MIB));
    let table: Vec<SstableInfo> = (1..=4).map(|g| sst(g, 50 * MIB)).collect();
    // 200 MiB is 2 × the minimum size: 2 shards.
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE)
            .and_then(|t| t.max_output_bytes),
        Some(100 * MIB)
    );
    assert_eq!(s.pending_tasks(&table), 1);
}

#[test]
fn levels_grow_by_the_fan_factor() {
    let s = ucs(&[]);
    // Flushes of 100 MiB: level 0 ends at 100 × (1 − 0.9/4) × 4 = 310 MiB, level 1 at 1240 MiB.
    let mut table: Vec<SstableInfo> = (1..=3).map(|g| compacted(g, 400 * MIB)).collect();
    table.extend((10..=12).map(|g| sst(g, 100 * MIB)));
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE),
        None,
        "three per level"
    );
    table.push(compacted(4, 450 * MIB));
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE)
            .map(|t| (t.inputs, t.output_level)),
        Some((vec![1, 2, 3, 4], 2))
    );
}

#[test]
fn leveled_scaling_compacts_pairs_and_n_is_two() {
    let table = vec![sst(1, 100 * MIB), sst(2, 100 * MIB)];
    assert!(ucs(&[]).next_task(&table, NOW_MS, GC_BEFORE).is_none());
    assert_eq!(
        ucs(&[("scaling_parameters", "L10")])
            .next_task(&table, NOW_MS, GC_BEFORE)
            .map(|t| t.inputs),
        Some(vec![1, 2])
    );
    assert!(ucs(&[("scaling_parameters", "N")])
        .next_task(&table, NOW_MS, GC_BEFORE)
        .is_some());
    // Per-level parameters: T4 on level 0, then L10.
    let mixed = ucs(&[("scaling_parameters", "T4, L10")]);
    assert!(mixed.next_task(&table, NOW_MS, GC_BEFORE).is_none());
}

#[test]
fn density_uses_the_token_span() {
    let s = ucs(&[]);
    // Four 50 MiB SSTables each over a quarter of the ring have a density of 200 MiB, but they
    // do not overlap, so no level reaches the threshold.
    let q = i64::MAX / 2;
    let table = vec![
        ranged(1, 50 * MIB, i64::MIN, -q - 1),
        ranged(2, 50 * MIB, -q, -1),
        ranged(3, 50 * MIB, 0, q),
        ranged(4, 50 * MIB, q + 1, i64::MAX),
    ];
    assert_eq!(s.next_task(&table, NOW_MS, GC_BEFORE), None);
    let mut table = table;
    table.extend((5..=7).map(|g| ranged(g, 50 * MIB, i64::MIN, -q - 1)));
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![1, 5, 6, 7])
    );
}

#[test]
fn outputs_split_by_target_size_when_dense() {
    let s = ucs(&[]);
    let table: Vec<SstableInfo> = (1..=4).map(|g| compacted(g, 16 * GIB)).collect();
    let task = s.next_task(&table, NOW_MS, GC_BEFORE).expect("task");
    // 64 GiB: 64 / (1 GiB × 4) = 16, log2 × (1 − 0.333) + 0.5 = 3.17 → 4 << 3 = 32 shards.
    assert_eq!(task.max_output_bytes, Some(2 * GIB));
    let fixed = ucs(&[("sstable_growth", "0")]);
    assert_eq!(
        fixed
            .next_task(&table, NOW_MS, GC_BEFORE)
            .and_then(|t| t.max_output_bytes),
        Some(GIB)
    );
}

#[test]
fn max_sstables_to_compact_limits_large_groups() {
    let s = ucs(&[("max_sstables_to_compact", "5")]);
    let table: Vec<SstableInfo> = (1..=12).map(|g| sst(g, 100 * MIB)).collect();
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![1, 2, 3, 4, 5])
    );
    assert_eq!(s.pending_tasks(&table), 3);
}

#[test]
fn major_compaction_is_one_task_per_overlapping_group() {
    let table = vec![
        ranged(1, MIB, 0, 10),
        ranged(2, MIB, 5, 20),
        ranged(3, MIB, 30, 40),
    ];
    let tasks = ucs(&[]).major_tasks(&table);
    assert_eq!(
        tasks.iter().map(|t| t.inputs.clone()).collect::<Vec<_>>(),
        vec![vec![1, 2], vec![3]]
    );
    assert!(tasks.iter().all(|t| t.kind == TaskKind::Major));
}
