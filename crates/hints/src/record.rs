//! One record of a hints file, as Cassandra frames them:
//! `[size u32][CRC32 of size][payload][CRC32 of payload]`, big-endian.
use std::io::{self, Read};

/// Bytes a record adds to its payload.
pub const OVERHEAD: u64 = 12;

pub fn encode(payload: &[u8]) -> Vec<u8> {
    let size = u32::try_from(payload.len())
        .unwrap_or(u32::MAX)
        .to_be_bytes();
    let mut out = Vec::with_capacity(payload.len() + OVERHEAD as usize);
    out.extend_from_slice(&size);
    out.extend_from_slice(&crc32fast::hash(&size).to_be_bytes());
    out.extend_from_slice(payload);
    out.extend_from_slice(&crc32fast::hash(payload).to_be_bytes());
    out
}

/// What follows in a file.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// A checked payload; the record took `OVERHEAD + payload.len()` bytes.
    Record(Vec<u8>),
    /// The file ends here, on a record boundary.
    End,
    /// The file ends inside a record, or in zeros (a write cut short by a crash).
    Torn,
    /// The size failed its CRC (or garbage follows a zero size): nothing after this point can
    /// be framed.
    Corrupt(&'static str),
    /// The size checked out but the payload failed its CRC; the record took `len` bytes and
    /// what follows can still be read.
    BadPayload { len: u64 },
}

/// Reads the record at the start of `input`, of which `remaining` bytes are left in the file.
pub fn read_next(input: &mut impl Read, remaining: u64) -> io::Result<Next> {
    if remaining == 0 {
        return Ok(Next::End);
    }
    if remaining < 8 {
        return Ok(Next::Torn);
    }
    let mut head = [0u8; 8];
    input.read_exact(&mut head)?;
    if head == [0; 8] {
        return zero_tail(input, remaining - 8);
    }
    let (size, crc) = head.split_at(4);
    if crc32fast::hash(size).to_be_bytes() != crc {
        return Ok(Next::Corrupt("record size CRC mismatch"));
    }
    let size = u64::from(u32::from_be_bytes([size[0], size[1], size[2], size[3]]));
    if OVERHEAD + size > remaining {
        return Ok(Next::Torn);
    }
    let mut payload = vec![0u8; size as usize];
    input.read_exact(&mut payload)?;
    let mut crc = [0u8; 4];
    input.read_exact(&mut crc)?;
    if crc32fast::hash(&payload).to_be_bytes() != crc {
        return Ok(Next::BadPayload {
            len: OVERHEAD + size,
        });
    }
    Ok(Next::Record(payload))
}

/// A zero size: the end of a file cut short if only zeros follow (as Cassandra reads it).
fn zero_tail(input: &mut impl Read, remaining: u64) -> io::Result<Next> {
    let mut rest = Vec::new();
    input.take(remaining).read_to_end(&mut rest)?;
    if rest.iter().all(|b| *b == 0) {
        Ok(Next::Torn)
    } else {
        Ok(Next::Corrupt("non-zero bytes after a zero record size"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(bytes: &[u8]) -> Next {
        read_next(&mut &bytes[..], bytes.len() as u64).unwrap()
    }

    #[test]
    fn records_round_trip() {
        let record = encode(b"payload");
        assert_eq!(record.len() as u64, OVERHEAD + 7);
        assert_eq!(next(&record), Next::Record(b"payload".to_vec()));
        assert_eq!(next(&encode(b"")), Next::Record(Vec::new()));
        assert_eq!(next(&[]), Next::End);
    }

    #[test]
    fn every_truncation_is_a_torn_tail() {
        let record = encode(b"some payload");
        for len in 1..record.len() {
            assert_eq!(next(&record[..len]), Next::Torn, "{len} bytes");
        }
        assert_eq!(next(&[0u8; 40]), Next::Torn);
    }

    #[test]
    fn every_flipped_bit_is_detected() {
        let record = encode(b"some payload");
        for byte in 0..record.len() {
            for bit in 0..8 {
                let mut bad = record.clone();
                bad[byte] ^= 1 << bit;
                let found = next(&bad);
                if byte < 8 {
                    assert!(matches!(found, Next::Corrupt(_)), "{byte}/{bit}: {found:?}");
                } else {
                    let len = record.len() as u64;
                    assert_eq!(found, Next::BadPayload { len }, "{byte}/{bit}");
                }
            }
        }
        let mut zeros_then_data = vec![0u8; 12];
        zeros_then_data.push(1);
        assert!(matches!(next(&zeros_then_data), Next::Corrupt(_)));
    }
}
