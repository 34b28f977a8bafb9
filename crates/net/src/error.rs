//! What a request or a send can fail with.
use std::fmt;

/// A replica-side failure, carried back to the requester.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteError {
    pub code: u16,
    pub message: String,
}

impl RemoteError {
    /// Cassandra's "server error" code, used for failures of the messaging layer itself
    /// (no handler for the verb, a response too large to send).
    pub const SERVER_ERROR: u16 = 0x0000;

    pub fn new(code: u16, message: impl Into<String>) -> RemoteError {
        RemoteError {
            code,
            message: message.into(),
        }
    }

    /// Wire form: the code (u16, big-endian) then the message in UTF-8.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(2 + self.message.len());
        out.extend_from_slice(&self.code.to_be_bytes());
        out.extend_from_slice(self.message.as_bytes());
        out
    }

    /// Reads the wire form; a body too short for the code is itself reported as a failure.
    pub(crate) fn decode(body: &[u8]) -> RemoteError {
        match body {
            [high, low, message @ ..] => RemoteError {
                code: u16::from_be_bytes([*high, *low]),
                message: String::from_utf8_lossy(message).into_owned(),
            },
            _ => RemoteError::new(Self::SERVER_ERROR, "malformed failure response"),
        }
    }
}

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "remote error 0x{:04x}: {}", self.code, self.message)
    }
}

impl std::error::Error for RemoteError {}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// No response within the request's timeout.
    #[error("timed out")]
    Timeout,
    /// Cannot connect, or the connection was lost before the answer.
    #[error("unreachable: {0}")]
    Unreachable(String),
    /// The handler answered an error.
    #[error("{0}")]
    Remote(RemoteError),
    /// The send queue for that peer and class is full.
    #[error("overloaded: the send queue is full")]
    Overloaded,
    /// The peer refused the handshake (cluster name, messaging version).
    #[error("rejected: {0}")]
    Rejected(String),
    /// The payload exceeds `max_message_bytes`.
    #[error("message of {size} bytes exceeds the maximum of {max}")]
    TooLarge { size: usize, max: usize },
    /// Messaging was shut down.
    #[error("messaging is shut down")]
    Shutdown,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_error_round_trips_and_short_bodies_are_failures() {
        let error = RemoteError::new(0x1001, "write timeout");
        assert_eq!(RemoteError::decode(&error.encode()), error);
        assert_eq!(
            RemoteError::decode(&[0x22, 0x00]),
            RemoteError::new(0x2200, "")
        );
        for short in [&[][..], &[7][..]] {
            let decoded = RemoteError::decode(short);
            assert_eq!(decoded.code, RemoteError::SERVER_ERROR);
            assert!(decoded.message.contains("malformed"), "{decoded}");
        }
    }
}
