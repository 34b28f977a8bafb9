//! The short mode of every fuzz target, as the test suite runs it: a fixed seed and a few
//! hundred to a few thousand inputs each (`HELENUS_FUZZ_SEED`, `HELENUS_FUZZ_ITERATIONS`
//! vary them). The long mode is `tests/fuzz/run-long`.

use fuzz::driver::short;
use fuzz::targets;

#[test]
fn mutation_codec() {
    short(&targets::mutation_codec::TARGET);
}

#[test]
fn values() {
    short(&targets::values::TARGET);
}

#[test]
fn frames() {
    short(&targets::frames::TARGET);
}

#[test]
fn cql() {
    short(&targets::cql::TARGET);
}

#[test]
fn yaml() {
    short(&targets::yaml::TARGET);
}

#[test]
fn internode() {
    short(&targets::internode::TARGET);
}

#[test]
fn schema_definition() {
    short(&targets::schema_definition::TARGET);
}

#[test]
fn sstable_readers() {
    short(&targets::sstable::TARGET);
}

#[test]
fn commitlog_replay() {
    short(&targets::commitlog::TARGET);
}

#[test]
fn every_target_has_a_short_test() {
    let listed = [
        targets::commitlog::TARGET.name,
        targets::sstable::TARGET.name,
        targets::schema_definition::TARGET.name,
        targets::internode::TARGET.name,
        targets::yaml::TARGET.name,
        targets::cql::TARGET.name,
        targets::frames::TARGET.name,
        targets::mutation_codec::TARGET.name,
        targets::values::TARGET.name,
    ];
    for target in &targets::ALL {
        assert!(
            listed.contains(&target.name),
            "{} has no short test",
            target.name
        );
    }
}
