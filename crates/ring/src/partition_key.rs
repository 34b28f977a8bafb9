//! Partition keys as Cassandra serializes them: a single component is its raw bytes; several
//! components use the CompositeType layout (u16 big-endian length, bytes, 0x00 end-of-component).
use bytes::{BufMut, Bytes, BytesMut};

use crate::RingError;

/// Serializes partition key components. A component longer than 65535 bytes cannot be encoded
/// in a composite key; callers validate key sizes first (Cassandra rejects keys over 64 KiB).
pub fn compose_partition_key(components: &[&[u8]]) -> Bytes {
    if let [single] = components {
        return Bytes::copy_from_slice(single);
    }
    let size = components.iter().map(|c| c.len() + 3).sum();
    let mut out = BytesMut::with_capacity(size);
    for component in components {
        out.put_u16(component.len() as u16);
        out.put_slice(component);
        out.put_u8(0);
    }
    out.freeze()
}

/// Splits a serialized partition key back into `n` components.
pub fn split_partition_key(key: &[u8], n: usize) -> Result<Vec<Bytes>, RingError> {
    if n == 1 {
        return Ok(vec![Bytes::copy_from_slice(key)]);
    }
    let mut parts = Vec::with_capacity(n);
    let mut rest = key;
    while !rest.is_empty() {
        let (component, tail) = split_component(rest)?;
        parts.push(Bytes::copy_from_slice(component));
        rest = tail;
    }
    if parts.len() != n {
        return Err(malformed(format!(
            "expected {n} partition key components, found {}",
            parts.len()
        )));
    }
    Ok(parts)
}

/// One CompositeType component and the bytes after it.
fn split_component(bytes: &[u8]) -> Result<(&[u8], &[u8]), RingError> {
    let (len, rest) = match bytes {
        [hi, lo, rest @ ..] => (usize::from(u16::from_be_bytes([*hi, *lo])), rest),
        _ => return Err(malformed("truncated composite key length".into())),
    };
    if rest.len() <= len {
        return Err(malformed("truncated composite key component".into()));
    }
    let (component, rest) = rest.split_at(len);
    match rest {
        [0, tail @ ..] => Ok((component, tail)),
        _ => Err(malformed(
            "invalid end-of-component byte in composite key".into(),
        )),
    }
}

fn malformed(message: String) -> RingError {
    RingError::MalformedKey(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn single_component_is_raw() {
        assert_eq!(compose_partition_key(&[b"abc"]), Bytes::from_static(b"abc"));
        assert_eq!(
            split_partition_key(b"abc", 1).unwrap(),
            vec![Bytes::from_static(b"abc")]
        );
    }

    #[test]
    fn composite_layout() {
        let key = compose_partition_key(&[&[0, 0, 0, 1], b"xy"]);
        assert_eq!(&key[..], &[0, 4, 0, 0, 0, 1, 0, 0, 2, b'x', b'y', 0]);
    }

    #[test]
    fn malformed_composites_are_errors() {
        assert!(split_partition_key(&[0], 2).is_err());
        assert!(split_partition_key(&[0, 5, 1, 2], 2).is_err());
        assert!(split_partition_key(&[0, 1, 7, 1], 1 + 1).is_err());
        assert!(split_partition_key(&[0, 1, 7, 0], 2).is_err());
        assert!(split_partition_key(&[0, 1, 7, 0, 0, 0, 0], 2).is_ok());
    }

    proptest! {
        #[test]
        fn compose_split_round_trip(parts in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 1..5)) {
            let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            let key = compose_partition_key(&refs);
            let split = split_partition_key(&key, parts.len()).unwrap();
            prop_assert_eq!(split.iter().map(|b| b.to_vec()).collect::<Vec<_>>(), parts);
        }
    }
}
