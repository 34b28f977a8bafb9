use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use RegisterInput::*;
use RegisterOutput::*;

type Op = Operation<RegisterInput, RegisterOutput>;

fn op(input: RegisterInput, output: RegisterOutput, call: u64, ret: u64) -> Op {
    Operation {
        input,
        output,
        call,
        ret: Some(ret),
    }
}

fn unknown(input: RegisterInput, call: u64) -> Op {
    Operation {
        input,
        output: Unknown,
        call,
        ret: None,
    }
}

fn linearizable(history: &[Op]) -> bool {
    check(&Register, history)
}

#[test]
fn sequential_and_overlapping_histories_that_are_linearizable() {
    assert!(linearizable(&[]));
    assert!(linearizable(&[
        op(Write(1), Done, 0, 1),
        op(Read, Value(1), 2, 3),
        op(Cas { expect: 1, new: 2 }, Done, 4, 5),
        op(Cas { expect: 1, new: 3 }, NotApplied(2), 6, 7),
        op(Read, Value(2), 8, 9),
    ]));
    // A read overlapping a write may see either value, and reads inside one write's span
    // may see the change happen between them.
    assert!(linearizable(&[
        op(Write(1), Done, 0, 10),
        op(Read, Value(0), 1, 2),
        op(Read, Value(1), 3, 4),
    ]));
    // Two overlapping compare-and-sets from 0: one wins, the other sees its value.
    assert!(linearizable(&[
        op(Cas { expect: 0, new: 1 }, NotApplied(2), 0, 5),
        op(Cas { expect: 0, new: 2 }, Done, 1, 4),
    ]));
}

#[test]
fn a_stale_read_is_caught() {
    assert!(!linearizable(&[
        op(Write(1), Done, 0, 1),
        op(Read, Value(0), 2, 3),
    ]));
}

#[test]
fn a_lost_write_is_caught() {
    assert!(!linearizable(&[
        op(Write(1), Done, 0, 1),
        op(Write(2), Done, 2, 3),
        op(Read, Value(1), 4, 5),
    ]));
}

#[test]
fn two_winning_compare_and_sets_from_one_value_are_caught() {
    assert!(!linearizable(&[
        op(Cas { expect: 0, new: 1 }, Done, 0, 1),
        op(Cas { expect: 0, new: 2 }, Done, 2, 3),
    ]));
    // A failed compare-and-set must have seen the value then.
    assert!(!linearizable(&[
        op(Write(1), Done, 0, 1),
        op(Cas { expect: 5, new: 6 }, NotApplied(0), 2, 3),
    ]));
}

#[test]
fn a_read_going_back_during_a_write_is_caught() {
    assert!(!linearizable(&[
        op(Write(1), Done, 0, 10),
        op(Read, Value(1), 1, 2),
        op(Read, Value(0), 3, 4),
    ]));
}

#[test]
fn an_operation_without_an_answer_may_take_effect_late_or_never() {
    // Seen only after later operations.
    assert!(linearizable(&[
        unknown(Write(1), 0),
        op(Read, Value(0), 5, 6),
        op(Read, Value(1), 7, 8),
    ]));
    // Never seen.
    assert!(linearizable(&[
        unknown(Write(1), 0),
        op(Read, Value(0), 5, 6)
    ]));
    // But once seen, it stays.
    assert!(!linearizable(&[
        unknown(Write(1), 0),
        op(Read, Value(1), 5, 6),
        op(Read, Value(0), 7, 8),
    ]));
    // A compare-and-set of unknown outcome applies only where its condition held.
    assert!(!linearizable(&[
        unknown(Cas { expect: 3, new: 1 }, 0),
        op(Read, Value(1), 5, 6),
    ]));
}

#[test]
fn a_compare_and_set_applied_on_a_value_no_write_produced_is_caught() {
    assert!(!linearizable(&[
        op(Write(1), Done, 0, 1),
        op(Cas { expect: 7, new: 8 }, Done, 2, 3),
    ]));
    // Nor may a read see a value no operation wrote, even one of unknown outcome.
    assert!(!linearizable(&[
        unknown(Write(1), 0),
        op(Read, Value(9), 2, 3),
    ]));
}

/// CASSANDRA-12126: a compare-and-set 0 -> 1 times out after one replica accepted it; a read
/// misses it, a compare-and-set 0 -> 2 applies, and a later round replays the stale accepted
/// proposal, so 1 shows up although its condition no longer held.
#[test]
fn a_timed_out_compare_and_set_replayed_after_a_newer_one_is_caught() {
    let replayed = [
        unknown(Cas { expect: 0, new: 1 }, 0),
        op(Read, Value(0), 2, 3),
        op(Cas { expect: 0, new: 2 }, Done, 4, 5),
        op(Read, Value(1), 6, 7),
    ];
    assert!(!linearizable(&replayed));
    // Taking effect before the second compare-and-set is fine, as then that one fails.
    assert!(linearizable(&[
        unknown(Cas { expect: 0, new: 1 }, 0),
        op(Read, Value(0), 2, 3),
        op(Cas { expect: 0, new: 2 }, NotApplied(1), 4, 5),
        op(Read, Value(1), 6, 7),
    ]));
}

