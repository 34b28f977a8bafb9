//! The mutation codec (`mutation::codec`), which the commit log, SSTables and internode
//! messages share: any bytes decode to a mutation or a clean error, and a decoded mutation
//! encodes back to exactly the bytes it was read from (the compact row form has one
//! encoding), unless it held legacy rows: then it encodes shorter, to the same mutation.

use mutation::codec::{put_mutation, Reader};

use super::model;
use crate::driver::Target;
use crate::rng::Rng;

pub const TARGET: Target = Target {
    name: "mutation",
    seeds,
    generate,
    mutate: None,
    run,
    short_iterations: 3000,
};

fn seeds() -> Vec<Vec<u8>> {
    let mut rng = Rng::new(11);
    (0..16).map(|_| generate(&mut rng)).collect()
}

fn generate(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    put_mutation(&mut out, &model::mutation(rng));
    out
}

fn run(input: &[u8]) -> Result<(), String> {
    let mut reader = Reader { bytes: input };
    let Ok(decoded) = reader.mutation() else {
        return Ok(());
    };
    let consumed = &input[..input.len() - reader.bytes.len()];
    let mut again = Vec::new();
    put_mutation(&mut again, &decoded);
    if again == consumed {
        return Ok(());
    }
    // Only a legacy row re-encodes differently, and always shorter (see `codec::legacy`).
    let redecoded = Reader { bytes: &again }.mutation();
    if again.len() >= consumed.len() || redecoded.as_ref() != Ok(&decoded) {
        return Err(format!(
            "mutation re-encodes to {} bytes differing from the {} it was decoded from",
            again.len(),
            consumed.len()
        ));
    }
    Ok(())
}
