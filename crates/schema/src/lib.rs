//! Keyspaces, tables, columns; system_schema rows.
