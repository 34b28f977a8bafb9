//! Murmur3 partitioner, tokens, partition-key composition, token ownership and replication
//! strategies, following Apache Cassandra 5.0.
mod allocation;
mod error;
mod murmur3;
mod ownership;
mod partition_key;
mod strategy;
mod token;
mod token_metadata;

pub use allocation::allocate_tokens;
pub use error::RingError;
pub use murmur3::{hash3_x64_128, murmur3_token};
pub use ownership::{effective_ownership, primary_ownership, range_fraction};
pub use partition_key::{compose_partition_key, split_partition_key};
pub use smol_str::SmolStr;
pub use strategy::ReplicationStrategy;
pub use token::Token;
pub use token_metadata::{random_tokens, Endpoint, TokenMetadata};
