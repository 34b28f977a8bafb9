//! Size-tiered selection: flush streams, tiers, thresholds, busy SSTables, tombstones.

use super::util::{opts, sst, GC_BEFORE, GIB, MIB, NOW_MS};
use crate::compaction::{from_options, CompactionStrategy, SizeTiered, SstableInfo, TaskKind};

fn stcs(pairs: &[(&str, &str)]) -> SizeTiered {
    let mut all = vec![("class", "SizeTieredCompactionStrategy")];
    all.extend_from_slice(pairs);
    SizeTiered::from_options(&opts(&all)).expect("valid options")
}

fn flushes(range: std::ops::Range<u64>, size: u64) -> Vec<SstableInfo> {
    range.map(|g| sst(g, size)).collect()
}

#[test]
fn equal_flushes_compact_at_min_threshold() {
    let s = stcs(&[]);
    let three = flushes(1..4, 10 * MIB);
    assert_eq!(s.next_task(&three, NOW_MS, GC_BEFORE), None);
    assert_eq!(s.pending_tasks(&three), 0);
    let four = flushes(1..5, 10 * MIB);
    let task = s.next_task(&four, NOW_MS, GC_BEFORE).expect("a task");
    assert_eq!(task.inputs, vec![1, 2, 3, 4]);
    assert_eq!(
        (task.kind, task.output_level, task.max_output_bytes),
        (TaskKind::Normal, 0, None)
    );
    assert_eq!(s.pending_tasks(&four), 1);
}

#[test]
fn growth_to_tiers_prefers_the_fullest_then_smallest_bucket() {
    let s = stcs(&[]);
    let mut table = flushes(1..5, 200 * MIB);
    table.extend(flushes(10..13, 60 * MIB));
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![1, 2, 3, 4])
    );
    table.push(sst(13, 62 * MIB));
    // Both buckets hold four: the smaller average wins.
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![10, 11, 12, 13])
    );
    table.push(sst(5, 210 * MIB));
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![1, 2, 3, 4, 5])
    );
    assert_eq!(s.pending_tasks(&table), 2);
}

#[test]
fn bucket_bounds_follow_bucket_low_and_high() {
    let s = stcs(&[]);
    // 100, 140 share a bucket (140 < 1.5 × 100); 300 does not.
    let table = vec![
        sst(1, 100 * MIB),
        sst(2, 140 * MIB),
        sst(3, 120 * MIB),
        sst(4, 130 * MIB),
        sst(5, 300 * MIB),
    ];
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![1, 2, 3, 4])
    );
    let narrow = stcs(&[("bucket_high", "1.1")]);
    assert_eq!(narrow.next_task(&table, NOW_MS, GC_BEFORE), None);
}

#[test]
fn max_threshold_caps_a_bucket_at_its_smallest() {
    let s = stcs(&[]);
    let table: Vec<SstableInfo> = (1..=40).map(|g| sst(g, MIB + g)).collect();
    let task = s.next_task(&table, NOW_MS, GC_BEFORE).expect("a task");
    assert_eq!(task.inputs, (1..=32).collect::<Vec<_>>());
    assert_eq!(s.pending_tasks(&table), 2);
}

#[test]
fn busy_sstables_are_never_selected() {
    let s = stcs(&[]);
    let mut table = flushes(1..6, 10 * MIB);
    table[0].being_compacted = true;
    table[1].being_compacted = true;
    assert_eq!(s.next_task(&table, NOW_MS, GC_BEFORE), None);
    table.push(sst(6, 10 * MIB));
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![3, 4, 5, 6])
    );
    assert_eq!(s.major_tasks(&table)[0].inputs, vec![3, 4, 5, 6]);
}

#[test]
fn disabled_strategy_runs_no_background_task() {
    let s = stcs(&[("enabled", "false")]);
    assert_eq!(s.next_task(&flushes(1..9, MIB), NOW_MS, GC_BEFORE), None);
    assert_eq!(s.major_tasks(&flushes(1..3, MIB)).len(), 1);
}

/// The `002` failure: one old 100 GiB SSTable, half droppable tombstones, newer flushes beside it.
pub(crate) fn huge_tombstoned_table() -> Vec<SstableInfo> {
    let day_ago = NOW_MS - 2 * super::util::DAY_MS;
    let huge = SstableInfo {
        droppable_tombstones: 0.5,
        created_at_ms: day_ago,
        min_timestamp: (day_ago - 30 * super::util::DAY_MS) * 1000,
        max_timestamp: day_ago * 1000,
        key_count: 50_000_000,
        level: 2,
        ..sst(1, 100 * GIB)
    };
    vec![huge, sst(2, 80 * MIB), sst(3, 75 * MIB), sst(4, 5 * GIB)]
}

