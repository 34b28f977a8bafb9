//! Cassandra's variable-length integers (`VIntCoding`): the unsigned form puts the count of
//! extra bytes in the leading one-bits of the first byte; the signed form zig-zags first.
use crate::error::TypeError;

pub fn write_unsigned(out: &mut Vec<u8>, value: u64) {
    let bits = 64 - (value | 1).leading_zeros() as usize;
    let size = if bits > 56 { 9 } else { bits.div_ceil(7) };
    if size == 1 {
        out.push(value as u8);
        return;
    }
    let extra = size - 1;
    let bytes = value.to_be_bytes();
    let start = out.len();
    if size == 9 {
        out.push(0xff);
        out.extend_from_slice(&bytes);
    } else {
        out.extend_from_slice(&bytes[8 - size..]);
        out[start] |= !(0xffu8 >> extra);
    }
}

pub fn write_signed(out: &mut Vec<u8>, value: i64) {
    write_unsigned(out, ((value << 1) ^ (value >> 63)) as u64);
}

/// Reads an unsigned vint from the front of `buf`, advancing it.
pub fn read_unsigned(buf: &mut &[u8]) -> Result<u64, TypeError> {
    let (&first, rest) = buf
        .split_first()
        .ok_or_else(|| TypeError("Not enough bytes to read a vint".into()))?;
    let extra = first.leading_ones() as usize;
    if rest.len() < extra {
        return Err(TypeError("Not enough bytes to read a vint".into()));
    }
    let mut value = u64::from(first & 0xffu8.checked_shr(extra as u32).unwrap_or(0));
    for &b in &rest[..extra] {
        value = (value << 8) | u64::from(b);
    }
    *buf = &rest[extra..];
    Ok(value)
}

pub fn read_signed(buf: &mut &[u8]) -> Result<i64, TypeError> {
    let raw = read_unsigned(buf)?;
    Ok((raw >> 1) as i64 ^ -((raw & 1) as i64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn unsigned(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        write_unsigned(&mut out, v);
        out
    }

    #[test]
    fn known_encodings() {
        assert_eq!(unsigned(0), [0]);
        assert_eq!(unsigned(127), [0x7f]);
        assert_eq!(unsigned(128), [0x80, 0x80]);
        assert_eq!(unsigned(16383), [0xbf, 0xff]);
        assert_eq!(unsigned(16384), [0xc0, 0x40, 0x00]);
        assert_eq!(unsigned(u64::MAX)[0], 0xff);
        assert_eq!(unsigned(u64::MAX).len(), 9);
        let mut signed = Vec::new();
        write_signed(&mut signed, -1);
        write_signed(&mut signed, 1);
        assert_eq!(signed, [1, 2]);
    }

    #[test]
    fn truncated_is_an_error() {
        assert!(read_unsigned(&mut &[0x80u8][..]).is_err());
        assert!(read_unsigned(&mut &[][..]).is_err());
    }

    proptest! {
        #[test]
        fn signed_round_trip(v in any::<i64>()) {
            let mut out = Vec::new();
            write_signed(&mut out, v);
            let mut buf = &out[..];
            prop_assert_eq!(read_signed(&mut buf), Ok(v));
            prop_assert!(buf.is_empty());
        }

        #[test]
        fn unsigned_round_trip(v in any::<u64>()) {
            let out = unsigned(v);
            let mut buf = &out[..];
            prop_assert_eq!(read_unsigned(&mut buf), Ok(v));
            prop_assert!(buf.is_empty());
        }
    }
}
