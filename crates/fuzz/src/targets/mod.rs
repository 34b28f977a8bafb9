//! Every fuzz target, one module each, and the shared generators they draw on.

use crate::driver::Target;

pub mod cql;
pub mod frames;
pub mod internode;
mod model;
pub mod mutation_codec;
pub mod values;
pub mod yaml;

pub static ALL: [Target; 6] = [
    cql::TARGET,
    frames::TARGET,
    internode::TARGET,
    mutation_codec::TARGET,
    values::TARGET,
    yaml::TARGET,
];

pub fn by_name(name: &str) -> Option<&'static Target> {
    ALL.iter().find(|t| t.name == name)
}
