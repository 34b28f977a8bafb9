//! Tests of the compaction strategies: one module per strategy, option parsing, properties.

mod lcs;
mod options;
mod properties;
mod stcs;
mod twcs;
mod ucs;
mod util;
