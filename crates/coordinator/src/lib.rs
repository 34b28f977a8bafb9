//! Storage proxy: executes statements against the ring and storage.
