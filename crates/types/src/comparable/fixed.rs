//! Order-preserving forms of the fixed-length types whose byte order is not their value order:
//! IEEE floats (Java's `Float.compare`/`Double.compare`) and UUIDs (Cassandra's UUIDType and
//! TimeUUIDType). Each maps a value to bytes or an integer compared unsigned.

/// A float's bits made unsigned-comparable: NaNs canonicalised (all NaNs are equal and sort
/// last), negatives inverted, positives with the sign bit set; -0.0 sorts before 0.0.
pub(super) fn float_key(bits: u32) -> u32 {
    let bits = if f32::from_bits(bits).is_nan() {
        0x7FC0_0000
    } else {
        bits
    };
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The inverse of `float_key` (NaN comes back canonical).
pub(super) fn float_from_key(key: u32) -> u32 {
    if key & 0x8000_0000 != 0 {
        key & 0x7FFF_FFFF
    } else {
        !key
    }
}

/// `float_key` for doubles.
pub(super) fn double_key(bits: u64) -> u64 {
    let bits = if f64::from_bits(bits).is_nan() {
        0x7FF8_0000_0000_0000
    } else {
        bits
    };
    if bits & (1 << 63) != 0 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

pub(super) fn double_from_key(key: u64) -> u64 {
    if key & (1 << 63) != 0 {
        key & !(1 << 63)
    } else {
        !key
    }
}

/// Moves a time-based UUID's timestamp to the front: time_hi (with the version nibble on top),
/// time_mid, time_low (Cassandra's `TimeUUIDType.reorderTimestampBytes`).
fn reorder_timestamp(msb: u64) -> u64 {
    (msb << 48) | ((msb << 16) & 0xFFFF_0000_0000) | (msb >> 32)
}

fn restore_timestamp(key: u64) -> u64 {
    (key >> 48) | ((key & 0xFFFF_0000_0000) >> 16) | (key << 32)
}

fn halves(uuid: &[u8; 16]) -> (u64, u64) {
    let (msb, lsb) = uuid.split_at(8);
    let word = |b: &[u8]| b.iter().fold(0u64, |acc, x| (acc << 8) | u64::from(*x));
    (word(msb), word(lsb))
}

fn join(msb: u64, lsb: u64) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&msb.to_be_bytes());
    out[8..].copy_from_slice(&lsb.to_be_bytes());
    out
}

/// Flips the top bit of each byte: signed bytes then compare as unsigned.
const BYTE_SIGNS: u64 = 0x8080_8080_8080_8080;

/// TimeUUIDType order as unsigned bytes: the reordered timestamp compared as a signed long
/// (sign bit flipped), then the low half compared byte by byte as signed Java bytes.
pub(super) fn timeuuid_key(uuid: &[u8; 16]) -> [u8; 16] {
    let (msb, lsb) = halves(uuid);
    join(reorder_timestamp(msb) ^ (1 << 63), lsb ^ BYTE_SIGNS)
}

pub(super) fn timeuuid_from_key(key: &[u8; 16]) -> [u8; 16] {
    let (msb, lsb) = halves(key);
    join(restore_timestamp(msb ^ (1 << 63)), lsb ^ BYTE_SIGNS)
}

fn uuid_version(msb: u64) -> u64 {
    (msb >> 12) & 0xF
}

/// UUIDType order as unsigned bytes: version first; version 1 by timestamp, others by their
/// high half; then the low half unsigned.
pub(super) fn uuid_key(uuid: &[u8; 16]) -> [u8; 16] {
    let (msb, lsb) = halves(uuid);
    let version = uuid_version(msb);
    let high = if version == 1 {
        reorder_timestamp(msb)
    } else {
        (version << 60) | ((msb >> 4) & 0x0FFF_FFFF_FFFF_F000) | (msb & 0xFFF)
    };
    join(high, lsb)
}

pub(super) fn uuid_from_key(key: &[u8; 16]) -> [u8; 16] {
    let (high, lsb) = halves(key);
    let version = high >> 60;
    let msb = if version == 1 {
        restore_timestamp(high)
    } else {
        ((high << 4) & 0xFFFF_FFFF_FFFF_0000) | (version << 12) | (high & 0xFFF)
    };
    join(msb, lsb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_keys_follow_java_compare() {
        let key = |f: f32| float_key(f.to_bits());
        assert!(key(f32::NEG_INFINITY) < key(-1.0));
        assert!(key(-1.0) < key(-0.0));
        assert!(key(-0.0) < key(0.0));
        assert!(key(0.0) < key(f32::MIN_POSITIVE));
        assert!(key(f32::INFINITY) < key(f32::NAN));
        assert_eq!(key(f32::NAN), float_key(0xFFFF_FFFF));
        assert_eq!(float_from_key(key(-2.5)), (-2.5f32).to_bits());
    }

    #[test]
    fn uuid_keys_round_trip() {
        let v1: [u8; 16] = *b"\x12\x34\x56\x78\x9a\xbc\x1d\xef\x80\x01\x02\x03\x04\x05\x06\x07";
        let v4: [u8; 16] = *b"\x12\x34\x56\x78\x9a\xbc\x4d\xef\xff\x01\x02\x03\x04\x05\x06\x07";
        assert_eq!(uuid_from_key(&uuid_key(&v1)), v1);
        assert_eq!(uuid_from_key(&uuid_key(&v4)), v4);
        assert_eq!(timeuuid_from_key(&timeuuid_key(&v1)), v1);
        assert_eq!(
            &timeuuid_key(&v1)[..8],
            &[0x9d, 0xef, 0x9a, 0xbc, 0x12, 0x34, 0x56, 0x78]
        );
    }
}
