//! Time-window selection: windows over time, the newest window size-tiered, old windows merged,
//! expired SSTables dropped.

use super::util::{opts, sst, GC_BEFORE, MIB, NOW_MS};
use crate::compaction::{fully_expired, CompactionStrategy, SstableInfo, TaskKind, TimeWindow};

const HOUR_US: i64 = 3_600_000_000;

fn twcs(pairs: &[(&str, &str)]) -> TimeWindow {
    let mut all = vec![("class", "TimeWindowCompactionStrategy")];
    all.extend_from_slice(pairs);
    TimeWindow::from_options(&opts(&all)).expect("valid options")
}

/// An SSTable whose data was written `hours_ago` hours before `NOW_MS`.
fn written(generation: u64, hours_ago: i64, size: u64) -> SstableInfo {
    let ts = NOW_MS * 1000 - hours_ago * HOUR_US;
    SstableInfo {
        min_timestamp: ts - HOUR_US / 2,
        max_timestamp: ts,
        ..sst(generation, size)
    }
}

#[test]
fn newest_window_is_size_tiered_at_min_threshold() {
    let s = twcs(&[
        ("compaction_window_unit", "HOURS"),
        ("compaction_window_size", "6"),
    ]);
    // NOW_MS is midnight: one and two hours ago fall in the 18:00 window of the previous day.
    let mut table: Vec<SstableInfo> = (1..=3).map(|g| written(g, 1, 10 * MIB)).collect();
    assert_eq!(s.next_task(&table, NOW_MS, GC_BEFORE), None);
    table.push(written(4, 2, 10 * MIB));
    let task = s.next_task(&table, NOW_MS, GC_BEFORE).expect("task");
    assert_eq!(
        (task.inputs, task.kind),
        (vec![1, 2, 3, 4], TaskKind::Normal)
    );
    assert_eq!(s.pending_tasks(&table), 1);
}

#[test]
fn older_windows_merge_into_one_once_they_hold_two() {
    let s = twcs(&[
        ("compaction_window_unit", "HOURS"),
        ("compaction_window_size", "1"),
    ]);
    let mut table = vec![written(1, 5, 10 * MIB), written(2, 1, 10 * MIB)];
    assert_eq!(s.next_task(&table, NOW_MS, GC_BEFORE), None);
    table.push(written(3, 5, 300 * MIB));
    let task = s
        .next_task(&table, NOW_MS, GC_BEFORE)
        .expect("merge the old window");
    assert_eq!(task.inputs, vec![1, 3]);
    // Time passes: a newer window appears and the former newest becomes old.
    table.retain(|t| t.generation == 2);
    table.push(written(4, 1, 10 * MIB));
    table.push(written(5, 0, 10 * MIB));
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![2, 4])
    );
}

#[test]
fn default_windows_are_one_day() {
    let s = twcs(&[]);
    let table: Vec<SstableInfo> = [3, 5, 20, 23]
        .iter()
        .enumerate()
        .map(|(i, h)| written(i as u64 + 1, *h, MIB))
        .collect();
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![1, 2, 3, 4])
    );
    let split = twcs(&[
        ("compaction_window_unit", "MINUTES"),
        ("compaction_window_size", "60"),
    ]);
    assert_eq!(split.next_task(&table, NOW_MS, GC_BEFORE), None);
}

#[test]
fn timestamp_resolution_converts_to_windows() {
    let s = twcs(&[
        ("timestamp_resolution", "MILLISECONDS"),
        ("compaction_window_unit", "HOURS"),
    ]);
    let ms = |g, hours: i64| {
        let ts = NOW_MS - hours * 3_600_000;
        SstableInfo {
            min_timestamp: ts,
            max_timestamp: ts,
            ..sst(g, MIB)
        }
    };
    let table = vec![ms(1, 3), ms(2, 3), ms(3, 1)];
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![1, 2])
    );
}

#[test]
fn fully_expired_sstables_are_dropped() {
    let s = twcs(&[]);
    let old = |g| SstableInfo {
        max_local_deletion_time: GC_BEFORE - 1,
        ..written(g, 24 * 30, MIB)
    };
    let table = vec![old(1), written(2, 1, MIB)];
    assert_eq!(fully_expired(&table, GC_BEFORE), vec![1]);
    let task = s.next_task(&table, NOW_MS, GC_BEFORE).expect("drop");
    assert_eq!((task.inputs, task.fully_expired), (vec![1], vec![1]));
    // Older live data it might shadow keeps it.
    let mut shadowing = table.clone();
    shadowing.push(SstableInfo {
        min_timestamp: 0,
        ..written(3, 24 * 60, MIB)
    });
    assert!(fully_expired(&shadowing, GC_BEFORE).is_empty());
    let aggressive = twcs(&[("unsafe_aggressive_sstable_expiration", "true")]);
    assert_eq!(
        aggressive
            .next_task(&shadowing, NOW_MS, GC_BEFORE)
            .map(|t| t.fully_expired),
        Some(vec![1])
    );
}

#[test]
fn tombstone_task_takes_the_smallest_worthy_sstable() {
    let s = twcs(&[("unchecked_tombstone_compaction", "true")]);
    let tombstoned = |g, days: i64, size| SstableInfo {
        droppable_tombstones: 0.9,
        created_at_ms: NOW_MS - days * super::util::DAY_MS,
        ..written(g, 24 * days, size)
    };
    let table = vec![tombstoned(1, 3, 500 * MIB), tombstoned(2, 5, 100 * MIB)];
    let task = s
        .next_task(&table, NOW_MS, GC_BEFORE)
        .expect("tombstone task");
    assert_eq!((task.inputs, task.kind), (vec![2], TaskKind::Tombstone));
    let table = vec![tombstoned(1, 3, 50 * MIB), tombstoned(2, 5, 100 * MIB)];
    assert_eq!(
        s.next_task(&table, NOW_MS, GC_BEFORE).map(|t| t.inputs),
        Some(vec![1])
    );
    // With the overlap check only the older SSTable qualifies: the newer one's tombstones may
    // shadow the older one's data.
    let checked = twcs(&[]);
    assert_eq!(
        checked
            .next_task(&table, NOW_MS, GC_BEFORE)
            .map(|t| t.inputs),
        Some(vec![2])
    );
}
