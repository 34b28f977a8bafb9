//! CQL literal text (constants in statements) converted into typed values.
