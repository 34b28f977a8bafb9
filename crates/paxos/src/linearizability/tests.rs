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
