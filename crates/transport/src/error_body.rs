//! Encoding of ERROR bodies (spec §9) with the extra fields each error code carries.
use crate::wire::{put_inetaddr, put_short_bytes, put_string, put_string_list};
use bytes::{BufMut, BytesMut};
use std::net::{IpAddr, Ipv4Addr};
use types::{Consistency, CqlError};

/// Writes `[int] code [string] message` and the code-specific fields.
///
/// Before v4 the failure codes do not exist; like Cassandra we send the matching timeout
/// (read/write failures) or Invalid (function failure) instead.
pub fn write_error(out: &mut BytesMut, version: u8, err: &CqlError) {
    if version < 4 {
        if let Some(downgraded) = downgrade_for_v3(err) {
            return write_error(out, version, &downgraded);
        }
    }
    if let (CqlError::CasWriteUnknown { .. }, true) = (err, version < 5) {
        return write_error(out, version, &downgrade_cas_write_unknown(err));
    }
    out.put_i32(err.code());
    put_string(out, &err.to_string());
    write_extras(out, version, err);
}

fn downgrade_for_v3(err: &CqlError) -> Option<CqlError> {
    Some(match err.clone() {
        CqlError::ReadFailure {
            message,
            consistency,
            received,
            block_for,
            data_present,
            ..
        } => CqlError::ReadTimeout {
            message,
            consistency,
            received,
            block_for,
            data_present,
        },
        CqlError::WriteFailure {
            message,
            consistency,
            received,
            block_for,
            write_type,
            ..
        } => CqlError::WriteTimeout {
            message,
            consistency,
            received,
            block_for,
            write_type,
        },
        CqlError::FunctionFailure { message, .. } => CqlError::Invalid(message),
        _ => return None,
    })
}

/// Before v5 a CAS whose result is unknown is a WriteTimeout of write type CAS.
fn downgrade_cas_write_unknown(err: &CqlError) -> CqlError {
    match err.clone() {
        CqlError::CasWriteUnknown {
            message,
            consistency,
            received,
            block_for,
        } => CqlError::WriteTimeout {
            message,
            consistency,
            received,
            block_for,
            write_type: "CAS".into(),
        },
        other => other,
    }
}

fn write_counts(out: &mut BytesMut, consistency: Consistency, received: i32, block_for: i32) {
    out.put_u16(consistency as u16);
    out.put_i32(received);
    out.put_i32(block_for);
}

/// v4 sends `<numfailures>`; v5 a `<reasonmap>` of endpoint → failure code: the `reasons`
/// known, then each remaining failure as the unspecified address with code UNKNOWN.
fn write_failures(out: &mut BytesMut, version: u8, failures: i32, reasons: &[(IpAddr, u16)]) {
    out.put_i32(failures);
    if version >= 5 {
        let unknown = (IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0x0000);
        let padding = usize::try_from(failures)
            .unwrap_or(0)
            .saturating_sub(reasons.len());
        for (addr, code) in reasons
            .iter()
            .copied()
            .chain(std::iter::repeat_n(unknown, padding))
        {
            put_inetaddr(out, addr);
            out.put_u16(code);
        }
    }
}

