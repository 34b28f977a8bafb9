//! Errors every layer can return to a client, one variant per native-protocol error code.
use bytes::Bytes;

/// Consistency levels with their native-protocol codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Consistency {
    Any = 0x0000,
    One = 0x0001,
    Two = 0x0002,
    Three = 0x0003,
    Quorum = 0x0004,
    All = 0x0005,
    LocalQuorum = 0x0006,
    EachQuorum = 0x0007,
    Serial = 0x0008,
    LocalSerial = 0x0009,
    LocalOne = 0x000A,
}

impl Consistency {
    pub fn from_code(code: u16) -> Option<Consistency> {
        use Consistency::*;
        Some(match code {
            0 => Any,
            1 => One,
            2 => Two,
            3 => Three,
            4 => Quorum,
            5 => All,
            6 => LocalQuorum,
            7 => EachQuorum,
            8 => Serial,
            9 => LocalSerial,
            10 => LocalOne,
            _ => return None,
        })
    }

    /// The name Cassandra uses in messages (`LOCAL_QUORUM`).
    pub fn name(self) -> &'static str {
        use Consistency::*;
        match self {
            Any => "ANY",
            One => "ONE",
            Two => "TWO",
            Three => "THREE",
            Quorum => "QUORUM",
            All => "ALL",
            LocalQuorum => "LOCAL_QUORUM",
            EachQuorum => "EACH_QUORUM",
            Serial => "SERIAL",
            LocalSerial => "LOCAL_SERIAL",
            LocalOne => "LOCAL_ONE",
        }
    }
}

/// An error as a client sees it. The variant fixes the protocol error code.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CqlError {
    #[error("{0}")]
    Server(String),
    #[error("{0}")]
    Protocol(String),
    #[error("{0}")]
    BadCredentials(String),
    #[error("{message}")]
    Unavailable {
        message: String,
        consistency: Consistency,
        required: i32,
        alive: i32,
    },
    #[error("{0}")]
    Overloaded(String),
    #[error("{0}")]
    IsBootstrapping(String),
    #[error("{0}")]
    Truncate(String),
    #[error("{message}")]
    WriteTimeout {
        message: String,
        consistency: Consistency,
        received: i32,
        block_for: i32,
        write_type: String,
    },
    #[error("{message}")]
    ReadTimeout {
        message: String,
        consistency: Consistency,
        received: i32,
        block_for: i32,
        data_present: bool,
    },
    #[error("{message}")]
    ReadFailure {
        message: String,
        consistency: Consistency,
        received: i32,
        block_for: i32,
        failures: i32,
        data_present: bool,
        /// Replicas that failed and why (v5 reason map; e.g. 0x0001 READ_TOO_MANY_TOMBSTONES);
        /// failures beyond these are sent as UNKNOWN from an unspecified address.
        reasons: Vec<(std::net::IpAddr, u16)>,
    },
    #[error("{message}")]
    FunctionFailure {
        message: String,
        keyspace: String,
        function: String,
        arg_types: Vec<String>,
    },
    #[error("{message}")]
    WriteFailure {
        message: String,
        consistency: Consistency,
        received: i32,
        block_for: i32,
        failures: i32,
        write_type: String,
        /// Replicas that failed and why (v5 reason map), as for ReadFailure.
        reasons: Vec<(std::net::IpAddr, u16)>,
    },
    #[error("{0}")]
    Syntax(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Config(String),
    /// `table` is empty when a keyspace already exists.
    #[error("{message}")]
    AlreadyExists {
        message: String,
        keyspace: String,
        table: String,
    },
    #[error("{message}")]
    Unprepared { message: String, id: Bytes },
    /// A compare-and-set that timed out without its proposal accepted anywhere: a WriteTimeout
    /// of write type CAS that carries, from protocol v5, how many of its rounds lost to
    /// contention (Cassandra's CasWriteTimeoutException).
    #[error("{message}")]
    CasWriteTimeout {
        message: String,
        consistency: Consistency,
        received: i32,
        block_for: i32,
        contentions: u16,
    },
    /// A compare-and-set whose proposal some replicas accepted, not a quorum: it may yet be
    /// completed by another operation (protocol v5's CAS_WRITE_UNKNOWN; before v5 it is sent
    /// as a WriteTimeout of write type CAS, as Cassandra does).
    #[error("{message}")]
    CasWriteUnknown {
        message: String,
        consistency: Consistency,
        received: i32,
        block_for: i32,
    },
}

impl CqlError {
    /// The native-protocol error code.
    pub fn code(&self) -> i32 {
        use CqlError::*;
        match self {
            Server(_) => 0x0000,
            Protocol(_) => 0x000A,
            BadCredentials(_) => 0x0100,
            Unavailable { .. } => 0x1000,
            Overloaded(_) => 0x1001,
            IsBootstrapping(_) => 0x1002,
            Truncate(_) => 0x1003,
            WriteTimeout { .. } | CasWriteTimeout { .. } => 0x1100,
            ReadTimeout { .. } => 0x1200,
            ReadFailure { .. } => 0x1300,
            FunctionFailure { .. } => 0x1400,
            WriteFailure { .. } => 0x1500,
            Syntax(_) => 0x2000,
            Unauthorized(_) => 0x2100,
            Invalid(_) => 0x2200,
            Config(_) => 0x2300,
            AlreadyExists { .. } => 0x2400,
            Unprepared { .. } => 0x2500,
            CasWriteUnknown { .. } => 0x1700,
        }
    }

    pub fn invalid(message: impl Into<String>) -> CqlError {
        CqlError::Invalid(message.into())
    }
}

pub type CqlResult<T> = Result<T, CqlError>;

/// A value or type that does not fit: bad serialized bytes, a literal that does not convert,
/// an unparsable type name. The message reads like Cassandra's.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TypeError(pub String);

/// The message of the Java exception Cassandra lets through when a timestamp is beyond
/// `Long.MAX_VALUE` milliseconds (`Instant.toEpochMilli`).
pub const LONG_OVERFLOW: &str = "java.lang.ArithmeticException: long overflow";

impl TypeError {
    /// The client's error for a value that does not convert: InvalidRequest with the message
    /// after `context`, except for a Java exception that Cassandra does not catch (a timestamp
    /// past `Long.MAX_VALUE` milliseconds), which is a server error.
    pub fn into_cql(self, context: &str) -> CqlError {
        if self.0 == LONG_OVERFLOW {
            CqlError::Server(self.0)
        } else {
            CqlError::Invalid(format!("{context}{}", self.0))
        }
    }
}