#[test]
fn huge_sstable_full_of_tombstones_gets_a_tombstone_task_by_default() {
    let task = stcs(&[])
        .next_task(&huge_tombstoned_table(), NOW_MS, GC_BEFORE)
        .expect("a tombstone task");
    assert_eq!((task.inputs, task.kind), (vec![1], TaskKind::Tombstone));
}

#[test]
fn tombstone_rules_respect_threshold_interval_and_older_overlaps() {
    let mut table = huge_tombstoned_table();
    let s = stcs(&[]);
    table[0].droppable_tombstones = 0.2;
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE),
        None,
        "ratio must exceed 0.2"
    );
    table[0].droppable_tombstones = 0.5;
    table[0].created_at_ms = NOW_MS - 3_600_000;
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE),
        None,
        "younger than tombstone_compaction_interval"
    );
    let short = stcs(&[("tombstone_compaction_interval", "600")]);
    assert!(short.next_task(&table, NOW_MS, GC_BEFORE).is_some());
    // An SSTable holding older data over the whole range blocks the purge, unless unchecked.
    let mut blocked = huge_tombstoned_table();
    blocked[3].min_timestamp = 0;
    assert_eq!(s.next_task(&blocked, NOW_MS, GC_BEFORE), None);
    let unchecked = stcs(&[("unchecked_tombstone_compaction", "true")]);
    assert_eq!(
        unchecked
            .next_task(&blocked, NOW_MS, GC_BEFORE)
            .map(|t| t.kind),
        Some(TaskKind::Tombstone)
    );
    // An older SSTable covering only a quarter of the range leaves enough to purge.
    blocked[3].max_token = i64::MIN / 2;
    assert_eq!(
        s.next_task(&blocked, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![1])
    );
}

#[test]
fn only_purge_repaired_tombstones_skips_unrepaired() {
    let mut table = huge_tombstoned_table();
    for info in &mut table {
        info.repaired = false;
    }
    for on in [
        stcs(&[("only_purge_repaired_tombstones", "true")]),
        stcs(&[]),
    ] {
        assert_eq!(on.next_task(&table, NOW_MS, GC_BEFORE), None);
    }
    let off = stcs(&[("only_purge_repaired_tombstones", "false")]);
    assert!(off.next_task(&table, NOW_MS, GC_BEFORE).is_some());
    table[0].repaired = true;
    let on = stcs(&[("only_purge_repaired_tombstones", "true")]);
    assert!(on.next_task(&table, NOW_MS, GC_BEFORE).is_some());
}

#[test]
fn repaired_unrepaired_and_pending_sstables_fall_in_separate_groups() {
    let session = uuid::Uuid::from_u128(9);
    let mut table: Vec<SstableInfo> = (1..=6).map(|g| sst(g, MIB)).collect();
    table[1].repaired = false;
    table[3].repaired = false;
    table[4].pending_repair = Some(session);
    let groups: Vec<Vec<u64>> = crate::compaction::repair_groups(&table)
        .iter()
        .map(|g| g.iter().map(|s| s.generation).collect())
        .collect();
    assert_eq!(groups, vec![vec![5], vec![1, 3, 6], vec![2, 4]]);
}

#[test]
fn every_default_strategy_compacts_the_huge_tombstoned_sstable() {
    for class in [
        "SizeTieredCompactionStrategy",
        "LeveledCompactionStrategy",
        "TimeWindowCompactionStrategy",
        "UnifiedCompactionStrategy",
    ] {
        let strategy = from_options(&opts(&[("class", class)])).expect("valid");
        let task = strategy.next_task(&huge_tombstoned_table(), NOW_MS, GC_BEFORE);
        let task = task.unwrap_or_else(|| panic!("{class} left the huge SSTable alone"));
        assert!(task.inputs.contains(&1), "{class}: {task:?}");
        // LCS merges it into L3 by size (its level is over target); the others purge it alone.
        let expected = if class.starts_with("Leveled") {
            TaskKind::Normal
        } else {
            TaskKind::Tombstone
        };
        assert_eq!(task.kind, expected, "{class}");
    }
}
