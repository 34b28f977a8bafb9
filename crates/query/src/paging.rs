//! The paging state handed to clients: where the next page starts (partition key and the
//! last clustering returned) and how much of LIMIT / PER PARTITION LIMIT is left.
use bytes::{Buf, BufMut, Bytes, BytesMut};
use types::{CqlError, CqlResult};

const VERSION: u8 = 1;

/// Where a paged query resumes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PagingState {
    pub partition_key: Bytes,
    /// The last clustering returned in that partition; `None` when the partition was
    /// finished (resume at the next one).
    pub last_clustering: Option<Bytes>,
    /// Rows still allowed by LIMIT.
    pub remaining: i64,
    /// Rows already returned from `partition_key` (for PER PARTITION LIMIT).
    pub in_partition: i64,
}

impl PagingState {
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(32 + self.partition_key.len());
        out.put_u8(VERSION);
        out.put_i64(self.remaining);
        out.put_i64(self.in_partition);
        out.put_u32(self.partition_key.len() as u32);
        out.put_slice(&self.partition_key);
        match &self.last_clustering {
            Some(c) => {
                out.put_u8(1);
                out.put_u32(c.len() as u32);
                out.put_slice(c);
            }
            None => out.put_u8(0),
        }
        out.freeze()
    }

    pub fn decode(bytes: &[u8]) -> CqlResult<PagingState> {
        let mut buf = bytes;
        if buf.remaining() < 21 || buf.get_u8() != VERSION {
            return Err(invalid());
        }
        let remaining = buf.get_i64();
        let in_partition = buf.get_i64();
        let partition_key = take(&mut buf)?;
        if buf.remaining() < 1 {
            return Err(invalid());
        }
        let last_clustering = match buf.get_u8() {
            0 => None,
            1 => Some(take(&mut buf)?),
            _ => return Err(invalid()),
        };
        if buf.has_remaining() {
            return Err(invalid());
        }
        Ok(PagingState {
            partition_key,
            last_clustering,
            remaining,
            in_partition,
        })
    }
}

fn take(buf: &mut &[u8]) -> CqlResult<Bytes> {
    if buf.remaining() < 4 {
        return Err(invalid());
    }
    let len = buf.get_u32() as usize;
    if buf.remaining() < len {
        return Err(invalid());
    }
    let out = Bytes::copy_from_slice(&buf[..len]);
    buf.advance(len);
    Ok(out)
}

fn invalid() -> CqlError {
    CqlError::Protocol("Invalid value for the paging state".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for last in [None, Some(Bytes::from_static(b"\x40\x00\x01"))] {
            let s = PagingState {
                partition_key: Bytes::from_static(b"key"),
                last_clustering: last,
                remaining: 42,
                in_partition: 3,
            };
            assert_eq!(PagingState::decode(&s.encode()).unwrap(), s);
        }
    }

    #[test]
    fn garbage_is_refused() {
        assert!(PagingState::decode(b"\x01\x00").is_err());
        assert!(PagingState::decode(&[7; 40]).is_err());
    }
}
