//! Node configuration read from a cassandra.yaml-style file: Cassandra 5.0's key names, value
//! syntax (`10s`, `16MiB`, `64MiB/s`) and old names (`*_in_ms`, `*_in_mb`), Helenus defaults.
//!
//! [`load`] returns the [`Config`] and the Cassandra keys Helenus ignores; unknown keys and
//! invalid values are errors naming the key, as in Cassandra.
//!
//! Settings that promise security or durability Helenus does not have yet refuse to start
//! (`refused`) rather than be silently ignored. The snitch and, for
//! GossipingPropertyFileSnitch, the data center and rack come from `cassandra-rackdc.properties`
//! beside the yaml.

mod auto_repair;
mod config;
mod error;
mod guardrails;
mod jvm;
mod keys;
mod legacy;
mod listing;
mod load;
mod policies;
mod refused;
mod settings;
mod snitch;
mod spec;
mod values;
mod yaml;

pub use auto_repair::AutoRepair;
pub use config::{
    heap_equivalent, physical_memory, CommitLogSync, Config, InternodeCompression,
    MemtableAllocationType, Seed,
};
pub use error::ConfigError;
pub use guardrails::{ConsistencyLevels, Guardrails, Limit, Threshold, CONSISTENCY_LEVELS};
pub use jvm::apply_jvm_options;
pub use listing::Setting;
pub use load::{load, load_str, Loaded};
pub use policies::{CommitFailurePolicy, DiskFailurePolicy};
pub use snitch::{Location, Snitch, RACKDC_FILE};
pub use spec::{format_duration, DataRate, DataSize};
