//! The one driver every target shares: picks inputs (fresh structured ones, or real seeds
//! mutated), runs the target under `catch_unwind`, and reports panics and violated
//! properties as failures.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard, Once};
use std::thread::ThreadId;

use crate::mutate::mutate;
use crate::rng::Rng;

/// A mutation that knows a target's format: the base input and others to splice from.
pub type Mutator = fn(&mut Rng, &[u8], &[Vec<u8>]) -> Vec<u8>;

/// One fuzz target: a decoder fed untrusted bytes, with what it takes to reach deep into it.
pub struct Target {
    pub name: &'static str,
    /// Real inputs to mutate (statements from the tests, files written by the code, ...).
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// A fresh input built with knowledge of the format.
    pub generate: fn(&mut Rng) -> Vec<u8>,
    /// A mutation that knows the format (tokens, records); byte mutations are added to it.
    pub mutate: Option<Mutator>,
    /// Runs one input. `Err` is a violated property (a wrong answer, a lost record); bad
    /// input answered with a clean error is `Ok`. A panic is caught by the driver.
    pub run: fn(&[u8]) -> Result<(), String>,
    /// Iterations in the short mode of the test suite.
    pub short_iterations: usize,
}

/// An input that made a target panic or break a property.
#[derive(Debug, Clone)]
pub struct Failure {
    pub input: Vec<u8>,
    pub message: String,
}

thread_local! {
    /// Set while a target runs: the panic hook records the message here instead of printing.
    static CAUGHT: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
    /// Set on the threads a target starts for its own work (a runtime's workers): the thread
    /// running the inputs, whose current input their panics fail.
    static OWNER: Cell<Option<ThreadId>> = const { Cell::new(None) };
}

/// The first panic of each owner's helper threads since its last input ended.
static HELPER_PANICS: Mutex<Vec<(ThreadId, String)>> = Mutex::new(Vec::new());

/// Makes a panic on the calling thread a failure of the input `owner` is running, even
/// when something on the way (a runtime running a task) catches it. For the threads a target
/// starts, such as its runtime's workers (`on_thread_start`); `owner` is the thread that
/// called the target, `std::thread::current().id()` there.
pub fn report_panics_to(owner: ThreadId) {
    OWNER.with(|o| o.set(Some(owner)));
}

fn helper_panics() -> MutexGuard<'static, Vec<(ThreadId, String)>> {
    HELPER_PANICS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs (once) a panic hook that stays quiet for panics inside [`run_one`] and on helper
/// threads and records their message and place; other panics go to the previous hook.
fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let recorded = CAUGHT.with(|c| match c.borrow_mut().as_mut() {
                Some(slot) => {
                    *slot = Some(info.to_string());
                    true
                }
                None => false,
            });
            if recorded {
                return;
            }
            if let Some(owner) = OWNER.with(Cell::get) {
                let mut panics = helper_panics();
                if !panics.iter().any(|(o, _)| *o == owner) {
                    panics.push((owner, info.to_string()));
                }
                return;
            }
            previous(info);
        }));
    });
}

/// The panic of the calling thread's helpers, if one panicked.
fn take_helper_panic() -> Option<String> {
    let me = std::thread::current().id();
    let mut panics = helper_panics();
    let at = panics.iter().position(|(owner, _)| *owner == me)?;
    Some(panics.swap_remove(at).1)
}

/// Runs `target` on `input`; a panic becomes `Err("panicked at ...")`, also one that the
/// target caught itself (in a task of its runtime) or that happened on its helper threads.
pub fn run_one(target: &Target, input: &[u8]) -> Result<(), String> {
    install_hook();
    CAUGHT.with(|c| *c.borrow_mut() = Some(None));
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| (target.run)(input)));
    let message = CAUGHT.with(|c| c.borrow_mut().take()).flatten();
    match (outcome, message.or_else(take_helper_panic)) {
        (Err(_), message) => Err(message.unwrap_or_else(|| "panicked".to_string())),
        (Ok(_), Some(message)) => Err(message),
        (Ok(result), None) => result,
    }
}

/// Chooses inputs for one target from a seed of the random generator.
pub struct Fuzzer<'a> {
    target: &'a Target,
    rng: Rng,
    seeds: Vec<Vec<u8>>,
    /// Recently generated inputs: more material to mutate and splice.
    recent: Vec<Vec<u8>>,
}

const RECENT: usize = 64;

