//! Two targets that fail the way no real target should, for testing the long mode itself:
//! one overflows its stack (the process aborts) and one never returns, each on inputs that
//! start with its trigger byte. They are found by name but are not in [`ALL`](super::ALL).

use crate::driver::Target;
use crate::rng::Rng;

pub const ABORT_TRIGGER: u8 = 0xAB;
pub const HANG_TRIGGER: u8 = 0xCD;
/// The file the hanging target leaves in its temporary directory.
pub const HANG_LEFTOVER: &str = "self-test-hang.leftover";

pub const ABORTS: Target = Target {
    name: "self-test-abort",
    seeds: no_seeds,
    generate,
    mutate: None,
    run: overflow_on_trigger,
    short_iterations: 0,
};

pub const HANGS: Target = Target {
    name: "self-test-hang",
    seeds: no_seeds,
    generate,
    mutate: None,
    run: hang_on_trigger,
    short_iterations: 0,
};

fn no_seeds() -> Vec<Vec<u8>> {
    Vec::new()
}

fn generate(rng: &mut Rng) -> Vec<u8> {
    rng.bytes(4)
}

fn overflow_on_trigger(input: &[u8]) -> Result<(), String> {
    if input.first() == Some(&ABORT_TRIGGER) {
        std::hint::black_box(deep(u64::MAX));
    }
    Ok(())
}

/// Recurses until the stack runs out.
fn deep(n: u64) -> u64 {
    let frame = std::hint::black_box([n as u8; 512]);
    match n {
        0 => 0,
        _ => deep(n - 1).wrapping_add(u64::from(frame[0])),
    }
}

/// Hangs holding a file in the temporary directory, as a statements node holds its data.
fn hang_on_trigger(input: &[u8]) -> Result<(), String> {
    if input.first() == Some(&HANG_TRIGGER) {
        let _ = std::fs::write(std::env::temp_dir().join(HANG_LEFTOVER), b"left");
    }
    while input.first() == Some(&HANG_TRIGGER) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok(())
}
