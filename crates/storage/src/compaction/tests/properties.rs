//! Property tests over every strategy: tasks name only known, idle SSTables, once each.

use proptest::prelude::*;

use super::util::{opts, GC_BEFORE, NOW_MS};
use crate::compaction::{from_options, SstableInfo, TaskKind};

fn arb_sstable() -> impl Strategy<Value = SstableInfo> {
    (
        (
            1u64..64,
            1u64..(4 << 30),
            0u32..5,
            any::<bool>(),
            0.0f64..1.0,
        ),
        (
            any::<i64>(),
            any::<i64>(),
            0i64..(40 * 86_400_000),
            any::<bool>(),
            0i64..3,
        ),
    )
        .prop_map(
            |((generation, size, level, busy, droppable), (a, b, age, repaired, expiry))| {
                let ts = (NOW_MS - age) * 1000;
                SstableInfo {
                    generation,
                    size_bytes: size,
                    min_timestamp: ts - 1_000_000,
                    max_timestamp: ts,
                    max_local_deletion_time: [i64::MAX, GC_BEFORE - 10, GC_BEFORE + 10]
                        [expiry as usize],
                    min_token: a.min(b),
                    max_token: a.max(b),
                    level,
                    droppable_tombstones: droppable,
                    created_at_ms: NOW_MS - age,
                    key_count: 100,
                    repaired,
                    pending_repair: None,
                    being_compacted: busy,
                }
            },
        )
}

fn arb_table() -> impl Strategy<Value = Vec<SstableInfo>> {
    prop::collection::vec(arb_sstable(), 0..60).prop_map(|mut v| {
        v.sort_by_key(|s| s.generation);
        v.dedup_by_key(|s| s.generation);
        v
    })
}

const CLASSES: &[&str] = &[
    "SizeTieredCompactionStrategy",
    "LeveledCompactionStrategy",
    "TimeWindowCompactionStrategy",
    "UnifiedCompactionStrategy",
];

proptest! {
    #[test]
    fn tasks_name_known_idle_sstables_once(table in arb_table(), class in 0usize..4) {
        let strategy = from_options(&opts(&[("class", CLASSES[class])])).map_err(TestCaseError::fail)?;
        let mut tasks: Vec<_> = strategy.next_task(&table, NOW_MS, GC_BEFORE).into_iter().collect();
        tasks.extend(strategy.major_tasks(&table));
        let mut seen_major = std::collections::BTreeSet::new();
        for task in &tasks {
            prop_assert!(!task.inputs.is_empty());
            prop_assert!(task.inputs.windows(2).all(|w| w[0] < w[1]), "duplicates in {:?}", task.inputs);
            for g in &task.inputs {
                let s = table.iter().find(|s| s.generation == *g);
                prop_assert!(s.is_some_and(|s| !s.being_compacted), "unknown or busy {g}");
                if task.kind == TaskKind::Major {
                    prop_assert!(seen_major.insert(*g), "{g} in two major tasks");
                }
            }
            prop_assert!(task.fully_expired.iter().all(|g| task.inputs.contains(g)));
        }
        // Determinism: the same input gives the same answer.
        prop_assert_eq!(strategy.next_task(&table, NOW_MS, GC_BEFORE), strategy.next_task(&table, NOW_MS, GC_BEFORE));
        let _ = strategy.pending_tasks(&table);
    }
}
