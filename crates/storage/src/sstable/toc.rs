//! The TOC component: a text file naming the format and every component, ending with a CRC32
//! line. Renaming it into place commits the SSTable.

use std::path::Path;

use crate::error::Result;
use crate::sstable::descriptor::Component;
use crate::sstable::format::{corrupt, FORMAT_VERSION, VERSION_TAG};

/// The TOC text.
pub(crate) fn encode() -> String {
    let mut text = format!("helenus-sstable {VERSION_TAG} {FORMAT_VERSION}\n");
    for component in Component::ALL {
        text.push_str(component.suffix());
        text.push('\n');
    }
    let crc = crc32fast::hash(text.as_bytes());
    text.push_str(&format!("crc32 {crc:08x}\n"));
    text
}

/// Checks that `bytes` is a TOC of this format version listing every component.
pub(crate) fn verify(bytes: &[u8], file: &Path) -> Result<()> {
    if bytes == encode().as_bytes() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(bytes);
    let body_len = text.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
    let (body, trailer) = text.split_at(body_len);
    let expected = format!("crc32 {:08x}\n", crc32fast::hash(body.as_bytes()));
    if trailer != expected {
        return Err(corrupt(file, body_len as u64, "TOC checksum mismatch"));
    }
    Err(corrupt(
        file,
        0,
        "TOC of another format version or component set",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toc_verifies_and_detects_changes() {
        let file = Path::new("t");
        let toc = encode();
        assert!(verify(toc.as_bytes(), file).is_ok());
        for i in 0..toc.len() {
            let mut bad = toc.clone().into_bytes();
            bad[i] ^= 0x01;
            assert!(verify(&bad, file).is_err(), "flip at {i} undetected");
        }
    }
}
