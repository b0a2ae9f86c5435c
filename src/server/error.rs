//! Every refusal the server sends: `{"code", "message"}` with its status, never plain text.

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::domain::{ErrorCode, OqError};
use crate::wire::ErrorBody;

/// A refusal on the wire. Built from an [`OqError`] (the domain's status and code) or for
/// what only HTTP can get wrong (no token, a body that is not JSON…).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: ErrorCode,
    pub message: String,
    /// Seconds for `Retry-After`, when waiting helps (a rate limit).
    pub retry_after: Option<u64>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    /// `self`, telling the client to wait `seconds` before trying again.
    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized, message)
    }

    pub fn invalid_body(message: impl Into<String>) -> Self {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::InvalidBody,
            message,
        )
    }

    /// The one answer for an unknown project and a project the caller is not in, so the
    /// response never tells them apart.
    pub fn project_not_found(project_id: &str) -> Self {
        OqError::not_found("project", project_id).into()
    }

    pub fn people_only(what: &str) -> Self {
        OqError::forbidden(
            ErrorCode::RoleNotAllowed,
            format!("{what} is for the project's members (people), not agents"),
        )
        .into()
    }
}

impl From<OqError> for ApiError {
    fn from(e: OqError) -> Self {
        ApiError {
            status: StatusCode::from_u16(e.http_status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            code: e.code(),
            message: e.to_string(),
            retry_after: None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = self.code;
        let mut response = self.response();
        // For the audit line: the refusal's code, without reading the body back.
        response.extensions_mut().insert(code);
        response
    }
}

impl ApiError {
    fn response(self) -> Response {
        let body = Json(ErrorBody {
            code: self.code,
            message: self.message,
        });
        if self.status == StatusCode::UNAUTHORIZED {
            return (self.status, [(header::WWW_AUTHENTICATE, "Bearer")], body).into_response();
        }
        // Another process holds the store's write lock: worth retrying soon (issue 15).
        let retry = match self.code {
            ErrorCode::StoreBusy => Some(1),
            _ => self.retry_after,
        };
        if let Some(seconds) = retry {
            return (
                self.status,
                [(header::RETRY_AFTER, seconds.to_string())],
                body,
            )
                .into_response();
        }
        // The rest of a body that timed out is not read: the connection cannot go on.
        if self.code == ErrorCode::BodyTimeout {
            return (self.status, [(header::CONNECTION, "close")], body).into_response();
        }
        (self.status, body).into_response()
    }
}
