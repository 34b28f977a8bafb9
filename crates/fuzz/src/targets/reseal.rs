//! Recomputing the checksums of length-prefixed, CRC32-checked records after their bytes
//! were mutated, so that mutations get past the checksums to the decoders behind them.

/// Records laid out as a header (a big-endian `u32` payload length at offset 0, then at
/// `crc_at` the CRC32 of the header's first `crc_at` bytes, `header_len` bytes in all), the
/// payload, and the CRC32 of the payload.
pub struct Framing {
    pub header_len: usize,
    pub crc_at: usize,
    /// A zero length ends the records (a zero-filled tail, as in a commit-log segment).
    pub zero_ends: bool,
}

/// Recomputes both checksums of every record along `stream`, as far as the lengths lead.
pub fn reseal(stream: &mut [u8], framing: &Framing) {
    let mut at = 0;
    while at + framing.header_len <= stream.len() {
        let length =
            u32::from_be_bytes([stream[at], stream[at + 1], stream[at + 2], stream[at + 3]]);
        if length == 0 && framing.zero_ends {
            return;
        }
        let crc = crc32fast::hash(&stream[at..at + framing.crc_at]);
        stream[at + framing.crc_at..at + framing.crc_at + 4].copy_from_slice(&crc.to_be_bytes());
        let payload = at + framing.header_len;
        let Some(end) = payload
            .checked_add(length as usize)
            .filter(|end| end + 4 <= stream.len())
        else {
            return;
        };
        let crc = crc32fast::hash(&stream[payload..end]);
        stream[end..end + 4].copy_from_slice(&crc.to_be_bytes());
        at = end + 4;
    }
}
