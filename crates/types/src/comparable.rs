//! Byte-comparable encodings of clustering keys and Cassandra's per-type comparators.
