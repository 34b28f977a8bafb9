//! Leveled selection: L0 promotion, level scores, round-robin, L0 size-tiering, tombstones.

use super::util::{opts, ranged, sst, GC_BEFORE, MIB, NOW_MS};
use crate::compaction::{CompactionStrategy, Leveled, SstableInfo, TaskKind};

fn lcs(pairs: &[(&str, &str)]) -> Leveled {
    let mut all = vec![("class", "LeveledCompactionStrategy")];
    all.extend_from_slice(pairs);
    Leveled::from_options(&opts(&all)).expect("valid options")
}

/// `n` non-overlapping SSTables of `size` on `level`, splitting the ring evenly.
fn run(first_gen: u64, n: u64, size: u64, level: u32) -> Vec<SstableInfo> {
    let width = (u64::MAX / n) as i128;
    (0..n)
        .map(|i| {
            let lo = (i64::MIN as i128 + width * i as i128) as i64;
            let hi = (i64::MIN as i128 + width * (i as i128 + 1) - 1) as i64;
            SstableInfo {
                level,
                created_at_ms: NOW_MS - 1_000_000 + i as i64,
                ..ranged(first_gen + i, size, lo, hi)
            }
        })
        .collect()
}

#[test]
fn small_l0_compactions_stay_in_l0_and_large_ones_go_to_l1() {
    let s = lcs(&[]);
    let two = vec![sst(1, 10 * MIB), sst(2, 10 * MIB)];
    let task = s.next_task(&two, NOW_MS, GC_BEFORE).expect("L0 task");
    assert_eq!(
        (
            task.inputs.clone(),
            task.output_level,
            task.max_output_bytes
        ),
        (vec![1, 2], 0, Some(160 * MIB))
    );
    let four: Vec<SstableInfo> = (1..=4).map(|g| sst(g, 50 * MIB)).collect();
    let task = s.next_task(&four, NOW_MS, GC_BEFORE).expect("L0 to L1");
    assert_eq!((task.inputs, task.output_level), (vec![1, 2, 3, 4], 1));
    assert_eq!(s.next_task(&[sst(1, MIB)], NOW_MS, GC_BEFORE), None);
}

#[test]
fn l0_promotion_takes_the_overlapping_l1_sstables() {
    let s = lcs(&[]);
    let mut table = run(10, 4, 100 * MIB, 1);
    table.push(ranged(1, 100 * MIB, i64::MIN, -10));
    table.push(ranged(2, 100 * MIB, i64::MIN / 2, -20));
    let task = s.next_task(&table, NOW_MS, GC_BEFORE).expect("task");
    assert_eq!((task.inputs, task.output_level), (vec![1, 2, 10, 11], 1));
}

#[test]
fn level_cascade_picks_the_highest_level_over_target() {
    let s = lcs(&[]);
    // L1 target 1600 MiB: 12 × 160 MiB is over it; L2 (16000 MiB) holds 20 × 160 MiB, under.
    let mut table = run(100, 12, 160 * MIB, 1);
    table.extend(run(200, 20, 160 * MIB, 2));
    let task = s.next_task(&table, NOW_MS, GC_BEFORE).expect("L1 to L2");
    assert_eq!(task.output_level, 2);
    assert_eq!(
        task.inputs[0], 100,
        "no previous compaction: start at the first token"
    );
    assert!(
        task.inputs[1..].iter().all(|g| (200..220).contains(g)),
        "{task:?}"
    );
    assert!(s.pending_tasks(&table) >= 2);
    // L2 over its target too: the higher level goes first.
    table.extend(run(300, 110, 160 * MIB, 2).into_iter().map(|mut x| {
        x.generation += 1000;
        x
    }));
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE)
            .map(|t| t.output_level),
        Some(3)
    );
}

#[test]
fn round_robin_resumes_after_the_last_compacted_key() {
    let s = lcs(&[]);
    let mut table = run(100, 12, 160 * MIB, 1);
    let mut l2 = run(200, 20, 160 * MIB, 2);
    // The newest L2 SSTable (the last compaction's output) starts inside L1's third SSTable.
    l2[5].created_at_ms = NOW_MS;
    table.extend(l2);
    let task = s.next_task(&table, NOW_MS, GC_BEFORE).expect("task");
    assert_eq!(task.inputs[0], 103, "{task:?}");
}

#[test]
fn busy_overlaps_move_to_the_next_candidate() {
    let s = lcs(&[]);
    let mut table = run(100, 12, 160 * MIB, 1);
    let mut l2 = run(200, 12, 160 * MIB, 2);
    l2[0].being_compacted = true;
    table.extend(l2);
    let task = s.next_task(&table, NOW_MS, GC_BEFORE).expect("task");
    assert!(
        !task.inputs.contains(&200) && !task.inputs.contains(&100),
        "{task:?}"
    );
}

#[test]
fn l0_over_32_sstables_is_size_tiered_first() {
    let s = lcs(&[]);
    let mut table: Vec<SstableInfo> = (1..=33).map(|g| sst(g, 10 * MIB)).collect();
    table.extend(run(100, 12, 160 * MIB, 1));
    let task = s.next_task(&table, NOW_MS, GC_BEFORE).expect("task");
    assert_eq!(
        (task.output_level, task.max_output_bytes, task.inputs.len()),
        (0, None, 32)
    );
    // L1: ceil((1920 - 1601.6) / 160) = 2, plus 33 / 32 L0 size-tiered rounds.
    assert_eq!(s.pending_tasks(&table), 3);
}

#[test]
fn single_sstable_uplevel_moves_without_rewriting() {
    let s = lcs(&[("single_sstable_uplevel", "true")]);
    let table = run(100, 11, 160 * MIB, 1);
    let task = s.next_task(&table, NOW_MS, GC_BEFORE).expect("task");
    assert_eq!(
        (task.inputs.len(), task.output_level, task.kind),
        (1, 2, TaskKind::Uplevel)
    );
    assert_eq!(
        lcs(&[])
            .next_task(&table, NOW_MS, GC_BEFORE)
            .map(|t| t.kind),
        Some(TaskKind::Normal)
    );
}

#[test]
fn tombstone_task_keeps_the_level() {
    let s = lcs(&[]);
    let mut table = run(100, 5, 160 * MIB, 3);
    table[2].droppable_tombstones = 0.6;
    table[2].created_at_ms = NOW_MS - 2 * super::util::DAY_MS;
    table[2].max_timestamp = (NOW_MS - 2 * super::util::DAY_MS) * 1000;
    table[2].min_timestamp = table[2].max_timestamp;
    let task = s
        .next_task(&table, NOW_MS, GC_BEFORE)
        .expect("tombstone task");
    assert_eq!(
        (task.inputs, task.output_level, task.kind),
        (vec![102], 3, TaskKind::Tombstone)
    );
}

#[test]
fn major_compaction_writes_leveled_outputs() {
    let tasks = lcs(&[]).major_tasks(&run(1, 5, 100 * MIB, 1));
    assert_eq!(tasks.len(), 1);
    assert_eq!(
        (
            tasks[0].output_level,
            tasks[0].max_output_bytes,
            tasks[0].kind
        ),
        (1, Some(160 * MIB), TaskKind::Major)
    );
}
