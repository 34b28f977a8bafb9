//! Cassandra's Murmur3Partitioner token function: MurmurHash3_x64_128 (seed 0) with
//! Cassandra's quirk of sign-extending the tail bytes, keeping the first 64-bit half.

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

/// The token Cassandra's `Murmur3Partitioner.getToken` gives a serialized partition key.
///
/// An empty key maps to the minimum token (`i64::MIN`), as in Cassandra; any other key whose
/// hash is `i64::MIN` is moved to `i64::MAX`, so the minimum token is never owned by a key.
pub fn murmur3_token(key: &[u8]) -> i64 {
    if key.is_empty() {
        return i64::MIN;
    }
    match hash3_x64_128(key).0 as i64 {
        i64::MIN => i64::MAX,
        h => h,
    }
}

/// Cassandra's `MurmurHash.hash3_x64_128(key, 0, len, 0)`: both 64-bit halves, with the
/// sign-extended tail bytes. Also the hash of the SSTable Bloom filters.
pub fn hash3_x64_128(key: &[u8]) -> (u64, u64) {
    let mut h1: u64 = 0;
    let mut h2: u64 = 0;
    let mut blocks = key.chunks_exact(16);
    for block in &mut blocks {
        let (k1, k2) = block.split_at(8);
        h1 ^= mix_k1(read_le(k1));
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= mix_k2(read_le(k2));
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    if tail.len() > 8 {
        h2 ^= mix_k2(signed_tail(&tail[8..]));
    }
    if !tail.is_empty() {
        h1 ^= mix_k1(signed_tail(&tail[..tail.len().min(8)]));
    }
    let len = key.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

/// A full block word: eight bytes read little-endian, each unsigned.
fn read_le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// A tail word as Cassandra builds it: each byte is a signed Java byte, sign-extended to a
/// long before shifting into place, so a byte >= 0x80 sets all higher bits too.
fn signed_tail(bytes: &[u8]) -> u64 {
    bytes.iter().enumerate().fold(0u64, |acc, (i, &b)| {
        acc ^ ((b as i8 as i64 as u64) << (8 * i))
    })
}

fn mix_k1(k: u64) -> u64 {
    k.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2)
}

fn mix_k2(k: u64) -> u64 {
    k.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1)
}

fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(hex: &str) -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn known_cql_partition_keys() {
        assert_eq!(murmur3_token(&1i32.to_be_bytes()), -4069959284402364209);
        assert_eq!(murmur3_token(&42i32.to_be_bytes()), -7160136740246525330);
        assert_eq!(murmur3_token(b"a"), -8839064797231613815);
        assert_eq!(murmur3_token(b"123"), -7468325962851647638);
        assert_eq!(murmur3_token(b"9223372036854775807"), 7162290910810015547);
    }

    /// Vectors published with the DataStax drivers' Murmur3 token tests.
    #[test]
    fn driver_vectors_with_high_bytes() {
        let cases: &[(Vec<u8>, i64)] = &[
            (b"\x00\xff\x10\xfa\x99".repeat(10), 5837342703291459765),
            (vec![0xfe; 8], -8927430733708461935),
            (vec![0x10; 8], 1446172840243228796),
            (vec![0x00; 16], 5457549051747178710),
            (vec![0xff; 16], -2824192546314762522),
            (vec![0xfe; 17], -1672437813826982685),
            (vec![0xfe; 4], 4566408979886474012),
            (bytes("00017f7f"), 6573459401642635627),
            (bytes("00ffffff"), 123573637386978882),
            (bytes("ff010203"), -2839127690952877842),
            (bytes("e2e7"), -8582699461035929883),
            (bytes("e2e7e2e7e2e701"), 2222373981930033306),
        ];
        for (key, token) in cases {
            assert_eq!(murmur3_token(key), *token, "key {key:02x?}");
        }
    }

    /// Every tail length 1..=17 with bytes >= 0x80, checked against the Python driver's
    /// independent implementation (bytes (0x80 + 7 i) mod 256).
    #[test]
    fn every_tail_length_with_signed_bytes() {
        let expected: [i64; 17] = [
            -5284281814142962636,
            2018950863064893639,
            2883035100252727777,
            3009979607048216379,
            -2847373446435714001,
            -2244203985003959096,
            -5968304505574019857,
            512842628024960352,
            683171345539645642,
            7840819521531847175,
            422083457162203766,
            1542238518037374429,
            -3139204666512434709,
            -3282293895579786473,
            3052317648445578018,
            -2954592189485143609,
            5211886051089384206,
        ];
        for (i, token) in expected.iter().enumerate() {
            let key: Vec<u8> = (0..=i).map(|j| (0x80 + 7 * j) as u8).collect();
            assert_eq!(murmur3_token(&key), *token, "length {}", i + 1);
        }
    }

    #[test]
    fn empty_key_is_the_minimum_token() {
        assert_eq!(murmur3_token(&[]), i64::MIN);
    }
}
