//! The process's own CPU time (`getrusage(RUSAGE_SELF)`), for the client CPU per operation.
#![allow(unsafe_code)] // getrusage(2) for the client's own CPU time

use std::time::Duration;

use crate::report::CpuUse;

fn timeval(tv: libc::timeval) -> Duration {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u64::try_from(tv.tv_usec).unwrap_or(0);
    Duration::from_secs(secs) + Duration::from_micros(micros)
}

/// User and system CPU this process has used so far.
pub fn now() -> CpuUse {
    // SAFETY: getrusage only writes into the zeroed struct we pass it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc != 0 {
        return CpuUse {
            user: Duration::ZERO,
            system: Duration::ZERO,
        };
    }
    CpuUse {
        user: timeval(usage.ru_utime),
        system: timeval(usage.ru_stime),
    }
}

/// CPU used between two readings.
pub fn since(start: CpuUse) -> CpuUse {
    let end = now();
    CpuUse {
        user: end.user.saturating_sub(start.user),
        system: end.system.saturating_sub(start.system),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_time_grows_with_work() {
        let start = super::now();
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let used = super::since(start);
        assert!(used.user + used.system > std::time::Duration::ZERO);
    }
}
