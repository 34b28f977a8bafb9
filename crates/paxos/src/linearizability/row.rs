//! A CQL row with one value column under lightweight transactions: absent at first, read at
//! SERIAL, `INSERT … IF NOT EXISTS`, `UPDATE … SET v = ? IF v = ?` and `DELETE … IF EXISTS`.
use std::hash::Hash;

use super::{check_keyed, Model, Operation};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowInput {
    Read,
    InsertIfNotExists(i64),
    UpdateIf { expect: i64, new: i64 },
    DeleteIfExists,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowOutput {
    /// A read's value (`None`: no row).
    Value(Option<i64>),
    /// `[applied]` true.
    Applied,
    /// `[applied]` false, with the value the statement saw (`None`: no row).
    NotApplied(Option<i64>),
    /// No answer (a timeout, CAS_WRITE_UNKNOWN): applied or not, at any time after its call.
    Unknown,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Row;

impl Row {
    /// What `input` does on `state`: whether its condition holds, and the state after.
    fn apply(state: Option<i64>, input: RowInput) -> (bool, Option<i64>) {
        match input {
            RowInput::Read => (true, state),
            RowInput::InsertIfNotExists(v) => match state {
                None => (true, Some(v)),
                Some(_) => (false, state),
            },
            RowInput::UpdateIf { expect, new } => match state {
                Some(v) if v == expect => (true, Some(new)),
                _ => (false, state),
            },
            RowInput::DeleteIfExists => (state.is_some(), None),
        }
    }
}

impl Model for Row {
    type State = Option<i64>;
    type Input = RowInput;
    type Output = RowOutput;

    fn init(&self) -> Option<i64> {
        None
    }

    fn step(
        &self,
        state: &Option<i64>,
        input: &RowInput,
        output: &RowOutput,
    ) -> Option<Option<i64>> {
        let state = *state;
        let (holds, after) = Row::apply(state, *input);
        match (*input, *output) {
            (RowInput::Read, RowOutput::Value(v)) => (v == state).then_some(state),
            (RowInput::Read, _) => None,
            (_, RowOutput::Applied) => holds.then_some(after),
            (_, RowOutput::NotApplied(seen)) => (!holds && seen == state).then_some(state),
            (_, RowOutput::Unknown) => Some(if holds { after } else { state }),
            (_, RowOutput::Value(_)) => None,
        }
    }
}

/// Whether a history of rows named by `K` is linearizable, each row on its own.
pub fn check_rows<K: Clone + Eq + Hash>(history: &[Operation<(K, RowInput), RowOutput>]) -> bool {
    check_keyed(Row, history)
}
