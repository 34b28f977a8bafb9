//! The binary form of everything the crate writes to disk or sends to another node: serde
//! through postcard (compact, varint lengths), with a size limit and no trailing bytes.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// The largest encoded value accepted (a snapshot of a very large schema fits easily).
pub(crate) const MAX_ENCODED_BYTES: usize = 256 << 20;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CodecError {
    #[error("value of {0} bytes is larger than the {MAX_ENCODED_BYTES} byte limit")]
    TooLarge(usize),
    #[error("malformed value: {0}")]
    Malformed(String),
    #[error("{0} unexpected bytes after the value")]
    Trailing(usize),
}

pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    let bytes = postcard::to_allocvec(value).map_err(|e| CodecError::Malformed(e.to_string()))?;
    if bytes.len() > MAX_ENCODED_BYTES {
        return Err(CodecError::TooLarge(bytes.len()));
    }
    Ok(bytes)
}

pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    if bytes.len() > MAX_ENCODED_BYTES {
        return Err(CodecError::TooLarge(bytes.len()));
    }
    let (value, rest) =
        postcard::take_from_bytes(bytes).map_err(|e| CodecError::Malformed(e.to_string()))?;
    if !rest.is_empty() {
        return Err(CodecError::Trailing(rest.len()));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects_trailing_or_truncated_bytes() {
        let value = (7u64, "keyspace".to_string(), vec![1i64, -2, 3]);
        let bytes = encode(&value).unwrap();
        assert_eq!(decode::<(u64, String, Vec<i64>)>(&bytes).unwrap(), value);

        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(
            decode::<(u64, String, Vec<i64>)>(&longer),
            Err(CodecError::Trailing(1))
        );
        for cut in 0..bytes.len() {
            assert!(decode::<(u64, String, Vec<i64>)>(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn a_huge_claimed_length_is_an_error_not_an_allocation() {
        // A vector that claims 2^62 elements in a few bytes.
        let bytes = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 1];
        assert!(decode::<Vec<u64>>(&bytes).is_err());
    }
}
