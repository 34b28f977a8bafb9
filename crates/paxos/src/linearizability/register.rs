//! A register with reads, writes and compare-and-set, starting at 0 (Knossos' `cas-register`).
use std::hash::Hash;

use super::{check_keyed, Model, Operation};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegisterInput {
    Read,
    Write(i64),
    Cas { expect: i64, new: i64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegisterOutput {
    /// A read's value.
    Value(i64),
    /// A write, or a compare-and-set that applied.
    Done,
    /// A compare-and-set that did not apply, with the value it saw.
    NotApplied(i64),
    /// No answer: the operation may have taken effect or not (it returns at infinity).
    Unknown,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Register;

impl Model for Register {
    type State = i64;
    type Input = RegisterInput;
    type Output = RegisterOutput;

    fn init(&self) -> i64 {
        0
    }

    fn step(&self, state: &i64, input: &RegisterInput, output: &RegisterOutput) -> Option<i64> {
        use RegisterInput::*;
        use RegisterOutput::*;
        let state = *state;
        match (*input, *output) {
            (Read, Value(v)) => (v == state).then_some(state),
            (Read, Unknown) => Some(state),
            (Write(v), Done | Unknown) => Some(v),
            (Cas { expect, new }, Done) => (state == expect).then_some(new),
            (Cas { expect, .. }, NotApplied(seen)) => {
                (seen == state && seen != expect).then_some(state)
            }
            (Cas { expect, new }, Unknown) => Some(if state == expect { new } else { state }),
            _ => None,
        }
    }
}

/// Whether a history of registers named by `K` is linearizable, each register on its own.
pub fn check_registers<K: Clone + Eq + Hash>(
    history: &[Operation<(K, RegisterInput), RegisterOutput>],
) -> bool {
    check_keyed(Register, history)
}