impl<'a> Fuzzer<'a> {
    pub fn new(target: &'a Target, seed: u64) -> Fuzzer<'a> {
        Fuzzer {
            target,
            rng: Rng::new(seed),
            seeds: (target.seeds)(),
            recent: Vec::new(),
        }
    }

    /// The next input: a seed as it is (always the first time, then one time in eight), a
    /// fresh structured input, or a seed or recent input mutated.
    pub fn next_input(&mut self, iteration: usize) -> Vec<u8> {
        if iteration == 0 || self.rng.one_in(8) {
            if let Some(seed) = self.seeds.get(self.rng.below(self.seeds.len())) {
                return seed.clone();
            }
        }
        if self.rng.one_in(3) || (self.seeds.is_empty() && self.recent.is_empty()) {
            let fresh = (self.target.generate)(&mut self.rng);
            self.remember(&fresh);
            return fresh;
        }
        let pool = match self.seeds.is_empty() || (self.rng.one_in(3) && !self.recent.is_empty()) {
            true => &self.recent,
            false => &self.seeds,
        };
        let base = self.rng.pick(pool).clone();
        let mut input = match self.target.mutate {
            Some(structured) if self.rng.one_in(2) => structured(&mut self.rng, &base, pool),
            _ => base,
        };
        if input.is_empty() || self.rng.one_in(2) {
            mutate(&mut self.rng, &mut input, pool, 6);
        }
        input
    }

    fn remember(&mut self, input: &[u8]) {
        if self.recent.len() < RECENT {
            self.recent.push(input.to_vec());
        } else {
            let at = self.rng.below(RECENT);
            self.recent[at] = input.to_vec();
        }
    }
}

/// The short mode: `iterations` inputs from `seed`, every failure returned (none expected).
pub fn check(target: &Target, seed: u64, iterations: usize) -> Vec<Failure> {
    let mut fuzzer = Fuzzer::new(target, seed);
    let mut failures = Vec::new();
    for i in 0..iterations {
        let input = fuzzer.next_input(i);
        if let Err(message) = run_one(target, &input) {
            failures.push(Failure { input, message });
        }
    }
    failures
}

/// The short mode as the test suite runs it: `HELENUS_FUZZ_SEED` and
/// `HELENUS_FUZZ_ITERATIONS` (a multiple of the target's own count) can vary it.
pub fn short(target: &Target) {
    let seed = env_number("HELENUS_FUZZ_SEED").unwrap_or(0x4845_4c45);
    let scale = env_number("HELENUS_FUZZ_ITERATIONS").unwrap_or(1).max(1) as usize;
    let failures = check(target, seed, target.short_iterations * scale);
    if let Some(first) = failures.first() {
        panic!(
            "{}: {} failing inputs of {} (seed {seed}); first: {}\ninput ({} bytes): {}",
            target.name,
            failures.len(),
            target.short_iterations * scale,
            first.message,
            first.input.len(),
            hex_preview(&first.input)
        );
    }
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.parse().ok()
}

/// The first 256 bytes in hex.
pub fn hex_preview(bytes: &[u8]) -> String {
    let shown: String = bytes.iter().take(256).map(|b| format!("{b:02x}")).collect();
    match bytes.len() > 256 {
        true => format!("{shown}..."),
        false => shown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panics_on_zero(input: &[u8]) -> Result<(), String> {
        match input.first() {
            Some(0) => panic!("zero byte"),
            Some(1) => Err("property".into()),
            _ => Ok(()),
        }
    }

    fn no_seeds() -> Vec<Vec<u8>> {
        vec![vec![2, 2]]
    }

    fn small(rng: &mut Rng) -> Vec<u8> {
        rng.bytes(2)
    }

    const TOY: Target = Target {
        name: "toy",
        seeds: no_seeds,
        generate: small,
        mutate: None,
        run: panics_on_zero,
        short_iterations: 2000,
    };

    #[test]
    fn panics_and_broken_properties_are_failures_with_their_message() {
        assert_eq!(run_one(&TOY, &[2]), Ok(()));
        assert_eq!(run_one(&TOY, &[1]), Err("property".to_string()));
        let panic = run_one(&TOY, &[0]).expect_err("a panic is a failure");
        assert!(panic.contains("zero byte"), "{panic}");
        assert!(panic.contains("driver.rs"), "the place is kept: {panic}");
    }

    #[test]
    fn check_finds_both_kinds_of_failure_and_is_reproducible() {
        let failures = check(&TOY, 3, 2000);
        assert!(failures.iter().any(|f| f.message.contains("zero byte")));
        assert!(failures.iter().any(|f| f.message == "property"));
        let again = check(&TOY, 3, 2000);
        assert_eq!(failures.len(), again.len());
    }

    /// Panics on zero like the toy, but catches it itself, as a runtime does with a task's.
    fn swallows_its_panic(input: &[u8]) -> Result<(), String> {
        let _ = panic::catch_unwind(|| panics_on_zero(input));
        Ok(())
    }

    /// Panics on zero on a helper thread that reports its panics, and waits for it.
    fn panics_on_a_helper(input: &[u8]) -> Result<(), String> {
        let input = input.to_vec();
        let owner = std::thread::current().id();
        let helper = std::thread::spawn(move || {
            report_panics_to(owner);
            panics_on_zero(&input)
        });
        let _ = helper.join();
        Ok(())
    }

    #[test]
    fn panics_caught_by_the_target_or_on_its_helper_threads_are_failures() {
        for run in [swallows_its_panic, panics_on_a_helper] {
            let target = Target { run, ..TOY };
            assert_eq!(run_one(&target, &[2]), Ok(()));
            let panic = run_one(&target, &[0]).expect_err("the panic is seen");
            assert!(panic.contains("zero byte"), "{panic}");
            assert_eq!(
                run_one(&target, &[2]),
                Ok(()),
                "and blamed on that input only"
            );
        }
    }
}
