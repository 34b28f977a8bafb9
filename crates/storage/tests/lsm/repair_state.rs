//! Incremental repair's storage side: the unrepaired data of some ranges marked pending for a
//! session (an SSTable spanning other ranges split by anticompaction), validation reading one
//! repair state alone, and the session's data promoted or returned to unrepaired.

use super::common::*;
use mutation::{KeyRange, TokenRange};
use storage::{RepairMark, RepairScope, Storage, TaskKind};
use uuid::Uuid;

const PARTITIONS: u64 = 200;

/// The upper half of the ring.
const UPPER_HALF: [TokenRange; 1] = [(0, i64::MIN)];

async fn write(storage: &Storage, range: std::ops::Range<u64>) {
    for n in range {
        storage
            .apply(upsert(n, 0, 1, &format!("v{n}")))
            .await
            .expect("apply");
    }
}

/// The partitions validation reads in `scope`.
fn validated(storage: &Storage, scope: RepairScope) -> usize {
    storage
        .validation_page(TABLE, &KeyRange::all(), scope, now(), usize::MAX)
        .expect("validation page")
        .partitions
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_marks_its_ranges_pending_then_promotes_or_releases_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config(dir.path());
    let storage = open_quiet(&config);
    write(&storage, 0..PARTITIONS).await;
    let upper = (0..PARTITIONS).filter(|n| key(*n).token > 0).count();
    let session = Uuid::from_u128(0x5e55);
    let report = storage
        .mark_pending(TABLE, &UPPER_HALF, session)
        .expect("mark pending");
    assert_eq!((report.marked, report.split), (0, 1), "{report:?}");
    assert!(storage
        .compaction_history()
        .iter()
        .any(|r| r.kind == TaskKind::Anticompaction));
    assert_eq!(validated(&storage, RepairScope::Pending(session)), upper);
    assert_eq!(
        validated(&storage, RepairScope::Unrepaired),
        PARTITIONS as usize - upper
    );
    assert_eq!(validated(&storage, RepairScope::Repaired), 0);
    assert_eq!(validated(&storage, RepairScope::All), PARTITIONS as usize);
    assert_eq!(
        storage.pending_sessions(TABLE).expect("sessions"),
        [session]
    );

    // a session over ranges already pending finds nothing unrepaired there
    let other = Uuid::from_u128(0x07e5);
    let again = storage
        .mark_pending(TABLE, &UPPER_HALF, other)
        .expect("mark pending");
    assert_eq!((again.marked, again.split), (0, 0));

    let promoted = storage
        .finish_pending(TABLE, session, RepairMark::repaired(1_000))
        .expect("promote");
    assert_eq!(promoted, 1);
    assert_eq!(validated(&storage, RepairScope::Repaired), upper);
    let usage = storage.table_usage(TABLE).expect("usage");
    assert!(usage.percent_repaired() > 0.0 && usage.percent_repaired() < 100.0);
    assert_eq!(usage.pending_repair_bytes, 0);

    // state survives a restart
    storage.shutdown().await.expect("shutdown");
    drop(storage);
    let storage = open_quiet(&config);
    assert_eq!(validated(&storage, RepairScope::Repaired), upper);

    // an SSTable wholly inside the ranges is marked as it is; a failed session releases it
    write(&storage, 1000..1100).await;
    let session = Uuid::from_u128(0xfa11);
    let all = storage
        .mark_pending(TABLE, &[(i64::MIN, i64::MIN)], session)
        .expect("mark pending");
    assert_eq!((all.marked, all.split), (2, 0), "{all:?}");
    assert_eq!(validated(&storage, RepairScope::Unrepaired), 0);
    storage
        .finish_pending(TABLE, session, RepairMark::UNREPAIRED)
        .expect("release");
    assert_eq!(
        validated(&storage, RepairScope::Unrepaired),
        PARTITIONS as usize - upper + 100
    );
    assert!(storage
        .pending_sessions(TABLE)
        .expect("sessions")
        .is_empty());
}
