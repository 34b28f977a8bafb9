//! The two checksums of v5 framing: CRC24 over segment headers and CRC32 over payloads.
const CRC24_INIT: u32 = 0x0087_5060;
const CRC24_POLY: u32 = 0x0197_4F0B;
const CRC32_INITIAL_BYTES: [u8; 4] = [0xFA, 0x2D, 0x55, 0xCA];

/// CRC24 of header bytes in wire order (Cassandra's `Crc.crc24` of the little-endian header).
pub fn crc24(bytes: &[u8]) -> u32 {
    let mut crc = CRC24_INIT;
    for &b in bytes {
        crc ^= u32::from(b) << 16;
        for _ in 0..8 {
            crc <<= 1;
            if crc & 0x0100_0000 != 0 {
                crc ^= CRC24_POLY;
            }
        }
    }
    crc & 0x00FF_FFFF
}

/// CRC32 of a payload, with the four initial bytes Cassandra feeds first.
pub fn crc32(payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&CRC32_INITIAL_BYTES);
    h.update(payload);
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc24_of_nothing_is_the_seed() {
        assert_eq!(crc24(&[]), CRC24_INIT);
    }

    #[test]
    fn crc24_detects_single_bit_flips() {
        let base = crc24(&[0x12, 0x34, 0x01]);
        for bit in 0..24 {
            let mut b = [0x12, 0x34, 0x01];
            b[bit / 8] ^= 1 << (bit % 8);
            assert_ne!(crc24(&b), base);
        }
    }

    #[test]
    fn crc32_differs_from_plain_crc32() {
        assert_ne!(crc32(b"abc"), crc32fast::hash(b"abc"));
        let mut h = crc32fast::Hasher::new();
        h.update(&CRC32_INITIAL_BYTES);
        h.update(b"abc");
        assert_eq!(crc32(b"abc"), h.finalize());
    }
}
