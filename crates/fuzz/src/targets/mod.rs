//! Every fuzz target, one module each, and the shared generators they draw on.

use crate::driver::Target;

pub mod commitlog;
mod corrupt;
pub mod cql;
mod dataset;
pub mod frames;
pub mod internode;
mod model;
pub mod mutation_codec;
mod reseal;
pub mod schema_definition;
pub mod self_test;
pub mod sstable;
pub mod statements;
pub mod values;
pub mod yaml;

pub static ALL: [Target; 10] = [
    cql::TARGET,
    statements::TARGET,
    frames::TARGET,
    internode::TARGET,
    mutation_codec::TARGET,
    schema_definition::TARGET,
    values::TARGET,
    yaml::TARGET,
    sstable::TARGET,
    commitlog::TARGET,
];

/// Targets for testing the long mode itself ([`self_test`]).
pub static SELF_TESTS: [Target; 2] = [self_test::ABORTS, self_test::HANGS];

pub fn by_name(name: &str) -> Option<&'static Target> {
    ALL.iter().chain(&SELF_TESTS).find(|t| t.name == name)
}
