//! The TOC component: a text file naming the format and every component, ending with a CRC32
//! line. Renaming it into place commits the SSTable.

use std::path::Path;

use crate::error::Result;
use crate::sstable::descriptor::Component;
use crate::sstable::format::{corrupt, version_tag};

/// The TOC text of an SSTable of format `version`.
pub(crate) fn encode(version: u16) -> String {
    let tag = version_tag(version);
    let mut text = format!("helenus-sstable {tag} {version}\n");
    for component in Component::ALL {
        text.push_str(component.suffix());
        text.push('\n');
    }
    let crc = crc32fast::hash(text.as_bytes());
    text.push_str(&format!("crc32 {crc:08x}\n"));
    text
}

/// Checks that `bytes` is a TOC of format `version` listing every component.
pub(crate) fn verify(bytes: &[u8], file: &Path, version: u16) -> Result<()> {
    if bytes == encode(version).as_bytes() {
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
        let toc = encode(2);
        assert!(toc.starts_with("helenus-sstable hb 2\n"));
        assert!(verify(toc.as_bytes(), file, 2).is_ok());
        assert!(verify(toc.as_bytes(), file, 1).is_err());
        assert!(verify(encode(1).as_bytes(), file, 1).is_ok());
        for i in 0..toc.len() {
            let mut bad = toc.clone().into_bytes();
            bad[i] ^= 0x01;
            assert!(verify(&bad, file, 2).is_err(), "flip at {i} undetected");
        }
    }
}
