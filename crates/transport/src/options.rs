//! Decoding of `<query_parameters>` (QUERY/EXECUTE) and of bound-value lists (spec §4.1.4).
use crate::wire::{DecodeError, DecodeResult, Reader};
use types::request::{BoundValue, QueryOptions, Values};

pub const VALUES: u32 = 0x01;
pub const SKIP_METADATA: u32 = 0x02;
pub const PAGE_SIZE: u32 = 0x04;
pub const PAGING_STATE: u32 = 0x08;
pub const SERIAL_CONSISTENCY: u32 = 0x10;
pub const TIMESTAMP: u32 = 0x20;
pub const NAMED_VALUES: u32 = 0x40;
pub const KEYSPACE: u32 = 0x80;
pub const NOW_IN_SECONDS: u32 = 0x100;

/// Query flags are a [byte] before v5 and an [int] from v5 on.
pub fn read_flags(r: &mut Reader, version: u8) -> DecodeResult<u32> {
    if version >= 5 {
        Ok(r.int()? as u32)
    } else {
        // 0x80 and up only mean something from v5 on.
        Ok(u32::from(r.byte()? & 0x7f))
    }
}

/// `<n>[short]` followed by n `[value]`s.
pub fn read_positional(r: &mut Reader, version: u8) -> DecodeResult<Vec<BoundValue>> {
    let n = r.short()?;
    (0..n).map(|_| r.value(version)).collect()
}

fn read_named(r: &mut Reader, version: u8) -> DecodeResult<Vec<(String, BoundValue)>> {
    let n = r.short()?;
    (0..n)
        .map(|_| Ok((r.string()?, r.value(version)?)))
        .collect()
}

fn read_values(r: &mut Reader, version: u8, flags: u32) -> DecodeResult<Values> {
    if flags & VALUES == 0 {
        return Ok(Values::None);
    }
    if flags & NAMED_VALUES != 0 {
        Ok(Values::Named(read_named(r, version)?))
    } else {
        Ok(Values::Positional(read_positional(r, version)?))
    }
}

/// Reads `<query_parameters>`.
pub fn read_query_options(r: &mut Reader, version: u8) -> DecodeResult<QueryOptions> {
    let consistency = r.consistency()?;
    let flags = read_flags(r, version)?;
    let values = read_values(r, version, flags)?;
    let page_size = if flags & PAGE_SIZE != 0 {
        Some(r.int()?)
    } else {
        None
    };
    let paging_state = if flags & PAGING_STATE != 0 {
        r.bytes()?
    } else {
        None
    };
    let serial_consistency = optional(flags & SERIAL_CONSISTENCY, || r.consistency())?;
    let timestamp = optional(flags & TIMESTAMP, || r.long())?;
    let keyspace = optional(flags & KEYSPACE, || r.string())?;
    let now_in_seconds = optional(flags & NOW_IN_SECONDS, || r.int())?;
    Ok(QueryOptions {
        consistency,
        values,
        skip_metadata: flags & SKIP_METADATA != 0,
        page_size: page_size.filter(|n| *n > 0),
        paging_state,
        serial_consistency,
        timestamp,
        keyspace,
        now_in_seconds,
    })
}

