//! CQL native protocol v4/v5 server.
