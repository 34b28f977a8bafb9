//! Byte-level mutations of an input, the part of every target's mutator that knows nothing
//! of the format: bit flips, boundary values, insertions, deletions, duplications and
//! splices from other inputs.

use crate::rng::Rng;

/// Inputs never grow past this (a mutated length field can otherwise ask for a lot).
pub const MAX_INPUT: usize = 1 << 20;

/// Applies one to `rounds` random byte mutations to `input`, splicing from `others`.
pub fn mutate(rng: &mut Rng, input: &mut Vec<u8>, others: &[Vec<u8>], rounds: usize) {
    for _ in 0..1 + rng.below(rounds.max(1)) {
        mutate_once(rng, input, others);
    }
    input.truncate(MAX_INPUT);
}

fn mutate_once(rng: &mut Rng, input: &mut Vec<u8>, others: &[Vec<u8>]) {
    if input.is_empty() {
        let n = 1 + rng.size(64);
        input.extend(rng.bytes(n));
        return;
    }
    match rng.below(10) {
        0 => flip_bit(rng, input),
        1 => set_byte(rng, input),
        2 => add_to_byte(rng, input),
        3 => write_integer(rng, input),
        4 => insert_random(rng, input),
        5 => delete_range(rng, input),
        6 => duplicate_range(rng, input),
        7 => input.truncate(rng.below(input.len())),
        _ => splice(rng, input, others),
    }
}

fn flip_bit(rng: &mut Rng, input: &mut [u8]) {
    let at = rng.below(input.len());
    input[at] ^= 1 << rng.below(8);
}

fn set_byte(rng: &mut Rng, input: &mut [u8]) {
    const INTERESTING: [u8; 8] = [0, 1, 0x7f, 0x80, 0xff, 0xfe, b'\'', b'('];
    let at = rng.below(input.len());
    input[at] = if rng.one_in(2) {
        *rng.pick(&INTERESTING)
    } else {
        rng.byte()
    };
}

fn add_to_byte(rng: &mut Rng, input: &mut [u8]) {
    let at = rng.below(input.len());
    let delta = 1 + rng.below(16) as u8;
    input[at] = if rng.one_in(2) {
        input[at].wrapping_add(delta)
    } else {
        input[at].wrapping_sub(delta)
    };
}

/// Overwrites 1, 2, 4 or 8 bytes with a boundary integer, big- or little-endian (lengths and
/// counts are the fields most worth breaking).
fn write_integer(rng: &mut Rng, input: &mut [u8]) {
    let width = *rng.pick(&[1usize, 2, 4, 8]);
    if input.len() < width {
        return;
    }
    let value = match rng.below(3) {
        0 => rng.edgy_i64(),
        1 => input.len() as i64 + rng.below(9) as i64 - 4,
        _ => rng.below(64) as i64,
    };
    let bytes = if rng.one_in(4) {
        value.to_le_bytes()
    } else {
        value.to_be_bytes()
    };
    let at = rng.below(input.len() - width + 1);
    let source = if rng.one_in(4) {
        &bytes[..width]
    } else {
        &bytes[8 - width..]
    };
    input[at..at + width].copy_from_slice(source);
}

fn insert_random(rng: &mut Rng, input: &mut Vec<u8>) {
    let at = rng.below(input.len() + 1);
    let n = 1 + rng.size(128);
    let fill: Vec<u8> = if rng.one_in(3) {
        vec![rng.byte(); n]
    } else {
        rng.bytes(n)
    };
    input.splice(at..at, fill);
}

fn range(rng: &mut Rng, len: usize) -> std::ops::Range<usize> {
    let start = rng.below(len);
    let n = 1 + rng.size(len - start - 1);
    start..start + n
}

fn delete_range(rng: &mut Rng, input: &mut Vec<u8>) {
    let r = range(rng, input.len());
    input.drain(r);
}

fn duplicate_range(rng: &mut Rng, input: &mut Vec<u8>) {
    let r = range(rng, input.len());
    let copy = input[r].to_vec();
    let at = rng.below(input.len() + 1);
    if rng.one_in(2) {
        input.splice(at..at, copy);
    } else {
        let end = (at + copy.len()).min(input.len());
        input.splice(at..end, copy);
    }
}

/// Replaces a range of `input` with a range of another input (or of itself).
fn splice(rng: &mut Rng, input: &mut Vec<u8>, others: &[Vec<u8>]) {
    let other = match others.is_empty() {
        true => input.clone(),
        false => rng.pick(others).clone(),
    };
    if other.is_empty() {
        return;
    }
    let from = range(rng, other.len());
    let to = range(rng, input.len());
    input.splice(to, other[from].iter().copied());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_stay_within_the_input_limit_and_change_the_input() {
        let mut rng = Rng::new(7);
        let others = vec![vec![9u8; 300]];
        let mut changed = 0;
        for _ in 0..2000 {
            let original = vec![1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10];
            let mut input = original.clone();
            mutate(&mut rng, &mut input, &others, 4);
            assert!(input.len() <= MAX_INPUT);
            changed += usize::from(input != original);
        }
        assert!(
            changed > 1800,
            "only {changed} of 2000 mutations changed the input"
        );
    }
}
