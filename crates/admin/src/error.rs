//! [`ApiError`]: a failed request, answered with an HTTP status and `{"error": message}`.

use hyper::StatusCode;

/// A request the API cannot serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
        }
    }

    pub fn method_not_allowed(method: &hyper::Method, path: &str) -> ApiError {
        ApiError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            message: format!("{method} is not allowed on {path}"),
        }
    }

    pub fn unavailable(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: message.into(),
        }
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
        }
    }
}

impl From<storage::StorageError> for ApiError {
    fn from(e: storage::StorageError) -> ApiError {
        match e {
            storage::StorageError::Closed => ApiError::unavailable("the node is drained"),
            other => ApiError::internal(other.to_string()),
        }
    }
}

/// Result of an API handler.
pub type ApiResult<T> = Result<T, ApiError>;