/// Runs `read` when `flag` is non-zero.
pub fn optional<T>(
    flag: u32,
    read: impl FnOnce() -> Result<T, DecodeError>,
) -> DecodeResult<Option<T>> {
    if flag != 0 {
        read().map(Some)
    } else {
        Ok(None)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use bytes::{BufMut, Bytes, BytesMut};
    use types::Consistency;

    /// Test-side encoder for `<query_parameters>`, mirroring what drivers send.
    pub fn encode(o: &QueryOptions, version: u8) -> BytesMut {
        let mut out = BytesMut::new();
        out.put_u16(o.consistency as u16);
        let mut flags = 0u32;
        let mut set = |cond: bool, f: u32| flags |= if cond { f } else { 0 };
        set(o.values != Values::None, VALUES);
        set(matches!(o.values, Values::Named(_)), NAMED_VALUES);
        set(o.skip_metadata, SKIP_METADATA);
        set(o.page_size.is_some(), PAGE_SIZE);
        set(o.paging_state.is_some(), PAGING_STATE);
        set(o.serial_consistency.is_some(), SERIAL_CONSISTENCY);
        set(o.timestamp.is_some(), TIMESTAMP);
        set(o.keyspace.is_some(), KEYSPACE);
        set(o.now_in_seconds.is_some(), NOW_IN_SECONDS);
        if version >= 5 {
            out.put_u32(flags);
        } else {
            out.put_u8(flags as u8);
        }
        match &o.values {
            Values::None => {}
            Values::Positional(vs) => put_values(&mut out, vs.iter().map(|v| (None, v))),
            Values::Named(vs) => put_values(&mut out, vs.iter().map(|(n, v)| (Some(n), v))),
        }
        if let Some(n) = o.page_size {
            out.put_i32(n);
        }
        if let Some(p) = &o.paging_state {
            out.put_i32(p.len() as i32);
            out.put_slice(p);
        }
        if let Some(c) = o.serial_consistency {
            out.put_u16(c as u16);
        }
        if let Some(t) = o.timestamp {
            out.put_i64(t);
        }
        if let Some(k) = &o.keyspace {
            crate::wire::put_string(&mut out, k);
        }
        if let Some(n) = o.now_in_seconds {
            out.put_i32(n);
        }
        out
    }

    pub fn put_values<'a>(
        out: &mut BytesMut,
        values: impl ExactSizeIterator<Item = (Option<&'a String>, &'a BoundValue)>,
    ) {
        out.put_u16(values.len() as u16);
        for (name, v) in values {
            if let Some(name) = name {
                crate::wire::put_string(out, name);
            }
            put_value(out, v);
        }
    }

    pub fn put_value(out: &mut BytesMut, v: &BoundValue) {
        match v {
            BoundValue::Set(b) => {
                out.put_i32(b.len() as i32);
                out.put_slice(b);
            }
            BoundValue::Null => out.put_i32(-1),
            BoundValue::Unset => out.put_i32(-2),
        }
    }

    fn round_trip(o: &QueryOptions, version: u8) -> QueryOptions {
        let mut r = Reader::new(encode(o, version).freeze());
        let back = read_query_options(&mut r, version).unwrap();
        assert_eq!(r.remaining(), 0);
        back
    }

    fn full() -> QueryOptions {
        QueryOptions {
            consistency: Consistency::LocalQuorum,
            values: Values::Positional(vec![
                BoundValue::Set(Bytes::from_static(b"\x00\x01")),
                BoundValue::Null,
                BoundValue::Unset,
            ]),
            skip_metadata: true,
            page_size: Some(100),
            paging_state: Some(Bytes::from_static(b"state")),
            serial_consistency: Some(Consistency::LocalSerial),
            timestamp: Some(1_700_000_000_000_000),
            keyspace: Some("ks".into()),
            now_in_seconds: Some(42),
        }
    }

    #[test]
    fn every_flag_round_trips_in_v5() {
        assert_eq!(round_trip(&full(), 5), full());
    }

    #[test]
    fn v4_has_no_keyspace_or_now() {
        let o = QueryOptions {
            keyspace: None,
            now_in_seconds: None,
            ..full()
        };
        assert_eq!(round_trip(&o, 4), o);
    }

    #[test]
    fn named_values_and_defaults() {
        let o = QueryOptions {
            values: Values::Named(vec![(
                "k".into(),
                BoundValue::Set(Bytes::from_static(b"v")),
            )]),
            ..QueryOptions::default()
        };
        assert_eq!(round_trip(&o, 4), o);
        assert_eq!(
            round_trip(&QueryOptions::default(), 5),
            QueryOptions::default()
        );
    }

    #[test]
    fn non_positive_page_size_means_no_paging() {
        let o = QueryOptions {
            page_size: Some(-1),
            ..QueryOptions::default()
        };
        assert_eq!(round_trip(&o, 4).page_size, None);
    }

    #[test]
    fn truncated_options_fail() {
        let bytes = encode(&full(), 5);
        for cut in 0..bytes.len() {
            let mut r = Reader::new(bytes.clone().freeze().slice(..cut));
            assert!(read_query_options(&mut r, 5).is_err(), "cut at {cut}");
        }
    }
}
