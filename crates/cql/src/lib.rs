//! CQL lexer, parser, AST.
