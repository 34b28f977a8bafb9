//! A cursor over encoded bytes that can read through an inversion mask (reversed columns and
//! negative decimals are stored bit-inverted).
use crate::TypeError;

pub(super) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// XORed into every byte read: 0x00 or 0xFF.
    pub(super) mask: u8,
}

impl<'a> Reader<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes,
            pos: 0,
            mask: 0,
        }
    }

    pub(super) fn is_at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// The next byte without consuming it.
    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).map(|b| b ^ self.mask)
    }

    /// Consumes `expected` when the next bytes are exactly it; otherwise reads nothing.
    pub(super) fn skip(&mut self, expected: impl Iterator<Item = u8>) -> bool {
        let mut end = self.pos;
        for b in expected {
            if self.bytes.get(end).map(|x| x ^ self.mask) != Some(b) {
                return false;
            }
            end += 1;
        }
        self.pos = end;
        true
    }

    pub(super) fn byte(&mut self) -> Result<u8, TypeError> {
        let b = self.peek().ok_or_else(truncated)?;
        self.pos += 1;
        Ok(b)
    }

    pub(super) fn u32(&mut self) -> Result<u32, TypeError> {
        let mut word = [0u8; 4];
        self.read_into(&mut word)?;
        Ok(u32::from_be_bytes(word))
    }

    /// Fills `buf` with the next bytes.
    pub(super) fn read_into(&mut self, buf: &mut [u8]) -> Result<(), TypeError> {
        let end = self.pos.checked_add(buf.len()).ok_or_else(truncated)?;
        let src = self.bytes.get(self.pos..end).ok_or_else(truncated)?;
        for (dst, b) in buf.iter_mut().zip(src) {
            *dst = b ^ self.mask;
        }
        self.pos = end;
        Ok(())
    }

    /// Appends the next `len` bytes to `out`.
    pub(super) fn copy(&mut self, len: usize, out: &mut Vec<u8>) -> Result<(), TypeError> {
        let end = self.pos.checked_add(len).ok_or_else(truncated)?;
        let src = self.bytes.get(self.pos..end).ok_or_else(truncated)?;
        out.extend(src.iter().map(|b| b ^ self.mask));
        self.pos = end;
        Ok(())
    }
}

fn truncated() -> TypeError {
    TypeError("truncated clustering encoding".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_through_the_mask() {
        let mut r = Reader::new(&[0x01, 0xFE, 0x00, 0x00, 0x00, 0x07]);
        assert_eq!(r.byte(), Ok(1));
        r.mask = 0xFF;
        assert_eq!(r.peek(), Some(0x01));
        assert_eq!(r.byte(), Ok(1));
        r.mask = 0;
        assert_eq!(r.u32(), Ok(7));
        assert!(r.is_at_end());
        assert!(r.byte().is_err());
        let mut out = Vec::new();
        assert!(r.copy(1, &mut out).is_err());
    }
}
