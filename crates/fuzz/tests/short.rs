//! The short mode of every fuzz target, as the test suite runs it: a fixed seed and a few
//! dozen to a few thousand inputs each (`HELENUS_FUZZ_SEED`, `HELENUS_FUZZ_ITERATIONS`
//! vary them). The long mode is `tests/fuzz/run-long`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test crate

use fuzz::driver::short;
use fuzz::targets;

/// One test per target, so they run in parallel and fail by name.
macro_rules! short_tests {
    ($($test:ident => $module:ident,)*) => {
        $(
            #[test]
            fn $test() {
                short(&targets::$module::TARGET);
            }
        )*

        #[test]
        fn every_target_has_a_short_test() {
            let listed = [$(targets::$module::TARGET.name),*];
            for target in &targets::ALL {
                assert!(listed.contains(&target.name), "{} has no short test", target.name);
            }
        }
    };
}

short_tests! {
    cql_parser => cql,
    statement_analysis_and_execution => statements,
    protocol_frames => frames,
    internode_frames_and_handshakes => internode,
    mutation_codec => mutation_codec,
    schema_definitions => schema_definition,
    value_decoding => values,
    cassandra_yaml => yaml,
    sstable_readers => sstable,
    commitlog_replay => commitlog,
}
