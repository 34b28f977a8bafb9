//! Immutable sorted string tables: the on-disk format (see docs/sstable-format.md), writer and reader.
