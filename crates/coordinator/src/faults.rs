//! Bugs a simulation switches on to show that its checks catch them (feature `sim-faults`,
//! which only the whole-cluster simulation's tests turn on; every switch is off until set).
use std::sync::atomic::{AtomicBool, Ordering};

use crate::responses::Requirement;

static ACK_AFTER_ONE: AtomicBool = AtomicBool::new(false);

/// While on, every write is acknowledged once one replica answers, whatever its level.
pub fn acknowledge_writes_after_one_replica(on: bool) {
    ACK_AFTER_ONE.store(on, Ordering::SeqCst);
}

/// A write's requirement, weakened while the bug is on.
pub(crate) fn write_requirement(requirement: Requirement) -> Requirement {
    if ACK_AFTER_ONE.load(Ordering::SeqCst) {
        return Requirement::Total(1);
    }
    requirement
}
