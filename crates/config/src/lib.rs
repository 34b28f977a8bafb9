//! Node configuration read from a cassandra.yaml-style file.