fn write_extras(out: &mut BytesMut, version: u8, err: &CqlError) {
    match err {
        CqlError::Unavailable {
            consistency,
            required,
            alive,
            ..
        } => write_counts(out, *consistency, *required, *alive),
        CqlError::WriteTimeout {
            consistency,
            received,
            block_for,
            write_type,
            ..
        } => {
            write_counts(out, *consistency, *received, *block_for);
            put_string(out, write_type);
            if version >= 5 && write_type == "CAS" {
                // <contentions>, unknown here.
                out.put_u16(0);
            }
        }
        CqlError::CasWriteTimeout {
            consistency,
            received,
            block_for,
            contentions,
            ..
        } => {
            write_counts(out, *consistency, *received, *block_for);
            put_string(out, "CAS");
            if version >= 5 {
                out.put_u16(*contentions);
            }
        }
        CqlError::ReadTimeout {
            consistency,
            received,
            block_for,
            data_present,
            ..
        } => {
            write_counts(out, *consistency, *received, *block_for);
            out.put_u8(u8::from(*data_present));
        }
        CqlError::CasWriteUnknown {
            consistency,
            received,
            block_for,
            ..
        } => write_counts(out, *consistency, *received, *block_for),
        CqlError::ReadFailure {
            consistency,
            received,
            block_for,
            failures,
            data_present,
            reasons,
            ..
        } => {
            write_counts(out, *consistency, *received, *block_for);
            write_failures(out, version, *failures, reasons);
            out.put_u8(u8::from(*data_present));
        }
        CqlError::WriteFailure {
            consistency,
            received,
            block_for,
            failures,
            write_type,
            reasons,
            ..
        } => {
            write_counts(out, *consistency, *received, *block_for);
            write_failures(out, version, *failures, reasons);
            put_string(out, write_type);
        }
        CqlError::FunctionFailure {
            keyspace,
            function,
            arg_types,
            ..
        } => {
            put_string(out, keyspace);
            put_string(out, function);
            put_string_list(out, arg_types);
        }
        CqlError::AlreadyExists {
            keyspace, table, ..
        } => {
            put_string(out, keyspace);
            put_string(out, table);
        }
        CqlError::Unprepared { id, .. } => put_short_bytes(out, id),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Reader;
    use bytes::Bytes;

    fn encode(version: u8, err: &CqlError) -> Reader {
        let mut out = BytesMut::new();
        write_error(&mut out, version, err);
        Reader::new(out.freeze())
    }

    fn head(r: &mut Reader) -> (i32, String) {
        (r.int().unwrap(), r.string().unwrap())
    }

    #[test]
    fn simple_errors() {
        let mut r = encode(4, &CqlError::Syntax("bad".into()));
        assert_eq!(head(&mut r), (0x2000, "bad".into()));
        assert_eq!(r.remaining(), 0);
    }

    #[test]
    fn unavailable_and_timeouts() {
        let un = CqlError::Unavailable {
            message: "m".into(),
            consistency: Consistency::Quorum,
            required: 2,
            alive: 1,
        };
        let mut r = encode(4, &un);
        assert_eq!(head(&mut r).0, 0x1000);
        assert_eq!(r.consistency().unwrap(), Consistency::Quorum);
        assert_eq!((r.int().unwrap(), r.int().unwrap()), (2, 1));
        let wt = CqlError::WriteTimeout {
            message: "m".into(),
            consistency: Consistency::Serial,
            received: 0,
            block_for: 1,
            write_type: "CAS".into(),
        };
        let mut r = encode(5, &wt);
        head(&mut r);
        r.consistency().unwrap();
        r.int().unwrap();
        r.int().unwrap();
        assert_eq!(r.string().unwrap(), "CAS");
        assert_eq!(r.short().unwrap(), 0, "v5 contentions");
        assert_eq!(r.remaining(), 0);
        let rt = CqlError::ReadTimeout {
            message: "m".into(),
            consistency: Consistency::One,
            received: 0,
            block_for: 1,
            data_present: true,
        };
        let mut r = encode(4, &rt);
        head(&mut r);
        r.consistency().unwrap();
        r.int().unwrap();
        r.int().unwrap();
        assert_eq!(r.byte().unwrap(), 1);
    }

    #[test]
    fn a_cas_write_timeout_carries_its_contentions_from_v5() {
        let timeout = CqlError::CasWriteTimeout {
            message: "CAS operation timed out - encountered contentions: 7".into(),
            consistency: Consistency::Serial,
            received: 1,
            block_for: 2,
            contentions: 7,
        };
        for version in [4, 5] {
            let mut r = encode(version, &timeout);
            assert_eq!(
                head(&mut r),
                (
                    0x1100,
                    "CAS operation timed out - encountered contentions: 7".into()
                )
            );
            assert_eq!(r.consistency().unwrap(), Consistency::Serial);
            assert_eq!((r.int().unwrap(), r.int().unwrap()), (1, 2));
            assert_eq!(r.string().unwrap(), "CAS");
            if version >= 5 {
                assert_eq!(r.short().unwrap(), 7, "v5 contentions");
            }
            assert_eq!(r.remaining(), 0, "v{version}");
        }
    }

    #[test]
    fn a_cas_of_unknown_result_is_its_own_error_from_v5_and_a_cas_write_timeout_before() {
        let unknown = CqlError::CasWriteUnknown {
            message: "CAS operation result is unknown - proposal accepted by 1 but not a quorum."
                .into(),
            consistency: Consistency::LocalSerial,
            received: 1,
            block_for: 2,
        };
        let mut r = encode(5, &unknown);
        assert_eq!(head(&mut r).0, 0x1700);
        assert_eq!(r.consistency().unwrap(), Consistency::LocalSerial);
        assert_eq!((r.int().unwrap(), r.int().unwrap()), (1, 2));
        assert_eq!(r.remaining(), 0);
        for version in [3, 4] {
            let mut r = encode(version, &unknown);
            let (code, message) = head(&mut r);
            assert_eq!(code, 0x1100);
            assert!(message.starts_with("CAS operation result is unknown"));
            r.consistency().unwrap();
            assert_eq!((r.int().unwrap(), r.int().unwrap()), (1, 2));
            assert_eq!(r.string().unwrap(), "CAS");
            assert_eq!(r.remaining(), 0);
        }
    }

    fn read_failure() -> CqlError {
        CqlError::ReadFailure {
            message: "m".into(),
            consistency: Consistency::One,
            received: 0,
            block_for: 1,
            failures: 2,
            data_present: false,
            reasons: vec![(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)), 0x0001)],
        }
    }

    #[test]
    fn failures_v4_count_v5_reason_map_v3_timeout() {
        let mut r = encode(4, &read_failure());
        assert_eq!(head(&mut r).0, 0x1300);
        r.consistency().unwrap();
        r.int().unwrap();
        r.int().unwrap();
        assert_eq!(r.int().unwrap(), 2);
        assert_eq!(r.byte().unwrap(), 0);
        assert_eq!(r.remaining(), 0);
        let mut r = encode(5, &read_failure());
        head(&mut r);
        r.consistency().unwrap();
        r.int().unwrap();
        r.int().unwrap();
        assert_eq!(r.int().unwrap(), 2);
        for (address, code) in [([127, 0, 0, 2], 1), ([0, 0, 0, 0], 0)] {
            assert_eq!(r.byte().unwrap(), 4);
            assert_eq!(r.take(4).unwrap().as_ref(), address);
            assert_eq!(r.short().unwrap(), code);
        }
        assert_eq!(r.byte().unwrap(), 0);
        assert_eq!(r.remaining(), 0);
        assert_eq!(head(&mut encode(3, &read_failure())).0, 0x1200);
    }

    fn write_failure() -> CqlError {
        CqlError::WriteFailure {
            message: "m".into(),
            consistency: Consistency::Quorum,
            received: 1,
            block_for: 2,
            failures: 1,
            write_type: "SIMPLE".into(),
            reasons: vec![("::1".parse().unwrap(), 0x0003)],
        }
    }

    /// The ERROR body's bytes after `[int] code [string] message`.
    fn extras(version: u8, err: &CqlError) -> Vec<u8> {
        let mut r = encode(version, err);
        head(&mut r);
        r.take(r.remaining()).unwrap().to_vec()
    }

    #[test]
    fn write_failure_bytes_per_version() {
        // v4: <cl><received><blockfor><numfailures><write_type>
        let mut v4 = vec![0, 4, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1];
        v4.extend_from_slice(&[0, 6]);
        v4.extend_from_slice(b"SIMPLE");
        assert_eq!(extras(4, &write_failure()), v4);
        // v5: <cl><received><blockfor><reasonmap><write_type>, the map an [int] count of
        // <inetaddr> (a byte length then the address) → [short] failure code.
        let mut v5 = vec![0, 4, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 1, 16];
        v5.extend_from_slice(&[0; 15]);
        v5.extend_from_slice(&[1, 0, 3, 0, 6]);
        v5.extend_from_slice(b"SIMPLE");
        assert_eq!(extras(5, &write_failure()), v5);
    }

    #[test]
    fn read_failure_bytes_per_version() {
        // v4: <cl><received><blockfor><numfailures><data_present>
        let v4 = [0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0];
        assert_eq!(extras(4, &read_failure()), v4);
        // v5: <cl><received><blockfor><reasonmap><data_present>; the failure without a
        // known replica goes as UNKNOWN from 0.0.0.0.
        let v5 = [
            0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 4, 127, 0, 0, 2, 0, 1, 4, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(extras(5, &read_failure()), v5);
    }

    #[test]
    fn already_exists_unprepared_function_failure() {
        let ae = CqlError::AlreadyExists {
            message: "m".into(),
            keyspace: "k".into(),
            table: "t".into(),
        };
        let mut r = encode(4, &ae);
        assert_eq!(head(&mut r).0, 0x2400);
        assert_eq!(
            (r.string().unwrap(), r.string().unwrap()),
            ("k".into(), "t".into())
        );
        let up = CqlError::Unprepared {
            message: "m".into(),
            id: Bytes::from_static(b"x"),
        };
        let mut r = encode(4, &up);
        assert_eq!(head(&mut r).0, 0x2500);
        assert_eq!(r.short_bytes().unwrap(), Bytes::from_static(b"x"));
        let ff = CqlError::FunctionFailure {
            message: "m".into(),
            keyspace: "k".into(),
            function: "f".into(),
            arg_types: vec!["int".into()],
        };
        let mut r = encode(4, &ff);
        assert_eq!(head(&mut r).0, 0x1400);
        assert_eq!(r.string().unwrap(), "k");
        assert_eq!(r.string().unwrap(), "f");
        assert_eq!(r.string_list().unwrap(), vec!["int"]);
        assert_eq!(head(&mut encode(3, &ff)).0, 0x2200);
    }
}
