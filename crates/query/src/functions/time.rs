//! Time functions (Cassandra's `TimeFcts` and `UuidFcts`): the current time in every form,
//! conversions between timeuuid, timestamp, date and Unix milliseconds, and the smallest and
//! largest timeuuid of a timestamp.
use types::value::calendar::{DATE_EPOCH, MILLIS_PER_DAY};
use types::{CqlType, NativeType, Value};
use uuid::Uuid;

use super::{Env, Function, Registry};
use crate::exec;

fn native(n: NativeType) -> CqlType {
    CqlType::Native(n)
}

/// The value of a function of the moment of execution.
type NowFn = fn(&Env) -> Value;

pub fn register(r: &mut Registry) {
    use NativeType as N;
    let now: [(&str, NativeType, NowFn); 6] = [
        ("now", N::Timeuuid, |e| {
            Value::Timeuuid(Uuid::from_bytes(exec::timeuuid(e.now_micros)))
        }),
        ("currenttimeuuid", N::Timeuuid, |e| {
            Value::Timeuuid(Uuid::from_bytes(exec::timeuuid(e.now_micros)))
        }),
        ("uuid", N::Uuid, |_| Value::Uuid(Uuid::new_v4())),
        ("currenttimestamp", N::Timestamp, |e| {
            Value::Timestamp(e.now_micros / 1000)
        }),
        ("currentdate", N::Date, |e| {
            date_of_millis(e.now_micros / 1000)
        }),
        ("currenttime", N::Time, |e| {
            Value::Time((e.now_micros / 1000).rem_euclid(MILLIS_PER_DAY) * 1_000_000)
        }),
    ];
    for (name, ty, make) in now {
        r.add(
            Function::scalar(name, vec![], native(ty), move |_, env| Ok(Some(make(env)))).impure(),
        );
    }
    for (name, bound) in [("mintimeuuid", Bound::Min), ("maxtimeuuid", Bound::Max)] {
        r.add(Function::scalar(
            name,
            vec![native(N::Timestamp)],
            native(N::Timeuuid),
            move |args, _| Ok(millis(args).map(|ms| Value::Timeuuid(bound_uuid(ms, bound)))),
        ));
    }
    let conversions: [(&str, NativeType, NativeType); 7] = [
        ("todate", N::Timeuuid, N::Date),
        ("todate", N::Timestamp, N::Date),
        ("totimestamp", N::Timeuuid, N::Timestamp),
        ("totimestamp", N::Date, N::Timestamp),
        ("tounixtimestamp", N::Timeuuid, N::Bigint),
        ("tounixtimestamp", N::Timestamp, N::Bigint),
        ("tounixtimestamp", N::Date, N::Bigint),
    ];
    for (name, from, to) in conversions {
        r.add(Function::scalar(
            name,
            vec![native(from)],
            native(to),
            move |args, _| Ok(millis(args).map(|ms| as_time(ms, to))),
        ));
    }
}

/// The one argument as milliseconds since the epoch (timestamp, date or timeuuid).
fn millis(args: &[Option<Value>]) -> Option<i64> {
    match args.first()?.as_ref()? {
        Value::Timestamp(ms) => Some(*ms),
        Value::Date(d) => Some((i64::from(*d) - DATE_EPOCH) * MILLIS_PER_DAY),
        Value::Timeuuid(u) | Value::Uuid(u) => Some(uuid_millis(u)),
        _ => None,
    }
}

/// A timeuuid's time as Unix milliseconds.
pub fn uuid_millis(u: &Uuid) -> i64 {
    let b = u.as_bytes();
    let low = u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let mid = u64::from(u16::from_be_bytes([b[4], b[5]]));
    let high = u64::from(u16::from_be_bytes([b[6], b[7]]) & 0x0fff);
    let ticks = (high << 48) | (mid << 32) | low;
    (ticks as i64 - GREGORIAN_OFFSET) / 10_000
}

const GREGORIAN_OFFSET: i64 = 0x01B2_1DD2_1381_4000;

/// The smallest timeuuid of a millisecond.
pub fn min_timeuuid(ms: i64) -> Uuid {
    bound_uuid(ms, Bound::Min)
}

/// The date of a moment, its days counted towards zero as Cassandra's `toDate` counts them
/// (a millisecond before the epoch is 1970-01-01).
pub fn date_of_millis(ms: i64) -> Value {
    Value::Date((ms / MILLIS_PER_DAY + DATE_EPOCH) as u32)
}

fn as_time(ms: i64, to: NativeType) -> Value {
    match to {
        NativeType::Date => date_of_millis(ms),
        NativeType::Timestamp => Value::Timestamp(ms),
        _ => Value::Bigint(ms),
    }
}

#[derive(Clone, Copy)]
enum Bound {
    Min,
    Max,
}

/// The smallest or largest timeuuid of a millisecond (Cassandra's `TimeUUID.minAtUnixMillis`
/// and `maxAtUnixMillis`: clock and node bytes 0x80… or 0x7f…).
fn bound_uuid(ms: i64, bound: Bound) -> Uuid {
    let extra = match bound {
        Bound::Min => 0,
        Bound::Max => 9_999,
    };
    let ticks = (ms * 10_000 + GREGORIAN_OFFSET + extra) as u64;
    let mut out = [0u8; 16];
    out[0..4].copy_from_slice(&((ticks & 0xffff_ffff) as u32).to_be_bytes());
    out[4..6].copy_from_slice(&(((ticks >> 32) & 0xffff) as u16).to_be_bytes());
    out[6..8].copy_from_slice(&((((ticks >> 48) & 0x0fff) as u16) | 0x1000).to_be_bytes());
    let fill = match bound {
        Bound::Min => 0x80,
        Bound::Max => 0x7f,
    };
    out[8..].fill(fill);
    Uuid::from_bytes(out)
}
