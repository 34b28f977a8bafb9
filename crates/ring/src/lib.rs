//! Murmur3 partitioner, tokens, replication strategies.
