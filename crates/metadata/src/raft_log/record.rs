//! Checked records: `[length u32 LE][crc32 of the payload u32 LE][payload]`, after an 8-byte
//! file magic. Reading tells a torn tail (the last write of a crashed process: cut it off)
//! from corruption inside the file (refuse to go on).

use crate::codec::MAX_ENCODED_BYTES;

const HEADER: usize = 8;

/// Appends one framed record to `out`.
pub(crate) fn frame_into(out: &mut Vec<u8>, payload: &[u8]) {
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
}

/// The records of a file's body and where its valid part ends.
#[derive(Debug)]
pub(crate) struct Scan<'a> {
    pub records: Vec<&'a [u8]>,
    /// Bytes of `data` holding whole, verified records; anything after is a torn tail.
    pub valid_len: usize,
}

/// A record that fails its check and is followed by more data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("corrupt record at byte {offset}: {reason}")]
pub(crate) struct Corruption {
    pub offset: usize,
    pub reason: String,
}

/// Reads every record of `data`. A record cut short by the end of the data, a last record
/// whose checksum fails, or a tail of zeros is a torn tail (`valid_len` stops before it); a
/// bad record with data after it is corruption.
pub(crate) fn scan(data: &[u8]) -> Result<Scan<'_>, Corruption> {
    let mut records = Vec::new();
    let mut offset = 0;
    while offset < data.len() {
        let rest = &data[offset..];
        if rest.len() < HEADER || rest.iter().all(|b| *b == 0) {
            break;
        }
        let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let crc = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]);
        if len > rest.len() - HEADER {
            break;
        }
        let end = HEADER + len;
        let payload = &rest[HEADER..end];
        if crc32fast::hash(payload) != crc || len > MAX_ENCODED_BYTES {
            if end == rest.len() {
                break;
            }
            return Err(Corruption {
                offset,
                reason: format!(
                    "checksum mismatch in a {len} byte record followed by {} more bytes",
                    rest.len() - end
                ),
            });
        }
        records.push(payload);
        offset += end;
    }
    Ok(Scan {
        records,
        valid_len: offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(payloads: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for payload in payloads {
            frame_into(&mut out, payload);
        }
        out
    }

    #[test]
    fn reads_back_every_record() {
        let data = framed(&[b"one", b"", b"three"]);
        let scan = scan(&data).unwrap();
        assert_eq!(scan.records, vec![&b"one"[..], b"", b"three"]);
        assert_eq!(scan.valid_len, data.len());
    }

    #[test]
    fn every_cut_of_the_last_record_is_a_torn_tail() {
        let data = framed(&[b"first", b"second record"]);
        let first_len = HEADER + 5;
        for cut in first_len + 1..data.len() {
            let scan = scan(&data[..cut]).unwrap();
            assert_eq!(scan.records, vec![&b"first"[..]], "cut at {cut}");
            assert_eq!(scan.valid_len, first_len);
        }
    }

    #[test]
    fn a_flipped_bit_in_the_last_record_is_a_torn_tail() {
        let mut data = framed(&[b"first", b"second"]);
        let last = data.len() - 1;
        data[last] ^= 1;
        let scan = scan(&data).unwrap();
        assert_eq!(scan.records.len(), 1);
        assert_eq!(scan.valid_len, HEADER + 5);
    }

    #[test]
    fn zeros_after_the_records_are_a_torn_tail() {
        let mut data = framed(&[b"first"]);
        data.extend_from_slice(&[0; 100]);
        let scan = scan(&data).unwrap();
        assert_eq!(scan.records.len(), 1);
        assert_eq!(scan.valid_len, HEADER + 5);
    }

    #[test]
    fn a_bad_record_followed_by_others_is_corruption() {
        let mut data = framed(&[b"first", b"second", b"third"]);
        data[HEADER + 5 + HEADER] ^= 0x20;
        let error = scan(&data).unwrap_err();
        assert_eq!(error.offset, HEADER + 5);
        assert!(error.reason.contains("checksum mismatch"), "{error}");
    }
}
