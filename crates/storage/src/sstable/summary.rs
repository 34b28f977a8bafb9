//! The Summary component: the first key, file offset and length of every Index block, and the
//! last key of the SSTable. Loaded whole into memory at open; a lookup binary-searches it to
//! find the one Index block that can hold a key.

use std::ops::Bound;
use std::path::Path;

use bytes::BufMut;

use crate::error::Result;
use crate::sstable::format::{
    corrupt, put_bytes, seal, unseal, Decoder, STREAM_HEADER_LEN, SUMMARY_MAGIC,
};
use mutation::PartitionKey;

/// One Index block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SummaryEntry {
    pub first_key: PartitionKey,
    pub offset: u64,
    pub len: u64,
}

/// The in-memory sparse index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Summary {
    pub blocks: Vec<SummaryEntry>,
    pub last_key: Option<PartitionKey>,
    /// Length of the Index file.
    pub index_len: u64,
}

impl Summary {
    /// The block that holds `key` if any does.
    pub fn block_for(&self, key: &PartitionKey) -> Option<&SummaryEntry> {
        if self.last_key.as_ref().is_none_or(|last| key > last) {
            return None;
        }
        let after = self.blocks.partition_point(|b| b.first_key <= *key);
        self.blocks.get(after.checked_sub(1)?)
    }

    /// The first block that can hold keys at or after `start`.
    pub fn first_block_from(&self, start: &Bound<PartitionKey>) -> usize {
        let key = match start {
            Bound::Unbounded => return 0,
            Bound::Included(k) | Bound::Excluded(k) => k,
        };
        let after = self.blocks.partition_point(|b| b.first_key <= *key);
        after.saturating_sub(1)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        body.put_u64(self.index_len);
        body.put_u32(self.blocks.len() as u32);
        for block in &self.blocks {
            put_key(&mut body, &block.first_key);
            body.put_u64(block.offset);
            body.put_u64(block.len);
        }
        match &self.last_key {
            Some(key) => {
                body.put_u8(1);
                put_key(&mut body, key);
            }
            None => body.put_u8(0),
        }
        seal(SUMMARY_MAGIC, &body)
    }

    pub fn decode(bytes: &[u8], file: &Path) -> Result<Summary> {
        let body = unseal(bytes, SUMMARY_MAGIC, file)?;
        let mut d = Decoder::new(body, file, 6);
        let index_len = d.u64()?;
        let count = d.count(28)?;
        let mut blocks = Vec::with_capacity(count);
        for _ in 0..count {
            blocks.push(SummaryEntry {
                first_key: get_key(&mut d)?,
                offset: d.u64()?,
                len: d.u64()?,
            });
        }
        let last_key = match d.u8()? {
            0 => None,
            1 => Some(get_key(&mut d)?),
            _ => return Err(d.corrupt("invalid last-key flag")),
        };
        d.finish()?;
        let summary = Summary {
            blocks,
            last_key,
            index_len,
        };
        summary
            .validate()
            .map_err(|reason| corrupt(file, 0, reason))?;
        Ok(summary)
    }

    /// Blocks must tile the Index file in key order.
    fn validate(&self) -> std::result::Result<(), &'static str> {
        let mut end = STREAM_HEADER_LEN;
        for (i, block) in self.blocks.iter().enumerate() {
            if block.offset != end || (i > 0 && block.first_key <= self.blocks[i - 1].first_key) {
                return Err("index blocks out of order");
            }
            end = block
                .offset
                .checked_add(block.len)
                .ok_or("index block overflows")?;
        }
        if end != self.index_len {
            return Err("index blocks do not cover the index");
        }
        match (&self.last_key, self.blocks.last()) {
            (None, None) => Ok(()),
            (Some(last), Some(block)) if *last >= block.first_key => Ok(()),
            _ => Err("last key inconsistent with the blocks"),
        }
    }
}

pub(crate) fn put_key(out: &mut Vec<u8>, key: &PartitionKey) {
    out.put_i64(key.token);
    put_bytes(out, &key.key);
}

pub(crate) fn get_key(d: &mut Decoder<'_>) -> Result<PartitionKey> {
    Ok(PartitionKey {
        token: d.i64()?,
        key: d.bytes()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn key(token: i64) -> PartitionKey {
        PartitionKey {
            token,
            key: Bytes::from(vec![token as u8]),
        }
    }

    fn summary() -> Summary {
        Summary {
            blocks: vec![
                SummaryEntry {
                    first_key: key(1),
                    offset: 10,
                    len: 50,
                },
                SummaryEntry {
                    first_key: key(5),
                    offset: 60,
                    len: 40,
                },
            ],
            last_key: Some(key(9)),
            index_len: 100,
        }
    }

    #[test]
    fn lookups_pick_the_covering_block() {
        let s = summary();
        assert_eq!(s.block_for(&key(0)), None);
        assert_eq!(s.block_for(&key(1)).map(|b| b.offset), Some(10));
        assert_eq!(s.block_for(&key(4)).map(|b| b.offset), Some(10));
        assert_eq!(s.block_for(&key(9)).map(|b| b.offset), Some(60));
        assert_eq!(s.block_for(&key(10)), None);
        assert_eq!(s.first_block_from(&Bound::Included(key(7))), 1);
        assert_eq!(s.first_block_from(&Bound::Excluded(key(0))), 0);
    }

    #[test]
    fn encoding_round_trips_and_rejects_gaps() {
        let file = Path::new("s");
        assert_eq!(
            Summary::decode(&summary().encode(), file).expect("decode"),
            summary()
        );
        let mut bad = summary();
        bad.index_len = 101;
        assert!(Summary::decode(&bad.encode(), file).is_err());
        let mut bad = summary();
        bad.blocks[1].first_key = key(0);
        assert!(Summary::decode(&bad.encode(), file).is_err());
    }
}
