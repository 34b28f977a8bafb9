//! Arbitrary-precision numbers: varints (minimal two's complement) and decimals (i32 scale +
//! varint unscaled), their numeric order, and their order-preserving encodings.
use std::cmp::Ordering;

use num_bigint::{BigInt, Sign};

use super::reader::Reader;
use crate::TypeError;

/// The minimal two's complement form of a non-empty varint (redundant sign bytes dropped).
pub(super) fn minimal_varint(v: &[u8]) -> &[u8] {
    let mut start = 0;
    while start + 1 < v.len() {
        let redundant = match v[start] {
            0x00 => v[start + 1] < 0x80,
            0xFF => v[start + 1] >= 0x80,
            _ => false,
        };
        if !redundant {
            break;
        }
        start += 1;
    }
    &v[start..]
}

fn is_negative(minimal: &[u8]) -> bool {
    minimal.first().is_some_and(|b| b & 0x80 != 0)
}

/// Numeric order of two non-empty varints.
pub(super) fn compare_varint(a: &[u8], b: &[u8]) -> Ordering {
    let (a, b) = (minimal_varint(a), minimal_varint(b));
    match (is_negative(a), is_negative(b)) {
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
        (false, false) => a.len().cmp(&b.len()).then_with(|| a.cmp(b)),
        (true, true) => b.len().cmp(&a.len()).then_with(|| a.cmp(b)),
    }
}

/// Short lengths fit in the header byte; longer ones follow it as a u32.
const SHORT_LEN_MAX: usize = 0x7E;

/// A varint as a header (sign and length: longer positives higher, longer negatives lower)
/// followed by its minimal two's complement bytes, which then compare as unsigned bytes.
pub(super) fn encode_varint(v: &[u8], out: &mut Vec<u8>) {
    let m = minimal_varint(v);
    let len = m.len();
    match (is_negative(m), len <= SHORT_LEN_MAX) {
        (false, true) => out.push(0x80 + len as u8),
        (true, true) => out.push(0x7F - len as u8),
        (false, false) => {
            out.push(0xFF);
            out.extend_from_slice(&(len as u32).to_be_bytes());
        }
        (true, false) => {
            out.push(0x00);
            out.extend_from_slice(&(!(len as u32)).to_be_bytes());
        }
    }
    out.extend_from_slice(m);
}

/// Reads an `encode_varint` encoding back as minimal two's complement bytes.
pub(super) fn decode_varint(r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), TypeError> {
    let header = r.byte()?;
    let len = match header {
        0xFF => r.u32()? as usize,
        0x00 => !r.u32()? as usize,
        0x80..=0xFE => usize::from(header - 0x80),
        _ => usize::from(0x7F - header),
    };
    r.copy(len, out)
}

/// A non-zero decimal as sign, exponent E and significant digits d1..dk (no trailing zeros),
/// meaning ±0.d1..dk × 10^E; zero is `None`. Equal numbers (1.0, 1.00) have equal keys.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct DecimalKey {
    negative: bool,
    exponent: i64,
    digits: Vec<u8>,
}

/// The key of a decimal's serialized form (at least five bytes: scale, unscaled varint).
pub(super) fn decimal_key(v: &[u8]) -> Option<DecimalKey> {
    let (scale, unscaled) = v.split_first_chunk::<4>()?;
    let scale = i64::from(i32::from_be_bytes(*scale));
    let unscaled = BigInt::from_signed_bytes_be(unscaled);
    let (sign, magnitude) = unscaled.to_radix_be(10);
    if sign == Sign::NoSign {
        return None;
    }
    let all_digits = magnitude.len() as i64;
    let significant = magnitude.iter().rposition(|d| *d != 0).map_or(0, |i| i + 1);
    Some(DecimalKey {
        negative: sign == Sign::Minus,
        exponent: all_digits - scale,
        digits: magnitude[..significant].to_vec(),
    })
}

/// Numeric order of two well-formed decimals (BigDecimal.compareTo).
pub(super) fn compare_decimal(a: &[u8], b: &[u8]) -> Ordering {
    let (a, b) = (decimal_key(a), decimal_key(b));
    sign_class(&a)
        .cmp(&sign_class(&b))
        .then_with(|| match (a, b) {
            (Some(a), Some(b)) => {
                let magnitude = a
                    .exponent
                    .cmp(&b.exponent)
                    .then_with(|| a.digits.cmp(&b.digits));
                if a.negative {
                    magnitude.reverse()
                } else {
                    magnitude
                }
            }
            _ => Ordering::Equal,
        })
}

fn sign_class(key: &Option<DecimalKey>) -> i8 {
    match key {
        None => 0,
        Some(k) if k.negative => -1,
        Some(_) => 1,
    }
}

const DECIMAL_NEGATIVE: u8 = 0x40;
const DECIMAL_ZERO: u8 = 0x80;
const DECIMAL_POSITIVE: u8 = 0xC0;

/// A decimal as a sign byte, then (non-zero only) the exponent as a sign-flipped big-endian
/// i64 and the digits in base-100 pairs (byte = pair + 1, odd tail padded with 0) ended by
/// 0x00; for negatives everything after the sign byte is inverted.
pub(super) fn encode_decimal(v: &[u8], out: &mut Vec<u8>) {
    let Some(key) = decimal_key(v) else {
        out.push(DECIMAL_ZERO);
        return;
    };
    out.push(if key.negative {
        DECIMAL_NEGATIVE
    } else {
        DECIMAL_POSITIVE
    });
    let start = out.len();
    out.extend_from_slice(&((key.exponent as u64) ^ (1 << 63)).to_be_bytes());
    for pair in key.digits.chunks(2) {
        let low = pair.get(1).copied().unwrap_or(0);
        out.push(pair[0] * 10 + low + 1);
    }
    out.push(0x00);
    if key.negative {
        super::invert(&mut out[start..]);
    }
}

