//! LZ4 envelope-body compression of legacy (v3/v4) framing: a 4-byte big-endian uncompressed
//! length followed by an LZ4 block.
use crate::header::{FLAG_COMPRESSED, HEADER_LEN};
use bytes::{BufMut, Bytes, BytesMut};

/// Decompresses a body, refusing to inflate beyond `max_body` bytes.
pub fn decompress_body(body: &[u8], max_body: usize) -> Result<Bytes, String> {
    let Some((len, block)) = body.split_first_chunk::<4>() else {
        return Err("Compressed body shorter than its length prefix".into());
    };
    let len = u32::from_be_bytes(*len) as usize;
    if len > max_body {
        return Err(format!(
            "Decompressed body of {len} bytes exceeds the maximum {max_body}"
        ));
    }
    match lz4_flex::block::decompress(block, len) {
        Ok(out) if out.len() == len => Ok(Bytes::from(out)),
        Ok(out) => Err(format!(
            "LZ4 body decompressed to {} bytes, expected {len}",
            out.len()
        )),
        Err(e) => Err(format!("Invalid LZ4 body: {e}")),
    }
}

/// Appends `envelope` to `out` with its body compressed and the compression flag set.
pub fn append_compressed(out: &mut BytesMut, envelope: &[u8]) {
    let (header, body) = envelope.split_at(HEADER_LEN.min(envelope.len()));
    let start = out.len();
    out.put_slice(header);
    out.put_u32(body.len() as u32);
    let block_at = out.len();
    out.resize(
        block_at + lz4_flex::block::get_maximum_output_size(body.len()),
        0,
    );
    match lz4_flex::block::compress_into(body, &mut out[block_at..]) {
        Ok(n) => {
            out.truncate(block_at + n);
            out[start + 1] |= FLAG_COMPRESSED;
            let len = (out.len() - start - HEADER_LEN) as u32;
            out[start + 5..start + HEADER_LEN].copy_from_slice(&len.to_be_bytes());
        }
        Err(_) => {
            out.truncate(start);
            out.put_slice(envelope);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::Header;

    #[test]
    fn round_trip() {
        let body = b"hello hello hello hello hello".repeat(10);
        let mut env = vec![0x84, 0, 0, 1, 8];
        env.extend_from_slice(&(body.len() as u32).to_be_bytes());
        env.extend_from_slice(&body);
        let mut out = BytesMut::new();
        append_compressed(&mut out, &env);
        let h = Header::parse(out[..HEADER_LEN].try_into().unwrap());
        assert_eq!(h.flags & FLAG_COMPRESSED, FLAG_COMPRESSED);
        assert_eq!(h.length as usize, out.len() - HEADER_LEN);
        assert!(out.len() < env.len());
        let back = decompress_body(&out[HEADER_LEN..], 1 << 20).unwrap();
        assert_eq!(&back[..], &body[..]);
    }

    #[test]
    fn bad_bodies() {
        assert!(decompress_body(&[0, 0], 100).is_err());
        assert!(decompress_body(&[0, 0, 1, 0, 0xF0], 100).is_err());
        assert!(decompress_body(&[0, 0, 0, 50, 0x40, 1, 2, 3, 4], 100).is_err());
    }
}
