//! The Murmur3 token: a signed 64-bit position on the ring.
use std::fmt;

/// A position on the Murmur3 ring. Ordered as signed integers.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Token(pub i64);

impl Token {
    /// The minimum token: the ring's start, never the token of a (non-empty) key.
    pub const MIN: Token = Token(i64::MIN);
    /// The greatest token.
    pub const MAX: Token = Token(i64::MAX);

    /// The token of a serialized partition key (see [`crate::murmur3_token`]).
    pub fn of_key(key: &[u8]) -> Token {
        Token(crate::murmur3_token(key))
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_as_signed_and_displays_as_number() {
        assert!(Token::MIN < Token(-1));
        assert!(Token(-1) < Token(0));
        assert!(Token(0) < Token::MAX);
        assert_eq!(Token(-42).to_string(), "-42");
        assert_eq!(
            Token::of_key(&1i32.to_be_bytes()),
            Token(-4069959284402364209)
        );
    }
}