/// Reads an `encode_decimal` encoding back as a serialized decimal with the smallest scale
/// that represents it exactly (trailing zeros dropped; zero is scale 0, unscaled 0).
pub(super) fn decode_decimal(r: &mut Reader<'_>, out: &mut Vec<u8>) -> Result<(), TypeError> {
    let negative = match r.byte()? {
        DECIMAL_ZERO => {
            out.extend_from_slice(&[0, 0, 0, 0, 0]);
            return Ok(());
        }
        DECIMAL_NEGATIVE => true,
        DECIMAL_POSITIVE => false,
        other => return Err(bad(format!("invalid decimal sign byte {other:#04x}"))),
    };
    let outer_mask = r.mask;
    if negative {
        r.mask ^= 0xFF;
    }
    let result = decode_magnitude(r, negative, out);
    r.mask = outer_mask;
    result
}

fn decode_magnitude(
    r: &mut Reader<'_>,
    negative: bool,
    out: &mut Vec<u8>,
) -> Result<(), TypeError> {
    let exponent = (u64::from(r.u32()?) << 32 | u64::from(r.u32()?)) ^ (1 << 63);
    let mut digits = Vec::new();
    loop {
        match r.byte()? {
            0 => break,
            pair @ 1..=100 => digits.extend_from_slice(&[(pair - 1) / 10, (pair - 1) % 10]),
            other => return Err(bad(format!("invalid decimal digit byte {other:#04x}"))),
        }
    }
    while digits.last() == Some(&0) {
        digits.pop();
    }
    pad_to_scale_range(&mut digits, exponent as i64)?;
    let sign = if negative { Sign::Minus } else { Sign::Plus };
    let unscaled = BigInt::from_radix_be(sign, &digits, 10)
        .ok_or_else(|| bad("invalid decimal digits".to_string()))?;
    let scale = i32::try_from(digits.len() as i64 - exponent as i64)
        .map_err(|_| bad("decimal scale out of range".to_string()))?;
    out.extend_from_slice(&scale.to_be_bytes());
    out.extend_from_slice(&unscaled.to_signed_bytes_be());
    Ok(())
}

/// Most trailing zeros put back to bring a normalised scale into the i32 range.
const MAX_SCALE_PADDING: i64 = 1 << 16;

/// Re-appends trailing zeros when dropping them pushed the scale below `i32::MIN` (a value
/// such as unscaled 10 at scale `i32::MIN`), so every encoded decimal decodes.
fn pad_to_scale_range(digits: &mut Vec<u8>, exponent: i64) -> Result<(), TypeError> {
    let missing = exponent + i64::from(i32::MIN) - digits.len() as i64;
    if missing > MAX_SCALE_PADDING {
        return Err(bad("decimal scale out of range".to_string()));
    }
    digits.resize(digits.len() + missing.max(0) as usize, 0);
    Ok(())
}

fn bad(message: String) -> TypeError {
    TypeError(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decimal(scale: i32, unscaled: i64) -> Vec<u8> {
        let mut v = scale.to_be_bytes().to_vec();
        v.extend_from_slice(&BigInt::from(unscaled).to_signed_bytes_be());
        v
    }

    #[test]
    fn varints_compare_numerically_despite_padding() {
        assert_eq!(compare_varint(&[0x00, 0x01], &[0x01]), Ordering::Equal);
        assert_eq!(compare_varint(&[0xFF, 0xFF], &[0xFF]), Ordering::Equal);
        assert_eq!(compare_varint(&[0x00, 0x80], &[0x7F]), Ordering::Greater);
        assert_eq!(compare_varint(&[0xFF, 0x7F], &[0x80]), Ordering::Less);
        assert_eq!(compare_varint(&[0xFF], &[0x00]), Ordering::Less);
        assert_eq!(minimal_varint(&[0x00, 0x00, 0x80]), &[0x00, 0x80]);
    }

    #[test]
    fn decimals_compare_numerically() {
        assert_eq!(
            compare_decimal(&decimal(1, 10), &decimal(2, 100)),
            Ordering::Equal
        );
        assert_eq!(
            compare_decimal(&decimal(0, 0), &decimal(5, 0)),
            Ordering::Equal
        );
        assert_eq!(
            compare_decimal(&decimal(1, 5), &decimal(0, 1)),
            Ordering::Less
        );
        assert_eq!(
            compare_decimal(&decimal(1, -15), &decimal(2, -125)),
            Ordering::Less
        );
        assert_eq!(
            compare_decimal(&decimal(-2, 1), &decimal(0, 99)),
            Ordering::Greater
        );
        assert_eq!(
            compare_decimal(&decimal(0, -1), &decimal(0, 0)),
            Ordering::Less
        );
    }

    #[test]
    fn extreme_scales_decode() {
        for (scale, unscaled) in [
            (i32::MIN, 10),
            (i32::MIN, -1000),
            (i32::MAX, 7),
            (i32::MAX, 10),
        ] {
            let value = decimal(scale, unscaled);
            let mut encoded = Vec::new();
            encode_decimal(&value, &mut encoded);
            let mut decoded = Vec::new();
            decode_decimal(&mut Reader::new(&encoded), &mut decoded).unwrap();
            assert_eq!(
                compare_decimal(&decoded, &value),
                Ordering::Equal,
                "{scale} {unscaled}"
            );
        }
    }

    #[test]
    fn decimal_key_strips_trailing_zeros() {
        let key = decimal_key(&decimal(3, 12300)).unwrap();
        assert_eq!(
            key,
            DecimalKey {
                negative: false,
                exponent: 2,
                digits: vec![1, 2, 3]
            }
        );
    }
}
