//! The state of one group of an aggregation: each aggregate's accumulator and the first
//! row's leaves (plain selectors next to aggregates show the group's first row).
use bytes::Bytes;
use types::CqlResult;

use super::Evaluator;
use crate::functions::Accumulator;
use crate::rows::RowView;

pub struct GroupState {
    accumulators: Vec<Box<dyn Accumulator>>,
    first: Option<Vec<Option<Bytes>>>,
}

impl GroupState {
    pub fn new(eval: &Evaluator<'_>) -> GroupState {
        let accumulators = eval
            .selection
            .aggregates
            .iter()
            .filter_map(|a| a.function.accumulator())
            .collect();
        GroupState {
            accumulators,
            first: None,
        }
    }

    /// Whether no row was added yet.
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// Feeds one row to every aggregate.
    pub fn add(&mut self, eval: &Evaluator<'_>, view: &RowView) -> CqlResult<()> {
        let leaves = eval.leaves(view)?;
        for (call, acc) in eval.selection.aggregates.iter().zip(&mut self.accumulators) {
            let args = eval.nodes(&call.args, &leaves, &[])?;
            let decoded = call.function.decode(&args)?;
            acc.add(&decoded)?;
        }
        if self.first.is_none() {
            self.first = Some(leaves);
        }
        Ok(())
    }

    /// The group's output row.
    pub fn finish(&self, eval: &Evaluator<'_>) -> CqlResult<Vec<Option<Bytes>>> {
        let results = self
            .accumulators
            .iter()
            .map(|acc| acc.result().map(|v| v.map(|v| v.to_bytes())))
            .collect::<CqlResult<Vec<_>>>()?;
        let none = vec![None; eval.selection.leaves.len()];
        let leaves = self.first.as_ref().unwrap_or(&none);
        eval.nodes(&eval.selection.outputs, leaves, &results)
    }
}
