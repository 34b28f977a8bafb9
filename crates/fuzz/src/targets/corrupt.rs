//! Corruption of files on disk, driven by the input: a program of 8-byte operations, each
//! `[file][kind][offset u32][length][value]`, that flips bits, overwrites, truncates,
//! zeroes, moves, inserts and deletes bytes, or pastes bytes from another file of the same
//! kind. The storage targets apply a program to copies of real files and record where each
//! file was first damaged: what lies wholly before that point must still be read back.

use crate::rng::Rng;

const OP_LEN: usize = 8;
const KINDS: u8 = 8;

/// Runs `program` over `files`; returns, per file, the first offset it changed (`None`: the
/// file is intact). `donors[i]` holds other files of the kind of file `i`.
pub fn apply(program: &[u8], files: &mut [Vec<u8>], donors: &[Vec<&[u8]>]) -> Vec<Option<usize>> {
    let mut damage = vec![None; files.len()];
    if files.is_empty() {
        return damage;
    }
    for op in program.chunks_exact(OP_LEN) {
        let index = usize::from(op[0]) % files.len();
        let file = &mut files[index];
        let offset = u32::from_be_bytes([op[2], op[3], op[4], op[5]]) as usize % (file.len() + 1);
        let (len, value) = (usize::from(op[6]), op[7]);
        let none: &[&[u8]] = &[];
        let donor = donors.get(index).map_or(none, Vec::as_slice);
        if let Some(at) = run_op(op[1] % KINDS, file, offset, len, value, donor) {
            damage[index] = Some(damage[index].map_or(at, |d: usize| d.min(at)));
        }
    }
    damage
}

/// Applies one operation; returns the first offset it may have changed.
fn run_op(
    kind: u8,
    file: &mut Vec<u8>,
    at: usize,
    len: usize,
    value: u8,
    donors: &[&[u8]],
) -> Option<usize> {
    let size = file.len();
    match kind {
        0 if at < size => file[at] ^= 1 << (value % 8),
        1 if at < size => file[at] = value,
        2 => file.truncate(at),
        3 => file[at..(at + 16 * len + 1).min(size)].fill(0),
        4 => {
            let to = (at + usize::from(value) * 61) % (size + 1);
            let piece: Vec<u8> = file[at..(at + 16 * len + 1).min(size)].to_vec();
            let end = (to + piece.len()).min(size);
            file.splice(to..end, piece);
            return Some(at.min(to));
        }
        5 => {
            file.splice(at..at, std::iter::repeat_n(value, len + 1));
        }
        6 => {
            file.drain(at..(at + len + 1).min(size));
        }
        7 if !donors.is_empty() => {
            let donor = donors[usize::from(value) % donors.len()];
            let end = (at + 64 * (len + 1)).min(size).min(donor.len());
            if at < end {
                file[at..end].copy_from_slice(&donor[at..end]);
            }
        }
        _ => return None,
    }
    Some(at)
}

/// A program of one to four operations over `files` files of about `size` bytes.
pub fn program(rng: &mut Rng, files: usize, size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..1 + rng.below(4) {
        out.push(rng.below(files) as u8);
        out.push(rng.below(usize::from(KINDS)) as u8);
        let offset = match rng.one_in(3) {
            true => rng.below(64),
            false => rng.below(size.max(1)),
        };
        out.extend_from_slice(&(offset as u32).to_be_bytes());
        out.push(rng.byte());
        out.push(rng.byte());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damage_is_the_first_offset_any_operation_touched() {
        let mut files = vec![vec![0u8; 100], vec![1u8; 100]];
        // Flip a bit at 40 in file 0, then truncate file 0 at 70, and set byte 5 of file 1
        // to the value it already had.
        let program = [
            [0, 0, 0, 0, 0, 40, 0, 3],
            [0, 2, 0, 0, 0, 70, 0, 0],
            [1, 1, 0, 0, 0, 5, 0, 1],
        ]
        .concat();
        let damage = apply(&program, &mut files, &[]);
        assert_eq!(damage, vec![Some(40), Some(5)]);
        assert_eq!(files[0].len(), 70);
        assert_eq!(files[0][40], 8);
    }
}