#[test]
fn keys_are_checked_apart() {
    type Keyed = Operation<(u8, RegisterInput), RegisterOutput>;
    let keyed = |key, input, output, call, ret| Keyed {
        input: (key, input),
        output,
        call,
        ret: Some(ret),
    };
    let history = [
        keyed(1, Write(1), Done, 0, 1),
        keyed(2, Read, Value(0), 2, 3),
        keyed(1, Read, Value(1), 4, 5),
    ];
    assert!(check_registers(&history));
    // As one register it is not linearizable: the read of key 2 is stale for key 1.
    let one: Vec<Op> = history
        .iter()
        .map(|o| op(o.input.1, o.output, o.call, o.ret.unwrap()))
        .collect();
    assert!(!linearizable(&one));
}

/// Every order respecting real time, tried one by one.
fn brute_force(history: &[Op]) -> bool {
    fn search(history: &[Op], done: &mut Vec<bool>, state: i64) -> bool {
        if done.iter().all(|d| *d) {
            return true;
        }
        for (i, operation) in history.iter().enumerate() {
            if done[i] {
                continue;
            }
            // Every operation that returned before this one's call must come first.
            let must_wait = history.iter().enumerate().any(|(j, other)| {
                !done[j] && j != i && other.ret.is_some_and(|ret| ret < operation.call)
            });
            if must_wait {
                continue;
            }
            if let Some(after) = Register.step(&state, &operation.input, &operation.output) {
                done[i] = true;
                if search(history, done, after) {
                    return true;
                }
                done[i] = false;
            }
        }
        false
    }
    search(history, &mut vec![false; history.len()], 0)
}

/// A history a real register could give (each operation takes effect at a random time in its
/// span), then with some outputs changed.
fn random_history(rng: &mut SmallRng) -> Vec<Op> {
    let len = rng.random_range(1..=7);
    let mut history: Vec<(Op, u64)> = (0..len)
        .map(|_| {
            let call = rng.random_range(0..20);
            let ret = call + rng.random_range(1..8);
            let input = match rng.random_range(0..3) {
                0 => Read,
                1 => Write(rng.random_range(0..3)),
                _ => Cas {
                    expect: rng.random_range(0..3),
                    new: rng.random_range(0..3),
                },
            };
            let at = rng.random_range(call..ret);
            (op(input, Unknown, call, ret), at)
        })
        .collect();
    history.sort_by_key(|(_, at)| *at);
    let mut state = 0;
    for (operation, _) in history.iter_mut() {
        operation.output = match operation.input {
            Read => Value(state),
            Write(v) => {
                state = v;
                Done
            }
            Cas { expect, new } if state == expect => {
                state = new;
                Done
            }
            Cas { .. } => NotApplied(state),
        };
        if rng.random_bool(0.1) {
            operation.output = Unknown;
            operation.ret = None;
        }
        if rng.random_bool(0.15) {
            operation.output = match operation.output {
                Value(v) => Value((v + 1) % 3),
                NotApplied(v) => NotApplied((v + 1) % 3),
                other => other,
            };
        }
    }
    history
        .into_iter()
        .map(|(operation, _)| operation)
        .collect()
}

#[test]
fn agrees_with_brute_force_on_random_small_histories() {
    let mut rng = SmallRng::seed_from_u64(20261207);
    let (mut good, mut bad) = (0, 0);
    for _ in 0..5_000 {
        let history = random_history(&mut rng);
        let expected = brute_force(&history);
        assert_eq!(linearizable(&history), expected, "{history:#?}");
        if expected {
            good += 1;
        } else {
            bad += 1;
        }
    }
    assert!(
        good > 1_000 && bad > 1_000,
        "{good} linearizable, {bad} not"
    );
}

mod rows {
    use super::super::{check, check_rows, Operation, Row, RowInput, RowOutput};
    use RowInput::*;
    use RowOutput::*;

    type RowOp = Operation<RowInput, RowOutput>;

    fn op(input: RowInput, output: RowOutput, call: u64, ret: u64) -> RowOp {
        Operation {
            input,
            output,
            call,
            ret: Some(ret),
        }
    }

    fn unknown(input: RowInput, call: u64) -> RowOp {
        Operation {
            input,
            output: Unknown,
            call,
            ret: None,
        }
    }

