//! A linearizability checker: Wing and Gong's search with Lowe's memoisation, as Porcupine
//! (github.com/anishathalye/porcupine) runs it, written here for the tests of this crate and
//! of the node.
//!
//! A history is operations with their call and return times; an operation that never
//! returned (crashed, timed out with its effect unknown) returns at infinity. The history is
//! linearizable if some order of all operations respects real time (one that returned before
//! another was called comes first) and the model accepts each output in that order. The
//! search takes calls in time order, linearizes one whose step the model accepts, and
//! backtracks at the first return whose call it could not linearize; a set of linearized
//! operations with a model state already tried is not tried again.
mod register;
mod row;

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::marker::PhantomData;

pub use register::{check_registers, Register, RegisterInput, RegisterOutput};
pub use row::{check_rows, Row, RowInput, RowOutput};

/// A sequential specification.
pub trait Model {
    type State: Clone + Eq + Hash;
    type Input;
    type Output;

    fn init(&self) -> Self::State;
    /// The state after `input` answered `output` in `state`, or `None` if it cannot.
    fn step(
        &self,
        state: &Self::State,
        input: &Self::Input,
        output: &Self::Output,
    ) -> Option<Self::State>;
}

/// One operation of a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation<I, O> {
    pub input: I,
    pub output: O,
    pub call: u64,
    /// `None` for an operation that never returned: it may take effect at any time after its
    /// call, or never.
    pub ret: Option<u64>,
}

/// The operations of a history under `M`.
pub type History<M> = Vec<Operation<<M as Model>::Input, <M as Model>::Output>>;

/// Whether `history` is linearizable under `model`.
pub fn check<M: Model>(model: &M, history: &[Operation<M::Input, M::Output>]) -> bool {
    Search::new(history).run(model, history)
}

/// Checks each part of `history` on its own (Porcupine's partitioning: operations on
/// different keys of a map of registers never constrain each other).
pub fn check_parts<M: Model, K: Eq + Hash>(
    model: &M,
    history: &[Operation<M::Input, M::Output>],
    part: impl Fn(&M::Input) -> K,
) -> bool
where
    M::Input: Clone,
    M::Output: Clone,
{
    let mut parts: HashMap<K, History<M>> = HashMap::new();
    for operation in history {
        let key = part(&operation.input);
        parts.entry(key).or_default().push(operation.clone());
    }
    parts.values().all(|operations| check(model, operations))
}

/// An operation of `M` on the register named by a `K`.
type KeyedOperation<M, K> = Operation<(K, <M as Model>::Input), <M as Model>::Output>;

/// Checks a history of `(key, input)` operations under `model`, each key on its own.
fn check_keyed<M: Model, K: Clone + Eq + Hash>(model: M, history: &[KeyedOperation<M, K>]) -> bool
where
    M::Input: Clone,
    M::Output: Clone,
{
    check_parts(&Keyed(model, PhantomData), history, |(key, _)| key.clone())
}

/// `M` on the inputs of one key.
struct Keyed<M, K>(M, PhantomData<K>);

impl<M: Model, K> Model for Keyed<M, K> {
    type State = M::State;
    type Input = (K, M::Input);
    type Output = M::Output;

    fn init(&self) -> M::State {
        self.0.init()
    }

    fn step(&self, state: &M::State, input: &Self::Input, output: &M::Output) -> Option<M::State> {
        self.0.step(state, &input.1, output)
    }
}

const NIL: usize = usize::MAX;

/// The search's doubly linked list of call and return events in time order; node 0 is the
/// head, node `2i + 1` the call of operation `i`, `2i + 2` its return.
struct Search {
    next: Vec<usize>,
    prev: Vec<usize>,
}

fn call_node(operation: usize) -> usize {
    2 * operation + 1
}

fn return_node(operation: usize) -> usize {
    2 * operation + 2
}

/// The operation of a node and whether the node is its return.
fn event_of(node: usize) -> (usize, bool) {
    ((node - 1) / 2, node.is_multiple_of(2))
}

impl Search {
    fn new<I, O>(history: &[Operation<I, O>]) -> Self {
        let mut events: Vec<(u64, bool, usize)> = Vec::with_capacity(2 * history.len());
        for (i, operation) in history.iter().enumerate() {
            events.push((operation.call, false, call_node(i)));
            events.push((operation.ret.unwrap_or(u64::MAX), true, return_node(i)));
        }
        // Calls before returns at equal times: such operations overlap.
        events.sort();
        let size = 2 * history.len() + 1;
        let mut search = Search {
            next: vec![NIL; size],
            prev: vec![NIL; size],
        };
        let mut last = 0;
        for &(_, _, node) in &events {
            search.next[last] = node;
            search.prev[node] = last;
            last = node;
        }
        search
    }

    fn lift(&mut self, node: usize) {
        let (prev, next) = (self.prev[node], self.next[node]);
        self.next[prev] = next;
        if next != NIL {
            self.prev[next] = prev;
        }
    }

    /// Puts back a node lifted last (its own links were kept).
    fn unlift(&mut self, node: usize) {
        let (prev, next) = (self.prev[node], self.next[node]);
        self.next[prev] = node;
        if next != NIL {
            self.prev[next] = node;
        }
    }

    fn run<M: Model>(mut self, model: &M, history: &[Operation<M::Input, M::Output>]) -> bool {
        let mut state = model.init();
        let mut linearized = Bits::new(history.len());
        let mut tried: HashSet<(Bits, M::State)> = HashSet::new();
        let mut stack: Vec<(usize, M::State)> = Vec::new();
        let mut node = self.next[0];
        while self.next[0] != NIL {
            let (i, is_return) = event_of(node);
            if is_return {
                // The call of this operation could not be linearized before its return.
                let Some((operation, before)) = stack.pop() else {
                    return false;
                };
                state = before;
                linearized.clear(operation);
                self.unlift(return_node(operation));
                self.unlift(call_node(operation));
                node = self.next[call_node(operation)];
                continue;
            }
            let operation = &history[i];
            if let Some(after) = model.step(&state, &operation.input, &operation.output) {
                let mut with = linearized.clone();
                with.set(i);
                if tried.insert((with.clone(), after.clone())) {
                    stack.push((i, std::mem::replace(&mut state, after)));
                    linearized = with;
                    self.lift(call_node(i));
                    self.lift(return_node(i));
                    node = self.next[0];
                    continue;
                }
            }
            node = self.next[node];
        }
        true
    }
}

/// A set of operations.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(len: usize) -> Self {
        Bits(vec![0; len.div_ceil(64)])
    }

    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    fn clear(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
}

#[cfg(test)]
mod tests;
