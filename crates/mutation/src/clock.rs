//! The node's clock for the timestamps it gives writes (the `clock` crate's, named here where
//! the model's users look for it).
pub use clock::{unique_micros, SharedClock, UniqueMicros};