    fn linearizable(history: &[RowOp]) -> bool {
        check(&Row, history)
    }

    #[test]
    fn every_statement_in_order_is_linearizable() {
        assert!(linearizable(&[
            op(Read, Value(None), 0, 1),
            op(InsertIfNotExists(1), Applied, 2, 3),
            op(InsertIfNotExists(2), NotApplied(Some(1)), 4, 5),
            op(UpdateIf { expect: 1, new: 3 }, Applied, 6, 7),
            op(UpdateIf { expect: 1, new: 4 }, NotApplied(Some(3)), 8, 9),
            op(Read, Value(Some(3)), 10, 11),
            op(DeleteIfExists, Applied, 12, 13),
            op(DeleteIfExists, NotApplied(None), 14, 15),
            op(UpdateIf { expect: 3, new: 5 }, NotApplied(None), 16, 17),
            op(InsertIfNotExists(6), Applied, 18, 19),
        ]));
    }

    #[test]
    fn two_inserts_if_not_exists_that_both_applied_are_caught() {
        assert!(!linearizable(&[
            op(InsertIfNotExists(1), Applied, 0, 10),
            op(InsertIfNotExists(2), Applied, 1, 9),
        ]));
        // Unless a delete came between them.
        assert!(linearizable(&[
            op(InsertIfNotExists(1), Applied, 0, 10),
            op(DeleteIfExists, Applied, 2, 8),
            op(InsertIfNotExists(2), Applied, 1, 9),
        ]));
    }

    #[test]
    fn a_stale_serial_read_after_a_completed_statement_is_caught() {
        assert!(!linearizable(&[
            op(InsertIfNotExists(1), Applied, 0, 1),
            op(Read, Value(None), 2, 3),
        ]));
        assert!(!linearizable(&[
            op(InsertIfNotExists(1), Applied, 0, 1),
            op(DeleteIfExists, Applied, 2, 3),
            op(Read, Value(Some(1)), 4, 5),
        ]));
    }

    #[test]
    fn a_statement_not_applied_must_have_seen_the_value_of_its_time() {
        // The update saw a row that the delete had removed before it was called.
        assert!(!linearizable(&[
            op(InsertIfNotExists(1), Applied, 0, 1),
            op(DeleteIfExists, Applied, 2, 3),
            op(UpdateIf { expect: 5, new: 6 }, NotApplied(Some(1)), 4, 5),
        ]));
        // An update whose condition held cannot report it did not apply.
        assert!(!linearizable(&[
            op(InsertIfNotExists(1), Applied, 0, 1),
            op(UpdateIf { expect: 1, new: 2 }, NotApplied(Some(1)), 2, 3),
        ]));
    }

    #[test]
    fn statements_of_unknown_outcome_apply_where_their_condition_held_or_never() {
        // A timed-out insert seen late.
        assert!(linearizable(&[
            unknown(InsertIfNotExists(1), 0),
            op(Read, Value(None), 2, 3),
            op(Read, Value(Some(1)), 4, 5),
        ]));
        // A timed-out update whose condition never held cannot have applied.
        assert!(!linearizable(&[
            op(InsertIfNotExists(1), Applied, 0, 1),
            unknown(UpdateIf { expect: 9, new: 2 }, 2),
            op(Read, Value(Some(2)), 4, 5),
        ]));
        // A timed-out delete then insert: the insert applied, so the delete did first.
        assert!(linearizable(&[
            op(InsertIfNotExists(1), Applied, 0, 1),
            unknown(DeleteIfExists, 2),
            op(InsertIfNotExists(3), Applied, 4, 5),
        ]));
        // The CASSANDRA-12126 shape with rows: the timed-out insert shows up after another
        // insert won the empty row.
        assert!(!linearizable(&[
            unknown(InsertIfNotExists(1), 0),
            op(Read, Value(None), 2, 3),
            op(InsertIfNotExists(2), Applied, 4, 5),
            op(Read, Value(Some(1)), 6, 7),
        ]));
    }

    #[test]
    fn rows_of_different_keys_are_checked_apart() {
        let keyed = |key: u8, input, output, call, ret| Operation {
            input: (key, input),
            output,
            call,
            ret: Some(ret),
        };
        assert!(check_rows(&[
            keyed(1, InsertIfNotExists(1), Applied, 0, 1),
            keyed(2, InsertIfNotExists(2), Applied, 2, 3),
            keyed(2, Read, Value(Some(2)), 4, 5),
        ]));
        assert!(!check_rows(&[
            keyed(1, InsertIfNotExists(1), Applied, 0, 1),
            keyed(2, InsertIfNotExists(2), Applied, 2, 3),
            keyed(1, Read, Value(Some(2)), 4, 5),
        ]));
    }
}
